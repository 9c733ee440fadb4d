package report

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"fmt"
	"io"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/owenrumney/go-sarif/v3/pkg/report/v210/sarif"

	"github.com/rolloutlint/rolloutlint/analyzer"
	"github.com/rolloutlint/rolloutlint/model/graph"
	"github.com/rolloutlint/rolloutlint/rules"
	"github.com/rolloutlint/rolloutlint/rules/ruledoc"
)

// Where the tool and its rule pages live; helpUri links point at the pages
// that `make docs` generates, in the released version's tree (RuleDocsURI).
const (
	InformationURI = "https://github.com/rolloutlint/rolloutlint"
	sarifSchemaURI = "https://json.schemastore.org/sarif-2.1.0.json"
	srcRoot        = "%SRCROOT%"
	// clusterRoot is the base of live objects' locations (Kind/namespace/name):
	// they are not files of the repository, and a relative reference to a
	// base of their own keeps them from reading as one. GitHub rejects a
	// location without a physical artifact, and an absolute URI whose
	// scheme differs from the checkout's, so neither cluster: URIs nor
	// logical-only locations would do.
	clusterRoot = "CLUSTER"
)

// GitHub code scanning limits for one upload. Above MaxSARIFResults a run is
// rejected; a gzip-compressed file may be at most MaxSARIFGzipBytes. Results
// past MaxSARIFRelated related locations are not shown. They are variables so
// tests can exercise truncation without megabytes of input.
var (
	MaxSARIFResults   = 25000
	MaxSARIFGzipBytes = 10 << 20
	MaxSARIFRelated   = 1000
	maxDescription    = 1024 // shortDescription/fullDescription text
	maxTags           = 20
	maxMessageLinks   = 10 // related locations linked from one message
)

// SARIF writes a SARIF 2.1.0 log for GitHub code scanning: one run whose
// driver lists every enabled rule, and one result per finding. Suppressed
// findings are kept with a `suppressions` entry so that code scanning shows
// them as dismissed instead of reopening them.
func SARIF(w io.Writer, res *analyzer.Result, opts Options) error {
	b := newSARIFBuilder(res, opts)
	diags := res.Diagnostics
	kept, dropReason := limitResults(diags, MaxSARIFResults)
	for {
		run := b.run(kept)
		log := &sarif.Report{Schema: sarifSchemaURI, Version: "2.1.0", Runs: []*sarif.Run{run}}
		buf, err := encodeSARIF(log)
		if err != nil {
			return err
		}
		size, err := gzipSize(buf)
		if err != nil {
			return err
		}
		if size > MaxSARIFGzipBytes && len(kept) > 0 {
			// Shrink in proportion to the excess, with a margin, and retry.
			n := int(float64(len(kept)) * float64(MaxSARIFGzipBytes) / float64(size) * 0.9)
			kept, _ = limitResults(kept, n)
			dropReason = fmt.Sprintf("the log would exceed GitHub's limit of %d MB gzip-compressed", MaxSARIFGzipBytes>>20)
			continue
		}
		if dropped := len(diags) - len(kept); dropped > 0 {
			warn := opts.Warnings
			if warn == nil {
				warn = os.Stderr
			}
			fmt.Fprintf(warn, "rolloutlint: warning: SARIF output truncated: %d of %d findings dropped because %s; "+
				"kept the most severe ones (use --format json for the full list)\n", dropped, len(diags), dropReason)
		}
		_, err = w.Write(buf)
		return err
	}
}

// limitResults keeps at most n diagnostics, preferring active findings and
// higher severities (GitHub itself keeps the most severe when it truncates),
// and returns them in their original order.
func limitResults(ds []rules.Diagnostic, n int) ([]rules.Diagnostic, string) {
	if n < 0 {
		n = 0
	}
	if len(ds) <= n {
		return ds, ""
	}
	idx := make([]int, len(ds))
	for i := range idx {
		idx[i] = i
	}
	rank := func(d *rules.Diagnostic) int {
		if d.Suppressed != nil {
			return 0
		}
		return int(d.Severity)
	}
	sort.SliceStable(idx, func(a, b int) bool { return rank(&ds[idx[a]]) > rank(&ds[idx[b]]) })
	idx = idx[:n]
	sort.Ints(idx)
	out := make([]rules.Diagnostic, n)
	for i, j := range idx {
		out[i] = ds[j]
	}
	return out, fmt.Sprintf("GitHub accepts at most %d results per run", MaxSARIFResults)
}

