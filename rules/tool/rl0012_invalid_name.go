package tool

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/mtibben/confusables"
	"golang.org/x/text/unicode/runenames"
	"k8s.io/apimachinery/pkg/api/validate/content"
	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/rolloutlint/rolloutlint/model/graph"
	"github.com/rolloutlint/rolloutlint/rules"
)

// InvalidName reports object names and namespaces the API server rejects,
// and names that only look like ASCII.
var InvalidName = &rules.Rule{
	ID: "RL0012", Name: "invalid-name", Severity: rules.Error, Source: rules.SourceGo, Tags: []string{"input"},
	Kinds:   []string{"*"},
	Summary: "An object's name or namespace is not a valid Kubernetes name (a homoglyph, a zero-width character, an upper-case letter).",
	Doc: rules.Doc{
		Why: `The API server accepts only DNS names for most objects: a Service's name must be a DNS-1035
label, a Namespace's and every metadata.namespace a DNS-1123 label, and the others (Rollouts,
VirtualServices, ConfigMaps, custom resources) DNS-1123 subdomains; RBAC objects take any path
segment. rolloutlint checks with the Kubernetes validation itself (k8s.io/apimachinery), so
what it reports is what \'kubectl apply\' would be refused.

The dangerous case is the name that looks right: a Cyrillic \'о\' in \'checkоut\', or a zero-width
space pasted from a chat, makes a name that no reference written by hand matches — the Rollout
names \'checkout\', the Service is something else. The finding names the character and suggests
the ASCII name it imitates.`,
		Bad: `
apiVersion: v1
kind: Service
metadata:
  name: checkоut-canary   # a Cyrillic о
`,
		Good: `
apiVersion: v1
kind: Service
metadata:
  name: checkout-canary
`,
	},
	Since: "v0.1.0",
	Run:   runInvalidName,
}

func runInvalidName(p *rules.Pass) error {
	for _, r := range p.Graph.Resources {
		if r.Name != "" {
			if msgs := nameErrors(r.Group, r.Kind, r.Name); len(msgs) > 0 {
				msg, detail := invalidNameMessage(r.Kind+" name", r.Name, msgs, nameErrors, r)
				p.ReportDetail(r, "metadata.name", msg, detail)
			}
		}
		if r.NamespaceExplicit && r.Namespace != "" {
			if msgs := validation.IsDNS1123Label(r.Namespace); len(msgs) > 0 {
				msg, detail := invalidNameMessage("namespace", r.Namespace, msgs,
					func(_, _, s string) []string { return validation.IsDNS1123Label(s) }, r)
				p.ReportDetail(r, "metadata.namespace", msg, detail)
			}
		}
	}
	return nil
}

// nameErrors validates a name as the API server does for the kind.
func nameErrors(group, kind, name string) []string {
	switch {
	case group == "" && kind == "Service":
		return validation.IsDNS1035Label(name)
	case group == "" && kind == "Namespace":
		return validation.IsDNS1123Label(name)
	case group == "rbac.authorization.k8s.io":
		return content.IsPathSegmentName(name)
	}
	return validation.IsDNS1123Subdomain(name)
}

// invalidNameMessage says what is wrong with a name: the characters that are
// not ASCII (with their Unicode names) and the ASCII name it imitates when
// that one is valid; the detail is the validation's first reason.
func invalidNameMessage(what, name string, msgs []string, valid func(group, kind, name string) []string, r *graph.Resource) (string, string) {
	var odd []string
	for i, c := range name {
		if c >= utf8.RuneSelf {
			odd = append(odd, fmt.Sprintf("%U %s at byte %d", c, runenames.Name(c), i))
		}
	}
	reason := msgs[0]
	if i := strings.Index(reason, " (e.g. "); i >= 0 {
		reason = reason[:i]
	}
	msg := fmt.Sprintf("%s %q is not valid", what, name)
	if len(odd) > 0 {
		msg = fmt.Sprintf("%s %q holds %s", what, name, strings.Join(odd, ", "))
	}
	if s := asciiLookalike(name); s != "" && s != name && len(valid(r.Group, r.Kind, s)) == 0 {
		msg += fmt.Sprintf(" (did you mean %q?)", s)
	}
	return msg, "The API server rejects it: " + strings.TrimSuffix(reason, ".") + "."
}

// asciiLookalike is the ASCII name a name imitates: invisible format
// characters (zero-width spaces and joiners, soft hyphens, byte-order marks)
// dropped, every other non-ASCII character replaced by the ASCII it is
// confusable with (Unicode TR39 confusables, accents stripped), and upper
// case lowered. It is "" when a character has no ASCII look-alike.
func asciiLookalike(name string) string {
	var b strings.Builder
	for _, c := range name {
		switch {
		case c < utf8.RuneSelf:
			b.WriteRune(unicode.ToLower(c))
		case unicode.Is(unicode.Cf, c):
		default:
			for _, s := range confusables.Skeleton(string(c)) {
				switch {
				case unicode.Is(unicode.Mn, s):
				case s < utf8.RuneSelf:
					b.WriteRune(unicode.ToLower(s))
				default:
					return ""
				}
			}
		}
	}
	return b.String()
}
