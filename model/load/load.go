// Package load reads manifests (files, directories, stdin, in-memory inputs)
// into graph resources. Every document keeps its yaml node so any field maps to
// a line and column; anything wrong with the input becomes a graph.Problem with
// a position, never a panic.
package load

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/rolloutlint/rolloutlint/internal/memlimit"
	"github.com/rolloutlint/rolloutlint/internal/parallel"
	"github.com/rolloutlint/rolloutlint/model/graph"
)

// Tool rule IDs the loader reports. They are defined as rules in rules/tool.
const (
	RuleSyntax      = "RL0001" // not valid YAML/JSON
	RuleNoKind      = "RL0002" // document without apiVersion/kind/name, or not an object
	RuleSchema      = "RL0003" // unknown field or wrong type in a known kind
	RuleNotManifest = "RL0004" // a template (Helm/Go) rather than a manifest
	RuleLimit       = "RL0005" // input over a configured limit
	RuleAPIVersion  = "RL0006" // known kind at an apiVersion rolloutlint does not model
	RuleSkipped     = "RL0011" // a file found in a directory that was not read
)

// Limits bound the work one input can cause. Zero values take the defaults.
type Limits struct {
	// MaxFileBytes is the largest file read; larger files are a finding.
	MaxFileBytes int64
	// MaxDocuments is the most documents read from one file.
	MaxDocuments int
	// MaxAliasNodes bounds the nodes YAML aliases add to one file when
	// expanded, all its documents together, which defuses alias bombs. What a
	// document holds as written is bounded by the file size.
	MaxAliasNodes int
}

// Default limits, documented in docs/limits.md.
const (
	DefaultMaxFileBytes  = 32 << 20
	DefaultMaxDocuments  = 20000
	DefaultMaxAliasNodes = 1_000_000
)

func (l Limits) withDefaults() Limits {
	if l.MaxFileBytes <= 0 {
		l.MaxFileBytes = DefaultMaxFileBytes
	}
	if l.MaxDocuments <= 0 {
		l.MaxDocuments = DefaultMaxDocuments
	}
	if l.MaxAliasNodes <= 0 {
		l.MaxAliasNodes = DefaultMaxAliasNodes
	}
	return l
}

// Options control loading.
type Options struct {
	// Namespace is given to namespaced objects that set none ("default" if empty).
	Namespace string
	Limits    Limits
	// Stdin is read for the path "-".
	Stdin io.Reader
	// Exclude reports whether a file found while walking a directory is skipped.
	// It is given the path as findings name it (relative to Dir when relative).
	Exclude func(path string) bool
	// FollowSymlinks reads symlinks found while walking a directory that
	// point outside it (files and directories); by default they are skipped
	// with a finding.
	FollowSymlinks bool
	// StdinName is the file name standard input is reported as (--stdin-filename);
	// empty means StdinName ("<stdin>").
	StdinName string
	// FullDecode sends every document through the full yaml.v3 path, never
	// the fast decoder. The two load the same (a differential fuzz test and
	// the repository's manifests check it); this is the switch for the day a
	// document shows a difference (ROLLOUTLINT_FAST_DECODE=off).
	FullDecode bool
	// Dir is the directory relative paths are read from; "" is the process's
	// working directory. Paths in inputs and findings stay as given, so a
	// caller with its own working directory (a test, a server) reports the
	// same names as a process started there.
	Dir string
}

// osPath is the name the file system knows path by.
func (o Options) osPath(path string) string {
	if o.Dir == "" || filepath.IsAbs(path) {
		return path
	}
	return filepath.Join(o.Dir, path)
}

// Input is one in-memory source. The loaded graph keeps referring to Data
// (positions, and the strings of decoded objects point into it), so it must
// not be modified after it is handed to the loader.
type Input struct {
	Path string
	Data []byte
	// Skipped says why a file found in a directory was not read (a named
	// pipe, a symlink out of the directory); the loader reports it as RL0011,
	// with SkippedDetail (what follows, how to read it anyway) as its detail.
	Skipped       string
	SkippedDetail string
	// Role says how the input is read; the zero value is a manifest.
	Role Role
}

// Role is what an input is to the loader.
type Role int

// Roles of inputs.
const (
	// RoleManifest is a file of manifests the user wrote: parsed, its
	// findings and suppression comments are its own.
	RoleManifest Role = iota
	// RoleRendered is a renderer's output (Kustomize, Helm): parsed, but
	// not a user file (graph.File.Rendered); its comments suppress nothing.
	RoleRendered
	// RoleSource is a user file a renderer read (a kustomization, a patch,
	// a template, a values file): not parsed, recorded for its suppression
	// comments and its text, since findings are mapped into it.
	RoleSource
)

