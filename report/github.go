package report

import (
	"fmt"
	"io"
	"path/filepath"
	"strings"

	"github.com/rolloutlint/rolloutlint/analyzer"
	"github.com/rolloutlint/rolloutlint/rules"
)

// GitHub writes GitHub Actions workflow commands, one annotation per active
// finding:
//
//	::error file=deploy/rollout.yaml,line=12,col=7,endLine=12,endColumn=30,title=RL2001::message
//
// Errors become `error`, warnings `warning` and infos `notice`. Related
// locations are appended to the message on their own lines. GitHub shows at
// most 10 annotations of each level per step; upload SARIF for the full list.
func GitHub(w io.Writer, res *analyzer.Result, opts Options) error {
	var b strings.Builder
	file := func(p string) string { return p }
	if opts.SARIFRoot != "" {
		// Annotations need repository-relative paths, as SARIF URIs do.
		file = func(p string) string { return relativeTo(opts, p) }
	}
	for _, d := range res.Active() {
		msg := d.FullMessage()
		for _, r := range d.Related {
			msg += fmt.Sprintf("\n%s:%d:%d: %s", printable(file(r.File)), r.Line, r.Column, printable(r.Message))
		}
		fmt.Fprintf(&b, "::%s file=%s,line=%d,col=%d", annotationLevel(d.Severity), escapeProperty(printable(file(d.Pos.File))), d.Pos.Line, d.Pos.Column)
		if d.Pos.EndLine > 0 {
			fmt.Fprintf(&b, ",endLine=%d", d.Pos.EndLine)
		}
		if d.Pos.EndColumn > 0 && d.Pos.EndLine == d.Pos.Line {
			// GitHub ignores endColumn on a multi-line range.
			fmt.Fprintf(&b, ",endColumn=%d", d.Pos.EndColumn)
		}
		fmt.Fprintf(&b, ",title=%s::%s\n", escapeProperty(d.RuleID), printable(escapeData(msg)))
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// relativeTo returns path relative to opts.SARIFRoot with forward slashes, or path
// unchanged when it lies outside root.
func relativeTo(opts Options, path string) string {
	if strings.HasPrefix(path, "<") {
		return path
	}
	absRoot, err1 := opts.abs(opts.SARIFRoot)
	abs, err2 := opts.abs(path)
	if err1 != nil || err2 != nil {
		return path
	}
	rel, err := filepath.Rel(absRoot, abs)
	if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return path
	}
	return filepath.ToSlash(rel)
}

func annotationLevel(s rules.Severity) string {
	switch s {
	case rules.Error:
		return "error"
	case rules.Warning:
		return "warning"
	}
	return "notice"
}

// escapeData escapes a workflow command's message: %, CR and LF.
func escapeData(s string) string {
	return strings.NewReplacer("%", "%25", "\r", "%0D", "\n", "%0A").Replace(s)
}

// escapeProperty escapes a workflow command property value, where ':' and ','
// separate properties too.
func escapeProperty(s string) string {
	return strings.NewReplacer("%", "%25", "\r", "%0D", "\n", "%0A", ":", "%3A", ",", "%2C").Replace(s)
}
