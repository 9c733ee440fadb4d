package rules_test

import (
	"strings"
	"testing"

	"github.com/rolloutlint/rolloutlint/model/graph"
	"github.com/rolloutlint/rolloutlint/rules"
)

func valid() *rules.Rule {
	return &rules.Rule{
		ID: "RL1999", Name: "sample", Summary: "A sample.", Severity: rules.Error, Source: rules.SourceGo, Since: "v0.1.0",
		Kinds: []string{"Rollout"},
		Doc:   rules.Doc{Why: "w", Bad: "b: 1", Good: "b: 2"},
		Run:   func(*rules.Pass) error { return nil },
	}
}

func TestValidate(t *testing.T) {
	if err := valid().Validate(); err != nil {
		t.Fatalf("valid rule: %v", err)
	}
	cases := map[string]func(r *rules.Rule){
		"not RL followed by four digits": func(r *rules.Rule) { r.ID = "RL19" },
		"kebab-case":                     func(r *rules.Rule) { r.Name = "Sample_Rule" },
		"empty summary":                  func(r *rules.Rule) { r.Summary = " " },
		"more than one line":             func(r *rules.Rule) { r.Summary = "a\nb" },
		"no default severity":            func(r *rules.Rule) { r.Severity = 0 },
		"picks the stage":                func(r *rules.Rule) { r.Source = "" },
		"no Run":                         func(r *rules.Rule) { r.Run = nil },
		"only Go rules run shard by shard": func(r *rules.Rule) {
			r.Source, r.Sharded = rules.SourceRego, true
		},
		"empty Doc.Why":      func(r *rules.Rule) { r.Doc.Why = "" },
		"no Doc.Bad":         func(r *rules.Rule) { r.Doc.Bad = "\n" },
		"no Doc.Good":        func(r *rules.Rule) { r.Doc.Good = "" },
		"Since":              func(r *rules.Rule) { r.Since = "0.1" },
		"no Kinds":           func(r *rules.Rule) { r.Source, r.Kinds = rules.SourceRego, nil },
		"not an http(s) URL": func(r *rules.Rule) { r.Doc.References = []rules.Reference{{URL: "istio.io"}} },
		"lowerCamelCase":     func(r *rules.Rule) { r.Options = []rules.Option{{Name: "Max", Type: rules.OptInt, Doc: "d"}} },
		"declared twice": func(r *rules.Rule) {
			r.Options = []rules.Option{{Name: "max", Type: rules.OptInt, Doc: "d"}, {Name: "max", Type: rules.OptInt, Doc: "d"}}
		},
		"has no Doc":   func(r *rules.Rule) { r.Options = []rules.Option{{Name: "max", Type: rules.OptInt}} },
		"unknown type": func(r *rules.Rule) { r.Options = []rules.Option{{Name: "max", Type: "float", Doc: "d"}} },
		"default of option": func(r *rules.Rule) {
			r.Options = []rules.Option{{Name: "max", Type: rules.OptInt, Default: "3", Doc: "d"}}
		},
	}
	for want, breakIt := range cases {
		r := valid()
		breakIt(r)
		err := r.Validate()
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("want an error containing %q, got %v", want, err)
		}
	}
	// A good note stands in for a good example; a Go rule may read no kinds;
	// user policies need neither examples nor a version.
	r := valid()
	r.Doc.Good, r.Doc.GoodNote, r.Kinds = "", "delete it.", nil
	if err := r.Validate(); err != nil {
		t.Errorf("GoodNote instead of Good, no kinds: %v", err)
	}
	r = valid()
	r.Source, r.Doc.Bad, r.Doc.Good, r.Since = rules.SourceUser, "", "", ""
	if err := r.Validate(); err != nil {
		t.Errorf("user policy without examples: %v", err)
	}
}

func TestOptionCheck(t *testing.T) {
	cases := []struct {
		typ rules.OptionType
		v   any
		ok  bool
	}{
		{rules.OptString, "x", true}, {rules.OptString, 1, false},
		{rules.OptBool, true, true}, {rules.OptBool, "true", false},
		{rules.OptInt, 3, true}, {rules.OptInt, 3.5, false},
		{rules.OptDuration, "500ms", true}, {rules.OptDuration, "-1s", false}, {rules.OptDuration, "1 second", false}, {rules.OptDuration, 5, false},
		{rules.OptStrings, []any{"a", "b"}, true}, {rules.OptStrings, []string{"a"}, true}, {rules.OptStrings, []any{"a", 1}, false}, {rules.OptStrings, "a", false},
	}
	for _, c := range cases {
		err := rules.Option{Name: "o", Type: c.typ}.Check(c.v)
		if (err == nil) != c.ok {
			t.Errorf("%s %#v: error %v, want ok=%v", c.typ, c.v, err, c.ok)
		}
	}
}

func TestPassFillsDeclaredDefaults(t *testing.T) {
	r := valid()
	r.Options = []rules.Option{
		{Name: "keys", Type: rules.OptStrings, Default: []string{"version"}, Doc: "d"},
		{Name: "strict", Type: rules.OptBool, Default: true, Doc: "d"},
		{Name: "extra", Type: rules.OptString, Doc: "d"},
	}
	g := graph.New("default", nil, nil, nil)
	given := rules.Options{"strict": false}
	p := rules.NewPass(g, r, given, rules.ModeCLI, rules.Globals{}, func(rules.Diagnostic) {})
	if got := p.Options.Strings("keys", nil); len(got) != 1 || got[0] != "version" {
		t.Errorf("keys = %v, want the declared default", got)
	}
	if p.Options.Bool("strict", true) {
		t.Error("strict: the config's false must win over the default")
	}
	if _, set := p.Options["extra"]; set {
		t.Error("an option without a default must stay unset")
	}
	if _, set := given["keys"]; set {
		t.Error("NewPass modified the config's options map")
	}
}
