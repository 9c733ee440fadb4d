package ruledoc_test

import (
	"strings"
	"testing"

	"github.com/rolloutlint/rolloutlint/rules"
	"github.com/rolloutlint/rolloutlint/rules/ruledoc"
)

func sample() *rules.Rule {
	return &rules.Rule{
		ID: "RL9990", Name: "sample", Summary: "A sample.", Severity: rules.Warning, Source: rules.SourceGo, Since: "v0.2.0",
		Kinds: []string{"Rollout"},
		Doc: rules.Doc{
			Why: `Set \'spec.x\'; see [the guide](https://example.com/g).

~~~sh
run it
~~~`,
			Bad:        "\n    spec: {x: 1}\n",
			Good:       "spec: {x: 2}",
			References: []rules.Reference{{Title: "Upstream", URL: "https://example.com/u"}, {URL: "https://example.com/v"}},
		},
		Options: []rules.Option{{Name: "keys", Type: rules.OptStrings, Doc: "more \\'keys\\'.", Example: "[a, b]"},
			{Name: "strict", Type: rules.OptBool, Default: true, Doc: "be strict."}},
		Run: func(*rules.Pass) error { return nil },
	}
}

func TestHelpMarkdown(t *testing.T) {
	want := "Set `spec.x`; see [the guide](https://example.com/g).\n\n```sh\nrun it\n```\n\n" +
		"Bad:\n\n```yaml\n    spec: {x: 1}\n```\n\n" +
		"Good:\n\n```yaml\nspec: {x: 2}\n```\n\n" +
		"Options, under `rules.RL9990.options` in `.rolloutlint.yaml`:\n\n" +
		"- `keys` (list of strings, default none): more `keys`.\n" +
		"- `strict` (bool, default `true`): be strict.\n\n" +
		"```yaml\n# .rolloutlint.yaml\nrules:\n  RL9990:\n    options:\n      keys: [a, b]\n```\n\n" +
		"References:\n\n- [Upstream](https://example.com/u)\n- <https://example.com/v>"
	if got := ruledoc.Help(sample()); got != want {
		t.Errorf("Help:\n%s\nwant:\n%s", got, want)
	}
}

func TestHelpText(t *testing.T) {
	got := ruledoc.Text(sample())
	for _, want := range []string{
		"Set spec.x; see the guide (https://example.com/g).",
		"\n    run it\n",
		"Bad:\n\n        spec: {x: 1}\n",
		"- keys (list of strings, default none): more keys.",
		"- Upstream (https://example.com/u)\n- https://example.com/v",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("Text lacks %q:\n%s", want, got)
		}
	}
	for _, markup := range []string{"`", "```", "](", "<https"} {
		if strings.Contains(got, markup) {
			t.Errorf("Text keeps Markdown %q:\n%s", markup, got)
		}
	}
}

func TestPlainText(t *testing.T) {
	for in, want := range map[string]string{
		"only the *new* pods":          "only the new pods",
		"a **strong** word":            "a strong word",
		"globs such as `RL6*` and *x*": "globs such as RL6* and x",
		"`a*b` times `c*d`":            "a*b times c*d",
		"2 * 3 * 4":                    "2 * 3 * 4",
		"an unclosed `code":            "an unclosed `code",
	} {
		if got := ruledoc.PlainText(in); got != want {
			t.Errorf("PlainText(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestPage(t *testing.T) {
	r := sample()
	r.OptIn = true
	page := ruledoc.Page(r)
	for _, want := range []string{
		"# RL9990 sample\n\nA sample.\n\n",
		"- Default severity: warning\n- Source: go\n- Since: v0.2.0\n- Opt-in: off unless enabled with `--enable RL9990`",
		"- Reads: Rollout\n\nSet `spec.x`",
		"`# rolloutlint:ignore RL9990 -- reason`",
	} {
		if !strings.Contains(page, want) {
			t.Errorf("page lacks %q:\n%s", want, page)
		}
	}
}

func TestExampleNotes(t *testing.T) {
	r := sample()
	r.Doc.BadNote, r.Doc.Good, r.Doc.GoodNote, r.Doc.Lang = "an old one", "", "delete it.", "rego"
	got := ruledoc.Help(r)
	if !strings.Contains(got, "Bad (an old one):\n\n```rego\n") || !strings.Contains(got, "\n\nGood: delete it.") {
		t.Errorf("notes not rendered:\n%s", got)
	}
}

func TestDescription(t *testing.T) {
	r := sample()
	r.Doc.Why = "First `line`\nwraps here.\n\nSecond paragraph."
	if got := ruledoc.Description(r); got != "First line wraps here." {
		t.Errorf("Description = %q", got)
	}
	r.Doc.Why = "~~~sh\ncode first\n~~~"
	if got := ruledoc.Description(r); got != r.Summary {
		t.Errorf("Description of a code-first Why = %q, want the summary", got)
	}
}

func TestTable(t *testing.T) {
	a, b := sample(), sample()
	b.ID, b.Name, b.Summary, b.OptIn = "RL0990", "first", "Has | a pipe.", true
	want := "| ID | name | severity | source | what it finds |\n|---|---|---|---|---|\n" +
		"| [RL0990](docs/RL0990.md) | first | warning | go | (opt-in) Has \\| a pipe. |\n" +
		"| [RL9990](docs/RL9990.md) | sample | warning | go | A sample. |\n"
	if got := ruledoc.Table([]*rules.Rule{a, b}, "docs/"); got != want {
		t.Errorf("Table:\n%s\nwant:\n%s", got, want)
	}
}
