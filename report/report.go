// Package report writes lint results: text for people, JSON for tools, and
// (in their own files) SARIF and GitHub workflow annotations.
package report

import (
	"encoding/json"
	"fmt"
	"io"
	"path/filepath"
	"sort"
	"strings"
	"unicode/utf8"

	"github.com/rolloutlint/rolloutlint/analyzer"
	"github.com/rolloutlint/rolloutlint/rules"
)

// Options shape the output.
type Options struct {
	// Color adds ANSI colours (only when writing to a terminal and NO_COLOR is unset).
	Color bool
	// IncludeSuppressed lists suppressed findings too (text and JSON).
	IncludeSuppressed bool
	// Verbose shows each finding's detail under it in text (JSON, SARIF and
	// GitHub annotations always carry it).
	Verbose bool
	// Version is the tool version, for formats that record it.
	Version string
	// SARIF settings.
	SARIFRoot     string
	SARIFCategory string
	// Warnings receives notes about the output itself (for example SARIF
	// results dropped to stay within GitHub's limits); nil means stderr.
	Warnings io.Writer
	// AllRules is every registered rule, for formats that describe rules.
	AllRules []*rules.Rule
	// Sources holds the text of inputs that are not files on disk (standard
	// input under --stdin-filename), by reported file name, for SARIF's
	// line fingerprints.
	Sources map[string][]byte
	// Dir is the directory that relative file names in findings and a
	// relative SARIFRoot are relative to; "" is the process's working directory.
	Dir string
	// Cluster, when set, describes the live objects the local files were
	// linted with (lint --cluster).
	Cluster *Cluster
}

// Cluster describes what a lint read from a running cluster. Its objects
// are named graph.LiveFile (cluster:Kind/namespace/name) in findings.
type Cluster struct {
	// Server is the API server's URL; Context the kubeconfig context, if any.
	Server  string `json:"server"`
	Context string `json:"context,omitempty"`
	// Objects are the live objects linted with the local files; Replaced
	// those a local object of the same identity replaced.
	Objects  int `json:"objects"`
	Replaced int `json:"replaced"`
	// Partial is set when some objects asked for could not be read;
	// Problems say which, one line each.
	Partial  bool     `json:"partial"`
	Problems []string `json:"problems,omitempty"`
}

// describe says in a sentence what the cluster part of the lint was.
func (c *Cluster) describe() string {
	s := fmt.Sprintf("linted with %s from the cluster at %s", plural(c.Objects, "live object"), c.Server)
	if c.Context != "" {
		s += " (context " + c.Context + ")"
	}
	if c.Replaced > 0 {
		s += fmt.Sprintf(", %d replaced by local files", c.Replaced)
	}
	if c.Partial {
		s += fmt.Sprintf("; PARTIAL: %s not read completely, findings that need the missing objects may be missing", plural(len(c.Problems), "list"))
	}
	return s
}

// abs returns the absolute name of a file named relative to o.Dir.
func (o Options) abs(p string) (string, error) {
	return filepath.Abs(o.osPath(p))
}

// osPath is the name the file system knows a path relative to o.Dir by.
func (o Options) osPath(p string) string {
	if o.Dir == "" || filepath.IsAbs(p) {
		return p
	}
	return filepath.Join(o.Dir, p)
}

// Writer writes a result in one format.
type Writer func(w io.Writer, res *analyzer.Result, opts Options) error

// writers is every output format, by its --format name. A new format is one
// line here and its writer in its own file.
var writers = map[string]Writer{
	"text":   Text,
	"json":   JSON,
	"sarif":  SARIF,
	"github": GitHub,
}