// StdinName is the file name findings use for standard input.
const StdinName = "<stdin>"

// Expand turns command-line paths into inputs: files are read, directories
// walked recursively for *.yaml, *.yml and *.json (hidden directories and
// files skipped; special files and symlinks out of the directory become
// inputs with Skipped set, see walk.go), "-" reads stdin. A file named on
// the command line is read whatever its type, a named pipe without waiting
// for a writer. Missing paths are an error: that is a usage mistake, not a
// finding.
func Expand(paths []string, opts Options) ([]Input, error) {
	limits := opts.Limits.withDefaults()
	var inputs []Input
	seen := map[string]bool{}
	add := func(path string) error {
		if seen[path] {
			return nil
		}
		seen[path] = true
		in, err := readFile(path, opts.osPath(path), limits)
		if err != nil {
			return err
		}
		inputs = append(inputs, in)
		return nil
	}
	for _, p := range paths {
		if p == "-" {
			if opts.Stdin == nil {
				return nil, fmt.Errorf("reading stdin: no input stream")
			}
			data, err := readAll(io.LimitReader(opts.Stdin, limits.MaxFileBytes+1), 512)
			if err != nil {
				return nil, fmt.Errorf("reading stdin: %w", err)
			}
			name := StdinName
			if opts.StdinName != "" {
				name = opts.StdinName
			}
			inputs = append(inputs, Input{Path: name, Data: data})
			continue
		}
		st, err := os.Stat(opts.osPath(p))
		if err != nil {
			return nil, fmt.Errorf("reading %s: %w", p, unwrapPathError(err))
		}
		if !st.IsDir() {
			if err := add(p); err != nil {
				return nil, err
			}
			continue
		}
		found, err := walkDir(p, opts)
		if err != nil {
			return nil, err
		}
		for _, f := range found {
			if f.skipped != "" {
				if !seen[f.path] {
					seen[f.path] = true
					inputs = append(inputs, Input{Path: f.path, Skipped: f.skipped, SkippedDetail: f.detail})
				}
				continue
			}
			if err := add(f.path); err != nil {
				return nil, err
			}
		}
	}
	return inputs, nil
}

// IsManifestName reports whether a file name has a manifest extension.
func IsManifestName(path string) bool {
	switch strings.ToLower(filepath.Ext(path)) {
	case ".yaml", ".yml", ".json":
		return true
	}
	return false
}

// renamed gives a path found by walking root (as, joined to Options.Dir) the
// name that walking as itself would have given it: as joined with the rest.
func renamed(path, root, as string) string {
	switch {
	case root == as:
		return path
	case path == root:
		return as
	}
	return filepath.Join(as, strings.TrimPrefix(path[len(root):], string(filepath.Separator)))
}

// readFile reads the file the file system names osPath; the input is named path.
func readFile(path, osPath string, limits Limits) (Input, error) {
	f, err := openNoWait(osPath)
	if err != nil {
		return Input{}, fmt.Errorf("reading %s: %w", path, unwrapPathError(err))
	}
	defer func() { _ = f.Close() }() // read-only: a close error cannot lose data
	// Read one byte past the limit so an oversized file is detected without
	// reading it all.
	data, err := readAll(io.LimitReader(f, limits.MaxFileBytes+1), sizeHint(f, limits.MaxFileBytes+1))
	if err != nil {
		return Input{}, fmt.Errorf("reading %s: %w", path, unwrapPathError(err))
	}
	return Input{Path: path, Data: data}, nil
}

// sizeHint is the size of a regular file, capped, plus one byte for the read
// that sees its end; 512 for anything else (a pipe, a device).
func sizeHint(f *os.File, maxBytes int64) int {
	if fi, err := f.Stat(); err == nil && fi.Mode().IsRegular() {
		return int(min(fi.Size(), maxBytes)) + 1
	}
	return 512
}

