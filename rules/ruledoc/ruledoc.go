// Package ruledoc renders a rule's structured documentation (rules.Doc, the
// summary, options and version) in one place: the docs page
// (docs/rules/<ID>.md, also `rolloutlint explain`), the README rules table,
// and the SARIF help as Markdown and as plain text.
package ruledoc

import (
	"fmt"
	"regexp"
	"sort"
	"strings"
	"sync"

	"github.com/rolloutlint/rolloutlint/rules"
)

// Markdown turns documentation source into Markdown: \' becomes a backtick
// and a ~~~ fence a ``` one (see rules.Doc).
func Markdown(s string) string {
	return tildeFence().ReplaceAllString(strings.ReplaceAll(s, `\'`, "`"), "$1```")
}

var tildeFence = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile("(?m)^([ \t]*)~~~") })

// Page renders the documentation page of a rule.
func Page(r *rules.Rule) string {
	var b strings.Builder
	fmt.Fprintf(&b, "# %s %s\n\n", r.ID, r.Name)
	fmt.Fprintf(&b, "%s\n\n", r.Summary)
	fmt.Fprintf(&b, "- Default severity: %s\n", r.Severity)
	fmt.Fprintf(&b, "- Source: %s\n", r.Source)
	if r.Since != "" {
		fmt.Fprintf(&b, "- Since: %s\n", r.Since)
	}
	if r.OptIn {
		fmt.Fprintf(&b, "- Opt-in: off unless enabled with `--enable %s` or `rules: {%s: info}` in `.rolloutlint.yaml`\n", r.ID, r.ID)
	}
	if len(r.Kinds) > 0 {
		fmt.Fprintf(&b, "- Reads: %s\n", strings.Join(r.Kinds, ", "))
	}
	fmt.Fprintf(&b, "\n%s\n\n", Help(r))
	fmt.Fprintf(&b, "Suppress one finding with `# rolloutlint:ignore %s -- reason` on its line, or turn the rule off with `rules: {%s: off}` in `.rolloutlint.yaml`.\n", r.ID, r.ID)
	return b.String()
}

// Help renders the body of a rule's documentation as Markdown: why, the bad
// and the good example, the options and the references. It is the SARIF
// help.markdown and the middle of the docs page.
func Help(r *rules.Rule) string {
	d := r.Doc
	parts := []string{strings.TrimSpace(Markdown(d.Why))}
	if ex := example("Bad", d.BadNote, d.Bad, d.Lang); ex != "" {
		parts = append(parts, ex)
	}
	if ex := example("Good", d.GoodNote, d.Good, d.Lang); ex != "" {
		parts = append(parts, ex)
	}
	if len(r.Options) > 0 {
		parts = append(parts, options(r))
	}
	if len(d.References) > 0 {
		var b strings.Builder
		b.WriteString("References:\n")
		for _, ref := range d.References {
			if ref.Title != "" {
				fmt.Fprintf(&b, "\n- [%s](%s)", ref.Title, ref.URL)
			} else {
				fmt.Fprintf(&b, "\n- <%s>", ref.URL)
			}
		}
		parts = append(parts, b.String())
	}
	return strings.Join(parts, "\n\n")
}

// example renders "Bad:" or "Bad (note):" and a code block, or "Good: note"
// when there is no code.
func example(label, note, code, lang string) string {
	code = trimCode(code)
	note = strings.TrimSpace(Markdown(note))
	switch {
	case code == "" && note == "":
		return ""
	case code == "":
		return label + ": " + note
	case note != "":
		label += " (" + note + ")"
	}
	if lang == "" {
		lang = "yaml"
	}
	return label + ":\n\n```" + lang + "\n" + code + "\n```"
}

// trimCode drops leading blank lines and trailing space, keeping the
// indentation of the first line.
func trimCode(s string) string {
	s = strings.TrimRight(s, " \t\n")
	for {
		line, rest, ok := strings.Cut(s, "\n")
		if !ok || strings.TrimSpace(line) != "" {
			return s
		}
		s = rest
	}
}

// options renders the options list and a config snippet with the examples.
func options(r *rules.Rule) string {
	var b strings.Builder
	fmt.Fprintf(&b, "Options, under `rules.%s.options` in `.rolloutlint.yaml`:\n", r.ID)
	var snippet []string
	for _, o := range r.Options {
		def := "none"
		if o.Default != nil {
			def = "`" + yamlValue(o.Default) + "`"
		}
		fmt.Fprintf(&b, "\n- `%s` (%s, default %s): %s", o.Name, o.Type, def, strings.TrimSpace(Markdown(o.Doc)))
		if o.Example != "" {
			snippet = append(snippet, fmt.Sprintf("      %s: %s", o.Name, o.Example))
		}
	}
	if len(snippet) > 0 {
		fmt.Fprintf(&b, "\n\n```yaml\n# .rolloutlint.yaml\nrules:\n  %s:\n    options:\n%s\n```", r.ID, strings.Join(snippet, "\n"))
	}
	return b.String()
}