// Formats returns the known format names, sorted.
func Formats() []string {
	out := make([]string, 0, len(writers))
	for k := range writers {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// Lookup returns the writer for a format name.
func Lookup(name string) (Writer, error) {
	w, ok := writers[name]
	if !ok {
		return nil, fmt.Errorf("unknown format %q (want one of %s)", name, strings.Join(Formats(), ", "))
	}
	return w, nil
}

func shown(res *analyzer.Result, opts Options) []rules.Diagnostic {
	if opts.IncludeSuppressed {
		return res.Diagnostics
	}
	return res.Active()
}

// JSON writes {"diagnostics": [...], "summary": {...}}.
func JSON(w io.Writer, res *analyzer.Result, opts Options) error {
	ds := shown(res, opts)
	if ds == nil {
		ds = []rules.Diagnostic{}
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(struct {
		Diagnostics []rules.Diagnostic `json:"diagnostics"`
		Summary     analyzer.Summary   `json:"summary"`
		Cluster     *Cluster           `json:"cluster,omitempty"`
	}{ds, res.Summary, opts.Cluster})
}

const (
	red    = "\x1b[31m"
	yellow = "\x1b[33m"
	blue   = "\x1b[34m"
	bold   = "\x1b[1m"
	dim    = "\x1b[2m"
	reset  = "\x1b[0m"
)

// Text writes `file:line:col: severity RLxxxx message` lines, with Verbose
// the detail wrapped below, related locations indented below, and a one-line
// summary.
func Text(w io.Writer, res *analyzer.Result, opts Options) error {
	paint := func(code, s string) string {
		if !opts.Color {
			return s
		}
		return code + s + reset
	}
	var b strings.Builder
	for _, d := range shown(res, opts) {
		sev := d.Severity.String()
		switch d.Severity {
		case rules.Error:
			sev = paint(red+bold, sev)
		case rules.Warning:
			sev = paint(yellow+bold, sev)
		default:
			sev = paint(blue, sev)
		}
		suffix := ""
		if d.Suppressed != nil {
			suffix = paint(dim, " (suppressed)")
		}
		fmt.Fprintf(&b, "%s: %s %s %s%s\n", paint(bold, printable(d.Pos.String())), sev, d.RuleID, printable(d.Message), suffix)
		if opts.Verbose && d.Detail != "" {
			for _, line := range wrap(d.Detail, textWidth-len(detailIndent)) {
				b.WriteString(detailIndent + line + "\n")
			}
		}
		for _, r := range d.Related {
			fmt.Fprintf(&b, "    %s:%d:%d: %s\n", printable(r.File), r.Line, r.Column, paint(dim, printable(r.Message)))
		}
	}
	s := res.Summary
	fmt.Fprintf(&b, "%s, %s, %s", plural(s.Errors, "error"), plural(s.Warnings, "warning"), plural(s.Infos, "info"))
	if s.Suppressed > 0 {
		fmt.Fprintf(&b, " (%d suppressed)", s.Suppressed)
	}
	fmt.Fprintf(&b, " in %s, %s, %s\n", plural(s.Files, "file"), plural(s.Objects, "object"), plural(s.Rules, "rule"))
	if opts.Cluster != nil {
		b.WriteString(opts.Cluster.describe() + "\n")
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// printable writes the control characters of s (C0, DEL, C1) as Go escapes
// (\n, \x1b): a file name or a value can hold them, and written raw to a
// terminal or a log they start a line that looks like another finding or an
// ANSI escape sequence that recolours or rewrites the screen.
func printable(s string) string {
	clean := true
	for _, r := range s {
		if isControl(r) {
			clean = false
			break
		}
	}
	if clean {
		return s
	}
	var b strings.Builder
	for _, r := range s {
		if !isControl(r) {
			b.WriteRune(r)
			continue
		}
		switch r {
		case '\n':
			b.WriteString(`\n`)
		case '\r':
			b.WriteString(`\r`)
		case '\t':
			b.WriteString(`\t`)
		default:
			fmt.Fprintf(&b, `\x%02x`, r)
		}
	}
	return b.String()
}

func isControl(r rune) bool { return r < 0x20 || (r >= 0x7f && r <= 0x9f) }

// textWidth is the width text output is written for: a finding's line fits
// it when the names do, and a detail is wrapped to it.
const textWidth = 100

const detailIndent = "    "

// wrap breaks s into lines of at most width characters at spaces; a word
// longer than width stands on a line of its own.
func wrap(s string, width int) []string {
	var lines []string
	line := ""
	for _, w := range strings.Fields(s) {
		switch {
		case line == "":
			line = w
		case utf8.RuneCountInString(line)+1+utf8.RuneCountInString(w) <= width:
			line += " " + w
		default:
			lines = append(lines, line)
			line = w
		}
	}
	if line != "" {
		lines = append(lines, line)
	}
	return lines
}

func plural(n int, word string) string {
	if n == 1 || word == "info" {
		return fmt.Sprintf("%d %s", n, word)
	}
	return fmt.Sprintf("%d %ss", n, word)
}