// readAll reads r to its end into a buffer of capacity hint, growing it only
// if r holds more. The file bytes stay in memory for the whole lint (strings
// and positions point into them), so a file is read into a buffer of its
// size, without io.ReadAll's doublings, and a stream of unknown size is
// copied into an exact buffer when growing left much unused.
func readAll(r io.Reader, hint int) ([]byte, error) {
	data := make([]byte, 0, hint)
	for {
		if len(data) == cap(data) {
			data = append(data, 0)[:len(data)]
		}
		n, err := r.Read(data[len(data):cap(data)])
		data = data[:len(data)+n]
		if err == io.EOF {
			if cap(data)-len(data) > len(data)/8+512 {
				data = bytes.Clone(data)
			}
			return data, nil
		}
		if err != nil {
			return data, err
		}
	}
}

// unwrapPathError drops the operation and path that fs errors repeat, since
// callers already say which path they were reading.
func unwrapPathError(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// Paths expands paths and loads them into a graph.
func Paths(paths []string, opts Options) (*graph.Graph, error) {
	inputs, err := Expand(paths, opts)
	if err != nil {
		return nil, err
	}
	return Inputs(inputs, opts), nil
}

// Inputs loads in-memory inputs into a graph. It never fails: problems with
// the input are recorded in the graph.
func Inputs(inputs []Input, opts Options) *graph.Graph {
	var b bundle
	b.add(inputs, opts)
	return b.graph(opts)
}

// bundle is what loading inputs gives before the graph links it.
type bundle struct {
	resources []*graph.Resource
	files     []*graph.File
	problems  []graph.Problem
	fast      int
}

func (o Options) defaultNamespace() string {
	if o.Namespace == "" {
		return "default"
	}
	return o.Namespace
}

func (b *bundle) graph(opts Options) *graph.Graph {
	g := graph.New(opts.defaultNamespace(), b.resources, b.files, b.problems)
	g.FastDocuments = b.fast
	return g
}

// add loads inputs and appends what they hold to b.
func (b *bundle) add(inputs []Input, opts Options) {
	ns := opts.defaultNamespace()
	limits := opts.Limits.withDefaults()
	// Each file is read and cut into documents first (cheap); the documents,
	// independent until the graph links them, are then decoded on parallel
	// workers, so one large file (helm template output, a generated bundle)
	// uses every core too. Results are joined in input order, which keeps the
	// output deterministic whatever the scheduling.
	files := make([]*fileWork, len(inputs))
	var docs []docWork
	for i, in := range inputs {
		fw := &fileWork{loader: loader{ns: ns, limits: limits, full: opts.FullDecode}}
		fw.chunks = fw.prepare(&in)
		if in.Role == RoleSource {
			fw.chunks = nil
		}
		fw.in = in
		files[i] = fw
		for j := range fw.chunks {
			docs = append(docs, docWork{file: i, doc: j})
		}
	}
	var fileBytes int64
	for _, fw := range files {
		fileBytes += int64(len(fw.in.Data))
	}
	memlimit.Loading(fileBytes) // the command's loading limit follows the bundle's size
	results := make([]docResult, len(docs))
	parallel.For(len(docs), 1, func(k int) {
		d := docs[k]
		l := &loader{ns: ns, limits: limits, full: opts.FullDecode}
		stop, pending := l.document(files[d.file].in, d.doc, files[d.file].chunks[d.doc])
		results[k] = docResult{resources: l.resources, problems: l.problems, stop: stop, pending: pending, fast: l.fastDocs, k8sLike: l.k8sLike}
	})
	expandAliases(results, docs, inputs, limits, ns, opts.FullDecode)
	k := 0
	for _, fw := range files {
		b.files = append(b.files, fw.files...)
		b.problems = append(b.problems, fw.problems...)
		stopped, k8sLike := false, false
		var fileProblems []graph.Problem
		for range fw.chunks {
			r := results[k]
			k++
			if stopped {
				continue // the file is a template: documents after the first sign of it are not linted
			}
			b.resources = append(b.resources, r.resources...)
			fileProblems = append(fileProblems, r.problems...)
			b.fast += r.fast
			stopped = r.stop
			k8sLike = k8sLike || r.k8sLike
		}
		b.problems = append(b.problems, notObjects(fileProblems, k8sLike)...)
	}
}

// Loaded is one input loaded on its own (Load), ready to be joined into
// bundles (Join) without being read and decoded again. Every input is loaded
// independently of the others until the graph links them, so joining gives
// the graph Inputs would.
type Loaded struct {
	in     Input
	ns     string // the default namespace it was loaded with
	limits Limits
	full   bool
	// nsDefault: a resource took the default namespace, so the result holds
	// for that namespace only.
	nsDefault bool
	b         bundle
}

// Load loads one input for later Joins.
func Load(in Input, opts Options) *Loaded {
	l := &Loaded{in: in, ns: opts.defaultNamespace(), limits: opts.Limits.withDefaults(), full: opts.FullDecode}
	l.b.add([]Input{in}, opts)
	for _, r := range l.b.resources {
		if r.Namespace != "" && !r.NamespaceExplicit {
			l.nsDefault = true
		}
	}
	return l
}

// Fits reports whether joining l with opts gives what loading its input
// with opts would (else Join loads the input again).
func (l *Loaded) Fits(opts Options) bool {
	return l.full == opts.FullDecode && l.limits == opts.Limits.withDefaults() && (!l.nsDefault || l.ns == opts.defaultNamespace())
}

// Join loads inputs and appends the loaded ones after them, in order: the
// graph of Inputs(inputs followed by each loaded input), sharing the loaded
// objects (graph.Resource.Copy) instead of decoding them again.
func Join(inputs []Input, loaded []*Loaded, opts Options) *graph.Graph {
	var b bundle
	b.add(inputs, opts)
	for _, l := range loaded {
		if !l.Fits(opts) {
			b.add([]Input{l.in}, opts)
			continue
		}
		copies := make(map[*graph.Resource]*graph.Resource, len(l.b.resources))
		for _, r := range l.b.resources {
			c := r.Copy()
			copies[r] = c
			b.resources = append(b.resources, c)
		}
		b.files = append(b.files, l.b.files...)
		for _, p := range l.b.problems {
			if p.Resource != nil {
				p.Resource = copies[p.Resource]
			}
			b.problems = append(b.problems, p)
		}
		b.fast += l.b.fast
	}
	return b.graph(opts)
}

// notObjects drops the "not a Kubernetes object" findings of a file none of
// whose documents looks like one (no apiVersion, kind or metadata anywhere):
// a CI workflow, a docker-compose or OpenAPI file, a tool's config is not a
// broken manifest. A file with one object-like document keeps them all.
func notObjects(problems []graph.Problem, k8sLike bool) []graph.Problem {
	if k8sLike {
		return problems
	}
	out := problems[:0]
	for _, p := range problems {
		if p.RuleID != RuleNoKind {
			out = append(out, p)
		}
	}
	return out
}

// fileWork is one input file cut into documents, with the file-level
// problems (size and document limits) found while cutting it.
type fileWork struct {
	loader
	in     Input // with the text prepare decoded
	chunks []chunk
}

// docWork names one document: the index of its file and its index there.
type docWork struct{ file, doc int }

// docResult is what decoding one document produced.
type docResult struct {
	resources []*graph.Resource
	problems  []graph.Problem
	stop      bool        // the file is a template; skip its later documents
	k8sLike   bool        // the document has apiVersion, kind or metadata
	fast      int         // documents the fast decoder loaded (0 or 1)
	pending   *pendingDoc // parsed, with aliases to budget before it is converted
}

// expandAliases converts the documents whose YAML aliases add nodes, as far
// as each file's alias budget goes. The budget is spent in document order
// after every document is parsed, so which documents are refused does not
// depend on how the parallel workers were scheduled; the first refused
// document of a file gets one finding, which counts the later ones. Without
// a budget per file, a thousand small alias bombs, each under a per-document
// limit, ran for a minute and more.
func expandAliases(results []docResult, docs []docWork, inputs []Input, limits Limits, ns string, full bool) {
	var granted []int
	for k := 0; k < len(results); {
		file := docs[k].file
		used, refused, first := 0, 0, -1
		var at *yaml.Node
		for ; k < len(results) && docs[k].file == file; k++ {
			p := results[k].pending
			if p == nil {
				continue
			}
			if first < 0 && satAdd(used, p.adds()) <= limits.MaxAliasNodes {
				used = satAdd(used, p.adds())
				granted = append(granted, k)
				continue
			}
			if first < 0 {
				first = k
				at = crossing(p.uses, limits.MaxAliasNodes-used)
			}
			refused++
			results[k].pending = nil
		}
		if first < 0 {
			continue
		}
		var msg, detail string
		if used == 0 {
			msg = fmt.Sprintf("document expands to more than %d nodes through YAML aliases", limits.MaxAliasNodes)
			detail = "It was not linted (an alias bomb?)"
		} else {
			msg = fmt.Sprintf("YAML aliases in this file expand to more than %d nodes, the limit per file", limits.MaxAliasNodes)
			detail = fmt.Sprintf("The documents before this one expand to %d (alias bombs?); this document was not linted", used)
		}
		if refused > 1 {
			detail += fmt.Sprintf(", nor the %d later documents of the file that use aliases", refused-1)
		}
		r := &results[first]
		r.problems = append(r.problems, graph.Problem{RuleID: RuleLimit, Pos: graph.NodePos(inputs[docs[first].file].Path, at), Message: msg, Detail: detail + "."})
	}
	parallel.For(len(granted), 1, func(i int) {
		r := &results[granted[i]]
		l := &loader{ns: ns, limits: limits, full: full, resources: r.resources, problems: r.problems}
		l.convert(r.pending, satAdd(r.pending.own, r.pending.adds()))
		r.resources, r.problems, r.pending = l.resources, l.problems, nil
	})
}

// crossing is the alias at which a document's expansion passes left nodes.
func crossing(uses []aliasUse, left int) *yaml.Node {
	sum := 0
	for _, u := range uses {
		if sum = satAdd(sum, u.adds); sum > left {
			return u.node
		}
	}
	return uses[len(uses)-1].node
}

type loader struct {
	ns        string
	limits    Limits
	k8sLike   bool // a document loaded so far looks like a Kubernetes object
	full      bool // Options.FullDecode
	fastDocs  int  // documents loaded by the fast decoder
	resources []*graph.Resource
	files     []*graph.File
	problems  []graph.Problem
}

func (l *loader) problem(rule string, pos graph.Position, res *graph.Resource, path, format string, args ...any) {
	l.problems = append(l.problems, graph.Problem{RuleID: rule, Pos: pos, Resource: res, Path: path, Message: fmt.Sprintf(format, args...)})
}

// explained records a problem with a detail (see graph.Problem).
func (l *loader) explained(rule string, pos graph.Position, res *graph.Resource, path, detail, format string, args ...any) {
	l.problems = append(l.problems, graph.Problem{RuleID: rule, Pos: pos, Resource: res, Path: path, Message: fmt.Sprintf(format, args...), Detail: detail})
}

// prepare records the file, checks the file-level limits, decodes its text
// (in.Data becomes UTF-8 with LF or CRLF line ends) and cuts it into
// documents, which are decoded afterwards (see Inputs).
func (l *loader) prepare(in *Input) []chunk {
	f := &graph.File{Path: in.Path, Lines: 1, Rendered: in.Role == RoleRendered}
	l.files = append(l.files, f)
	if in.Skipped != "" {
		l.explained(RuleSkipped, lineStart(in.Path, 1), nil, "", in.SkippedDetail, "not linted: %s", in.Skipped)
		return nil
	}
	if int64(len(in.Data)) > l.limits.MaxFileBytes {
		l.explained(RuleLimit, lineStart(in.Path, 1), nil, "", "It was not read; raise the limit with --max-file-size.",
			"file is larger than the limit of %s", byteCount(l.limits.MaxFileBytes))
		in.Data = nil
		return nil
	}
	data, badLine, msg := decodeText(in.Data)
	if msg != "" {
		l.problem(RuleSyntax, lineStart(in.Path, badLine), nil, "", "%s", msg)
		in.Data = nil
		return nil
	}
	in.Data = data
	f.Lines = bytes.Count(data, []byte("\n")) + 1
	f.Source = data
	f.MentionsAnnotations = bytes.Contains(data, []byte(graph.AnnotationPrefix))
	if in.Role != RoleRendered {
		f.Directives = l.directives(in.Path, data)
	}
	chunks := splitDocuments(data)
	if len(chunks) > l.limits.MaxDocuments {
		l.explained(RuleLimit, lineStart(in.Path, chunks[l.limits.MaxDocuments].line), nil, "", "The rest were not read; raise the limit with --max-documents.",
			"file has %d documents, more than the limit of %d", len(chunks), l.limits.MaxDocuments)
		chunks = chunks[:l.limits.MaxDocuments]
	}
	return chunks
}

// byteCount prints a byte limit as the flag takes it, in bytes, with the
// binary unit beside it when it is a whole number of KiB or MiB.
func byteCount(n int64) string {
	switch {
	case n >= 1<<20 && n%(1<<20) == 0:
		return fmt.Sprintf("%d bytes (%d MiB)", n, n>>20)
	case n >= 1<<10 && n%(1<<10) == 0:
		return fmt.Sprintf("%d bytes (%d KiB)", n, n>>10)
	}
	return fmt.Sprintf("%d bytes", n)
}