// encodeSARIF writes the log indented, without the empty arrays and -1
// ("not set") indexes that go-sarif's constructors fill in: they carry no
// information, and they would count against GitHub's size limit. `results`
// and `rules` stay even when empty, as GitHub requires them.
func encodeSARIF(log *sarif.Report) ([]byte, error) {
	raw, err := json.Marshal(log)
	if err != nil {
		return nil, fmt.Errorf("encoding SARIF: %w", err)
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, fmt.Errorf("encoding SARIF: %w", err)
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	if err := enc.Encode(prune(v)); err != nil {
		return nil, fmt.Errorf("encoding SARIF: %w", err)
	}
	return buf.Bytes(), nil
}

var unsetIndexes = map[string]bool{"index": true, "byteOffset": true, "charOffset": true, "rank": true, "id": true}

func prune(v any) any {
	switch t := v.(type) {
	case map[string]any:
		for k, e := range t {
			if a, ok := e.([]any); ok && len(a) == 0 && k != "results" && k != "rules" {
				delete(t, k)
				continue
			}
			if n, ok := e.(json.Number); ok && n == "-1" && unsetIndexes[k] {
				delete(t, k)
				continue
			}
			t[k] = prune(e)
			if m, ok := t[k].(map[string]any); ok && len(m) == 0 && k == "properties" {
				delete(t, k)
			}
		}
	case []any:
		for i, e := range t {
			t[i] = prune(e)
		}
	}
	return v
}

func gzipSize(b []byte) (int, error) {
	var c countWriter
	z := gzip.NewWriter(&c)
	if _, err := z.Write(b); err != nil {
		return 0, fmt.Errorf("measuring SARIF size: %w", err)
	}
	if err := z.Close(); err != nil {
		return 0, fmt.Errorf("measuring SARIF size: %w", err)
	}
	return int(c), nil
}

type countWriter int

func (c *countWriter) Write(p []byte) (int, error) { *c += countWriter(len(p)); return len(p), nil }

// sarifBuilder turns findings into a run. It caches file hashes so each file
// is read and hashed once however many findings it has.
type sarifBuilder struct {
	opts    Options
	root    string // absolute; "" when unknown
	rules   []*rules.Rule
	index   map[string]int
	hashes  map[string][]string
	version string
}

func newSARIFBuilder(res *analyzer.Result, opts Options) *sarifBuilder {
	b := &sarifBuilder{opts: opts, index: map[string]int{}, hashes: map[string][]string{}, version: opts.Version}
	for file, data := range opts.Sources {
		b.hashes[file] = LineHashes(data)
	}
	if b.version == "" {
		b.version = "dev"
	}
	root := opts.SARIFRoot
	if root == "" {
		root = "."
	}
	if abs, err := opts.abs(root); err == nil {
		b.root = abs
	}
	// Every enabled rule, plus any rule that reported without being in the
	// enabled set (the driver's own RL0xxx findings, hooks' findings).
	known := map[string]*rules.Rule{}
	for _, r := range opts.AllRules {
		known[r.ID] = r
	}
	for _, r := range res.Rules {
		known[r.ID] = r
	}
	seen := map[string]bool{}
	add := func(r *rules.Rule) {
		if !seen[r.ID] {
			seen[r.ID] = true
			b.rules = append(b.rules, r)
		}
	}
	for _, r := range res.Rules {
		add(r)
	}
	for _, d := range res.Diagnostics {
		if r, ok := known[d.RuleID]; ok {
			add(r)
		} else {
			add(&rules.Rule{ID: d.RuleID, Name: d.Name, Summary: d.Name, Severity: d.Severity, Source: rules.SourceUser})
		}
	}
	sort.Slice(b.rules, func(i, j int) bool { return b.rules[i].ID < b.rules[j].ID })
	for i, r := range b.rules {
		b.index[r.ID] = i
	}
	return b
}

func (b *sarifBuilder) run(ds []rules.Diagnostic) *sarif.Run {
	run := sarif.NewRunWithInformationURI("rolloutlint", InformationURI)
	run.Tool.Driver.WithVersion(b.version).WithSemanticVersion(SemanticVersion(b.version))
	// Columns count characters (runes), as the positions do.
	run.WithColumnKind("unicodeCodePoints")
	if b.root != "" {
		run.WithOriginalUriBaseIds(map[string]sarif.ArtifactLocation{
			srcRoot: *sarif.NewArtifactLocation().WithURI(fileURI(b.root) + "/"),
		})
	}
	if b.opts.Cluster != nil || hasLive(ds) {
		if run.OriginalUriBaseIds == nil {
			run.OriginalUriBaseIds = map[string]sarif.ArtifactLocation{}
		}
		run.OriginalUriBaseIds[clusterRoot] = *sarif.NewArtifactLocation().WithDescription(sarif.NewTextMessage(clusterDescription(b.opts.Cluster)))
	}
	if c := b.opts.Cluster; c != nil {
		inv := sarif.NewInvocation().WithExecutionSuccessful(true)
		for _, p := range c.Problems {
			inv.AddToolExecutionNotification(sarif.NewNotification().WithLevel("warning").
				WithMessage(sarif.NewTextMessage("cluster read partially: " + p)))
		}
		run.AddInvocation(inv)
	}
	if b.opts.SARIFCategory != "" {
		id := b.opts.SARIFCategory
		if !strings.HasSuffix(id, "/") {
			// GitHub takes everything before the last slash as the category.
			id += "/"
		}
		run.WithAutomationDetails(sarif.NewRunAutomationDetails().WithID(id))
	}
	for _, r := range b.rules {
		b.addRule(run, r)
	}
	for i := range ds {
		run.AddResult(b.result(&ds[i]))
	}
	return run
}

func (b *sarifBuilder) addRule(run *sarif.Run, r *rules.Rule) {
	tags := append([]string{theme(r.ID)}, r.Tags...)
	tags = uniqueStrings(tags)
	if len(tags) > maxTags {
		tags = tags[:maxTags]
	}
	props := sarif.NewPropertyBag().WithTags(tags)
	props.Add("precision", precision(r))
	props.Add("problem.severity", problemSeverity(r.Severity))
	d := run.AddRule(r.ID).
		WithName(r.Name).
		WithShortDescription(sarif.NewMultiformatMessageString().WithText(clip(r.Summary, maxDescription))).
		WithFullDescription(sarif.NewMultiformatMessageString().WithText(clip(ruledoc.Description(r), maxDescription))).
		WithDefaultConfiguration(sarif.NewReportingConfiguration().WithLevel(level(r.Severity))).
		WithProperties(props)
	if r.Source != rules.SourceUser {
		d.WithHelpURI(RuleDocsURI(b.version) + r.ID + ".md")
	}
	if strings.TrimSpace(r.Doc.Why) == "" {
		d.WithHelp(sarif.NewMultiformatMessageString().WithText(r.Summary))
	} else {
		d.WithHelp(sarif.NewMultiformatMessageString().WithText(ruledoc.Text(r)).WithMarkdown(ruledoc.Help(r)))
	}
}

func (b *sarifBuilder) result(d *rules.Diagnostic) *sarif.Result {
	res := sarif.NewRuleResult(d.RuleID).
		WithRuleIndex(b.index[d.RuleID]).
		WithLevel(level(d.Severity)).
		WithMessage(sarif.NewTextMessage(linkedMessage(d.FullMessage(), d.Related)))
	loc := b.location(d.Pos.File, d.Pos.Line, d.Pos.Column, d.Pos.EndLine, d.Pos.EndColumn)
	loc.ID = 0
	res.AddLocation(loc)
	for i, r := range d.Related {
		if i == MaxSARIFRelated {
			break
		}
		rl := b.location(r.File, r.Line, r.Column, r.EndLine, r.EndColumn).
			WithMessage(sarif.NewTextMessage(r.Message))
		rl.ID = i + 1 // the message links to it as [text](id)
		res.AddRelatedLocation(rl)
	}
	if h := b.lineHash(d.Pos.File, d.Pos.Line); h != "" {
		res.WithPartialFingerprints(map[string]string{"primaryLocationLineHash": h})
	}
	if s := d.Suppressed; s != nil {
		sup := sarif.NewSuppression().WithKind(s.Kind).WithStatus("accepted")
		if s.Reason != "" {
			sup.WithJustification(s.Reason)
		}
		res.AddSuppression(sup)
	}
	return res
}

// location is a physical location in a file or a live object; a live
// object also gets a logical location naming it.
func (b *sarifBuilder) location(file string, line, col, endLine, endCol int) *sarif.Location {
	loc := sarif.NewLocationWithPhysicalLocation(sarif.NewPhysicalLocation().
		WithArtifactLocation(b.artifact(file)).
		WithRegion(region(line, col, endLine, endCol)))
	if graph.IsLive(file) {
		loc.WithLogicalLocations([]*sarif.LogicalLocation{sarif.NewLogicalLocation().
			WithFullyQualifiedName(file).WithName(path.Base(file)).WithKind("resource")})
	}
	return loc
}

// hasLive reports whether a finding is on, or points at, a live object.
func hasLive(ds []rules.Diagnostic) bool {
	for i := range ds {
		if graph.IsLive(ds[i].Pos.File) {
			return true
		}
		for _, r := range ds[i].Related {
			if graph.IsLive(r.File) {
				return true
			}
		}
	}
	return false
}

// clusterDescription describes the base of live objects' locations.
func clusterDescription(c *Cluster) string {
	s := "Objects read from the cluster"
	if c != nil && c.Server != "" {
		s += " at " + c.Server
		if c.Context != "" {
			s += " (context " + c.Context + ")"
		}
	}
	return s + ", named Kind/namespace/name; lines are those of kubectl get -o yaml. Not files of the repository."
}

// linkedMessage is a result's message with its related locations linked
// from the text, as GitHub code scanning requires to show them: "...
// (related: [the Rollout's route](1), [VirtualService b](2))". The link ids
// are the related locations' ids (1, 2, ...). Literal brackets and
// backslashes are escaped so that only these links read as links (SARIF
// 2.1.0 §3.11.6).
func linkedMessage(msg string, related []rules.Related) string {
	text := escapeMessage(msg)
	if len(related) == 0 {
		return text
	}
	n := min(len(related), maxMessageLinks, MaxSARIFRelated)
	links := make([]string, n)
	for i, r := range related[:n] {
		label := r.Message
		if strings.TrimSpace(label) == "" {
			label = fmt.Sprintf("%s:%d", r.File, r.Line)
		}
		links[i] = fmt.Sprintf("[%s](%d)", escapeMessage(label), i+1)
	}
	more := ""
	if shown := min(len(related), MaxSARIFRelated); shown > n {
		more = fmt.Sprintf(" and %d more", shown-n)
	}
	return text + " (related: " + strings.Join(links, ", ") + more + ")"
}

var messageEscaper = strings.NewReplacer(`\`, `\\`, "[", `\[`, "]", `\]`)

// escapeMessage escapes the characters of SARIF's embedded-link syntax.
func escapeMessage(s string) string { return messageEscaper.Replace(s) }

// SemanticVersion turns the tool version into the SemVer 2.0 string SARIF's
// driver.semanticVersion needs: "v1.2.3" is "1.2.3", a git-describe version
// keeps its pre-release part, and a local build ("dev", a bare commit) is
// "0.0.0-dev" with the version as build metadata.
func SemanticVersion(v string) string {
	s := strings.TrimPrefix(v, "v")
	if semverPattern().MatchString(s) {
		return s
	}
	if v != "" && v != "dev" && buildMetaPattern().MatchString(v) {
		return "0.0.0-dev+" + v
	}
	return "0.0.0-dev"
}

// RuleDocsURI is where a version's rule pages are: the release's tag for a
// released version (v1.2.3), main otherwise.
func RuleDocsURI(version string) string {
	ref := "main"
	if s := strings.TrimPrefix(version, "v"); releasePattern().MatchString(s) {
		ref = "v" + s
	}
	return InformationURI + "/blob/" + ref + "/docs/rules/"
}

var (
	// semverPattern is the SemVer 2.0 grammar.
	semverPattern = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`^(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)` +
			`(?:-((?:0|[1-9]\d*|\d*[a-zA-Z-][0-9a-zA-Z-]*)(?:\.(?:0|[1-9]\d*|\d*[a-zA-Z-][0-9a-zA-Z-]*))*))?` +
			`(?:\+([0-9a-zA-Z-]+(?:\.[0-9a-zA-Z-]+)*))?$`)
	})
	releasePattern   = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)$`) })
	buildMetaPattern = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[0-9a-zA-Z-]+(?:\.[0-9a-zA-Z-]+)*$`) })
)

// region builds a SARIF region, leaving out values that are not set (0):
// SARIF lines and columns start at 1, and an end before the start is dropped.
func region(line, col, endLine, endCol int) *sarif.Region {
	if line < 1 {
		line = 1 // a file-level finding: GitHub needs a start line to show it
	}
	r := sarif.NewRegion().WithStartLine(line)
	if col >= 1 {
		r.WithStartColumn(col)
	}
	if endLine >= line {
		r.WithEndLine(endLine)
		if endCol >= 1 && (endLine > line || endCol >= col) {
			r.WithEndColumn(endCol)
		}
	}
	return r
}

// artifact names a file relative to the SARIF root (uriBaseId %SRCROOT%), or by
// absolute file URI when it lies outside the root.
func (b *sarifBuilder) artifact(file string) *sarif.ArtifactLocation {
	if graph.IsLive(file) {
		name := strings.TrimPrefix(file, graph.LivePrefix)
		return sarif.NewArtifactLocation().WithURI(escapePath(name)).WithURIBaseID(clusterRoot).
			WithDescription(sarif.NewTextMessage("live object " + name + " in the cluster"))
	}
	if file == "" || strings.HasPrefix(file, "<") { // <stdin>, <bundle>
		return sarif.NewArtifactLocation().WithURI(url.PathEscape(file))
	}
	abs, err := b.opts.abs(file)
	if err != nil {
		return sarif.NewArtifactLocation().WithURI(relativeURI(filepath.ToSlash(file)))
	}
	if b.root != "" {
		if rel, err := filepath.Rel(b.root, abs); err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
			return sarif.NewArtifactLocation().WithURI(relativeURI(filepath.ToSlash(rel))).WithURIBaseID(srcRoot)
		}
	}
	return sarif.NewArtifactLocation().WithURI(fileURI(abs))
}

// lineHash returns GitHub's primaryLocationLineHash for a line of a file, or ""
// when the file cannot be read (standard input).
func (b *sarifBuilder) lineHash(file string, line int) string {
	hs, ok := b.hashes[file]
	if !ok {
		if data := readForHashes(b.opts.osPath(file)); data != nil {
			hs = LineHashes(data)
		}
		b.hashes[file] = hs
	}
	if line < 1 || line > len(hs) {
		return ""
	}
	return hs[line-1]
}

func fileURI(abs string) string {
	p := filepath.ToSlash(abs)
	if !strings.HasPrefix(p, "/") { // Windows drive letters
		p = "/" + p
	}
	return "file://" + escapePath(p)
}

func escapePath(p string) string { return (&url.URL{Path: p}).EscapedPath() }

// relativeURI escapes a relative path as a URI reference. A colon in its first
// segment would read as a scheme (RFC 3986 §4.2), so such a path gets "./".
func relativeURI(p string) string {
	e := escapePath(p)
	if first, _, _ := strings.Cut(e, "/"); strings.Contains(first, ":") {
		e = "./" + e
	}
	return e
}

// level maps a severity to a SARIF level.
func level(s rules.Severity) string {
	switch s {
	case rules.Error:
		return "error"
	case rules.Warning:
		return "warning"
	}
	return "note"
}

// problemSeverity is GitHub's severity for non-security rules.
func problemSeverity(s rules.Severity) string {
	switch s {
	case rules.Error:
		return "error"
	case rules.Warning:
		return "warning"
	}
	return "recommendation"
}

// precision tells code scanning how far to trust a rule: the tool's own
// findings (syntax, schema) are facts about the file; built-in rules check
// resolved references; user policies are unknown.
func precision(r *rules.Rule) string {
	switch {
	case r.Source == rules.SourceUser:
		return "medium"
	case strings.HasPrefix(r.ID, "RL0"):
		return "very-high"
	}
	return "high"
}

// theme names a rule's ID range (see DESIGN.md), used as a SARIF tag.
func theme(id string) string {
	if len(id) < 3 {
		return "other"
	}
	switch id[2] {
	case '0':
		return "tool"
	case '1':
		return "rollout"
	case '2':
		return "traffic"
	case '3':
		return "istio"
	case '4':
		return "analysis"
	case '5':
		return "gitops"
	case '6':
		return "plan"
	}
	return "other"
}

// clip shortens s to at most n characters, ending with an ellipsis.
func clip(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	rs := []rune(s)
	return string(rs[:n-1]) + "…"
}

func uniqueStrings(ss []string) []string {
	seen := map[string]bool{}
	out := ss[:0]
	for _, s := range ss {
		if s != "" && !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	return out
}

// maxHashedFile is the largest file whose lines are hashed: the loader's
// default file-size limit (a larger file is RL0005 and not read).
const maxHashedFile = 32 << 20

// readForHashes reads a file to hash its lines, or returns nil: only a
// regular file no larger than maxHashedFile is read. A finding can be on a
// named pipe, a device or a socket (RL0011, not linted), which reading would
// block on or never finish (a SARIF report of a directory holding a FIFO
// used to hang), or on a file over the size limit.
func readForHashes(path string) []byte {
	// Stat before opening: opening a named pipe waits for a writer.
	if st, err := os.Stat(path); err != nil || !st.Mode().IsRegular() || st.Size() > maxHashedFile {
		return nil
	}
	f, err := os.Open(path)
	if err != nil {
		return nil
	}
	defer func() { _ = f.Close() }()
	if st, err := f.Stat(); err != nil || !st.Mode().IsRegular() || st.Size() > maxHashedFile {
		return nil
	}
	data, err := io.ReadAll(io.LimitReader(f, maxHashedFile+1))
	if err != nil || len(data) > maxHashedFile {
		return nil
	}
	return data
}
