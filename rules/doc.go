package rules

import (
	"errors"
	"fmt"
	"regexp"
	"strings"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/api/resource"
)

// Doc is a rule's documentation in structured fields. rules/ruledoc renders
// it in one place for docs/rules/<ID>.md, `rolloutlint explain`, the README
// table and the SARIF help (plain text and Markdown).
//
// Why is Markdown. So that it fits a Go raw string literal, a backtick is
// written \' (as staticcheck's documentation does); ruledoc turns \' into a
// backtick. Code blocks inside Why are fenced with ~~~ (rendered as ```).
// Rego policies write real backticks in their METADATA description.
type Doc struct {
	// Why says what goes wrong at runtime when the rule fires, and how to fix
	// it: one or more Markdown paragraphs. Required.
	Why string
	// Bad is an example that makes the rule fire, in Lang (YAML unless set).
	// Leading blank lines and trailing space are dropped; indentation is kept.
	// Required.
	Bad string
	// Good is the example fixed. Required unless GoodNote says what to do
	// instead.
	Good string
	// BadNote and GoodNote caption the examples ("Bad (a chart template):");
	// with no Good example, GoodNote is the advice ("Good: delete it.").
	BadNote, GoodNote string
	// Lang is the language of the examples' code blocks; "" means yaml.
	Lang string
	// References link to the upstream documentation the rule relies on.
	References []Reference
}

// Reference is a link from a rule's documentation.
type Reference struct {
	Title string // "" shows the URL
	URL   string
}

// OptionType is the type of a rule option's value in .rolloutlint.yaml.
type OptionType string

// Option types. The config reader checks values against them.
const (
	OptString   OptionType = "string"
	OptBool     OptionType = "bool"
	OptInt      OptionType = "int"
	OptStrings  OptionType = "list of strings"
	OptDuration OptionType = "duration" // a Go duration string such as "500ms" or "2s"
	OptQuantity OptionType = "quantity" // a positive Kubernetes quantity such as "512Mi" or "1Gi"
)

// Option declares one setting of a rule (`rules.<ID>.options.<Name>` in
// .rolloutlint.yaml). The config reader rejects keys a rule does not declare
// and values of the wrong type, with file:line.
type Option struct {
	Name string
	Type OptionType
	// Default is the value used when the config sets none, in the option's
	// type (string, bool, int or []string); nil means unset. The pass fills
	// it in, so rule code and documentation share one default.
	Default any
	// Doc says what the option changes, in one Markdown sentence.
	Doc string
	// Example is a YAML value shown in the documentation's config snippet
	// ("[track, build]"); "" leaves the option out of the snippet.
	Example string
}

var (
	versionPattern = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`^v(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)$`)
	})
	optionPattern = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[a-z][a-zA-Z0-9]*$`) })
)

// validateDoc checks the documentation fields of a rule. User policies may
// leave out the examples and the version: their authors document them as
// they see fit.
func (r *Rule) validateDoc() error {
	if strings.TrimSpace(r.Doc.Why) == "" {
		return fmt.Errorf("rule %s: empty Doc.Why", r.ID)
	}
	if r.Source != SourceUser {
		switch {
		case strings.TrimSpace(r.Doc.Bad) == "":
			return fmt.Errorf("rule %s: no Doc.Bad example", r.ID)
		case strings.TrimSpace(r.Doc.Good) == "" && strings.TrimSpace(r.Doc.GoodNote) == "":
			return fmt.Errorf("rule %s: no Doc.Good example (or GoodNote)", r.ID)
		case !versionPattern().MatchString(r.Since):
			return fmt.Errorf("rule %s: Since %q is not the release that added the rule (vMAJOR.MINOR.PATCH)", r.ID, r.Since)
		}
	}
	for _, ref := range r.Doc.References {
		if !strings.HasPrefix(ref.URL, "https://") && !strings.HasPrefix(ref.URL, "http://") {
			return fmt.Errorf("rule %s: reference %q is not an http(s) URL", r.ID, ref.URL)
		}
	}
	seen := map[string]bool{}
	for _, o := range r.Options {
		switch {
		case !optionPattern().MatchString(o.Name):
			return fmt.Errorf("rule %s: option name %q is not lowerCamelCase", r.ID, o.Name)
		case seen[o.Name]:
			return fmt.Errorf("rule %s: option %s declared twice", r.ID, o.Name)
		case strings.TrimSpace(o.Doc) == "":
			return fmt.Errorf("rule %s: option %s has no Doc", r.ID, o.Name)
		}
		seen[o.Name] = true
		if err := o.Check(o.Default); o.Default != nil && err != nil {
			return fmt.Errorf("rule %s: default of option %s: %w", r.ID, o.Name, err)
		}
		switch o.Type {
		case OptString, OptBool, OptInt, OptStrings, OptDuration, OptQuantity:
		default:
			return fmt.Errorf("rule %s: option %s has unknown type %q", r.ID, o.Name, o.Type)
		}
	}
	return nil
}

// Check reports whether v (as decoded from YAML) is a value of the option's
// type.
func (o Option) Check(v any) error {
	want := fmt.Errorf("must be a %s", o.Type)
	switch o.Type {
	case OptString:
		if _, ok := v.(string); !ok {
			return want
		}
	case OptBool:
		if _, ok := v.(bool); !ok {
			return errors.New("must be true or false")
		}
	case OptInt:
		if _, ok := v.(int); !ok {
			return errors.New("must be an integer")
		}
	case OptDuration:
		s, ok := v.(string)
		if !ok {
			return errors.New(`must be a duration such as "500ms" or "2s"`)
		}
		if d, err := time.ParseDuration(s); err != nil || d <= 0 {
			return fmt.Errorf("%q is not a positive duration such as \"500ms\" or \"2s\"", s)
		}
	case OptQuantity:
		s, ok := v.(string)
		if !ok {
			return errors.New(`must be a quantity such as "512Mi" or "1Gi"`)
		}
		if q, err := resource.ParseQuantity(s); err != nil || q.Sign() <= 0 {
			return fmt.Errorf("%q is not a positive quantity such as \"512Mi\" or \"1Gi\"", s)
		}
	case OptStrings:
		switch l := v.(type) {
		case []string:
		case []any:
			for _, e := range l {
				if _, ok := e.(string); !ok {
					return want
				}
			}
		default:
			return want
		}
	}
	return nil
}