// yamlValue writes an option default as YAML flow.
func yamlValue(v any) string {
	switch t := v.(type) {
	case []string:
		return "[" + strings.Join(t, ", ") + "]"
	case string:
		return fmt.Sprintf("%q", t)
	}
	return fmt.Sprint(v)
}

// Table renders the Markdown rules table, linking each ID to its page.
func Table(rs []*rules.Rule, linkPrefix string) string {
	sorted := append([]*rules.Rule(nil), rs...)
	sort.Slice(sorted, func(i, j int) bool { return sorted[i].ID < sorted[j].ID })
	var b strings.Builder
	b.WriteString("| ID | name | severity | source | what it finds |\n|---|---|---|---|---|\n")
	for _, r := range sorted {
		summary := strings.ReplaceAll(r.Summary, "|", "\\|")
		if r.OptIn {
			summary = "(opt-in) " + summary
		}
		fmt.Fprintf(&b, "| [%s](%s%s.md) | %s | %s | %s | %s |\n", r.ID, linkPrefix, r.ID, r.Name, r.Severity, r.Source, summary)
	}
	return b.String()
}

// Text renders Help as plain text, for SARIF's help.text and other readers
// without Markdown: code spans lose their backticks, links show their URL,
// code blocks are indented by four spaces.
func Text(r *rules.Rule) string { return PlainText(Help(r)) }

// Description is the first paragraph of Why as plain text on one line (SARIF
// fullDescription), or the summary when Why starts with something else.
func Description(r *rules.Rule) string {
	para, _, _ := strings.Cut(strings.TrimSpace(Markdown(r.Doc.Why)), "\n\n")
	if para == "" || strings.HasPrefix(para, "#") || strings.HasPrefix(para, "```") || strings.HasPrefix(para, "~~~") {
		return r.Summary
	}
	return strings.Join(strings.Fields(PlainText(para)), " ")
}

var (
	fencePattern    = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile("^(```|~~~)") })
	linkPattern     = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`\[([^\]]*)\]\(([^)\s]+)\)`) })
	autoLinkPattern = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`<(https?://[^>\s]+)>`) })
	strongPattern   = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`\*\*([^*\n]+)\*\*`) })
	emPattern       = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`(^|[\s(])\*([^*\s][^*\n]*?)\*([\s).,:;!?]|$)`) })
)

// PlainText converts the Markdown the rule docs use (paragraphs, lists,
// fenced code, code spans, links, emphasis) to plain text.
func PlainText(md string) string {
	var out, text []string // text: lines outside code blocks, not yet converted
	flush := func() {
		if len(text) > 0 {
			// a code span may continue on the next line, so convert the run
			// of lines at once
			out = append(out, plainLine(strings.Join(text, "\n")))
			text = nil
		}
	}
	inFence := ""
	for _, line := range strings.Split(md, "\n") {
		trimmed := strings.TrimSpace(line)
		if m := fencePattern().FindString(trimmed); m != "" && (inFence == "" || m == inFence) {
			flush()
			if inFence == "" {
				inFence = m
			} else {
				inFence = ""
			}
			continue
		}
		if inFence == "" {
			text = append(text, line)
			continue
		}
		if line == "" {
			out = append(out, "")
		} else {
			out = append(out, "    "+line)
		}
	}
	flush()
	return strings.Join(out, "\n")
}

// plainLine converts the inline Markdown of lines outside code blocks.
func plainLine(line string) string {
	var b strings.Builder
	for {
		start := strings.IndexByte(line, '`')
		if start < 0 {
			b.WriteString(plainInline(line))
			return b.String()
		}
		end := strings.IndexByte(line[start+1:], '`')
		if end < 0 {
			b.WriteString(plainInline(line))
			return b.String()
		}
		b.WriteString(plainInline(line[:start]))
		b.WriteString(line[start+1 : start+1+end]) // code span text as is
		line = line[start+2+end:]
	}
}

func plainInline(s string) string {
	s = linkPattern().ReplaceAllString(s, "$1 ($2)")
	s = autoLinkPattern().ReplaceAllString(s, "$1")
	s = strongPattern().ReplaceAllString(s, "$1")
	return emPattern().ReplaceAllString(s, "$1$2$3")
}
