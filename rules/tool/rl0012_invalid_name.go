package tool

import (
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/api/validate/content"
	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/rolloutlint/rolloutlint/internal/lookalike"
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
the ASCII name it imitates. A name holding a shell variable (\'${REGION}\', \'$TEAM\') comes
from a file written for envsubst or sed; the finding names the variable.`,
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
	// An object's findings depend on its own name and namespace only.
	Sharded: true,
	Run:     runInvalidName,
}

func runInvalidName(p *rules.Pass) error {
	for _, r := range p.Resources() {
		if r.Name != "" {
			if msgs := nameErrors(r.Group, r.Kind, r.Name); len(msgs) > 0 {
				msg, detail := invalidNameMessage(r.Kind+" name", r.Name, msgs, nameErrors, r)
				p.ReportDetail(r, "metadata.name", msg, detail)
			}
		}
		if r.NamespaceExplicit && r.Namespace != "" && !isLabel(r.Namespace, false) {
			if msgs := validation.IsDNS1123Label(r.Namespace); len(msgs) > 0 {
				msg, detail := invalidNameMessage("namespace", r.Namespace, msgs,
					func(_, _, s string) []string { return validation.IsDNS1123Label(s) }, r)
				p.ReportDetail(r, "metadata.namespace", msg, detail)
			}
		}
	}
	return nil
}

// nameErrors validates a name as the API server does for the kind. A name
// the scanners below accept has no errors; the validation's regular
// expressions are asked only about the others, for their messages.
func nameErrors(group, kind, name string) []string {
	switch {
	case group == "" && kind == "Service":
		if isLabel(name, true) {
			return nil
		}
		return validation.IsDNS1035Label(name)
	case group == "" && kind == "Namespace":
		if isLabel(name, false) {
			return nil
		}
		return validation.IsDNS1123Label(name)
	case group == "rbac.authorization.k8s.io":
		return content.IsPathSegmentName(name)
	}
	if isSubdomain(name) {
		return nil
	}
	return validation.IsDNS1123Subdomain(name)
}

// isLabel reports whether s is a DNS label of at most 63 bytes: an RFC 1123
// label ([a-z0-9]([-a-z0-9]*[a-z0-9])?) or, when letterFirst, an RFC 1035 one
// ([a-z]([-a-z0-9]*[a-z0-9])?), as IsDNS1123Label and IsDNS1035Label accept.
func isLabel(s string, letterFirst bool) bool {
	return len(s) <= validation.DNS1123LabelMaxLength && labelAt(s, letterFirst)
}

// isSubdomain reports whether s is an RFC 1123 subdomain of at most 253
// bytes: labels joined by dots, as IsDNS1123Subdomain accepts.
func isSubdomain(s string) bool {
	if len(s) > validation.DNS1123SubdomainMaxLength {
		return false
	}
	for {
		label, rest, more := strings.Cut(s, ".")
		if !labelAt(label, false) {
			return false
		}
		if !more {
			return true
		}
		s = rest
	}
}

// labelAt matches one label of any length: lower-case alphanumerics and
// '-', starting (with a letter when letterFirst) and ending alphanumeric.
func labelAt(s string, letterFirst bool) bool {
	if s == "" || s[0] == '-' || s[len(s)-1] == '-' || letterFirst && !isLower(s[0]) {
		return false
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; !isLower(c) && !isDigit(c) && c != '-' {
			return false
		}
	}
	return true
}

func isLower(c byte) bool { return 'a' <= c && c <= 'z' }

func isDigit(c byte) bool { return '0' <= c && c <= '9' }

// invalidNameMessage says what is wrong with a name: the characters that are
// not printable ASCII (with their Unicode names) and the ASCII name it imitates when
// that one is valid; the detail is the validation's first reason.
func invalidNameMessage(what, name string, msgs []string, valid func(group, kind, name string) []string, r *graph.Resource) (string, string) {
	reason := msgs[0]
	if i := strings.Index(reason, " (e.g. "); i >= 0 {
		reason = reason[:i]
	}
	msg := fmt.Sprintf("%s %q is not valid", what, name)
	if odd := lookalike.Find(name); len(odd) > 0 {
		msg = fmt.Sprintf("%s %q holds %s", what, name, lookalike.Describe(odd))
	}
	if s := lookalike.ASCII(name); s != "" && s != name && len(valid(r.Group, r.Kind, s)) == 0 {
		msg += fmt.Sprintf(" (did you mean %q?)", s)
	}
	detail := "The API server rejects it: " + strings.TrimSuffix(reason, ".") + "."
	if v := shellVariable(name); v != "" {
		msg += ": " + v + " is not substituted"
		detail += " The file is a template for envsubst or sed (" + v + " is a shell variable): " +
			"lint what the substitution writes (`envsubst < FILE | rolloutlint lint -`)."
	}
	return msg, detail
}

// shellVariable is the first ${NAME} or $NAME a name holds, the placeholder
// of a file meant for envsubst or sed, or "".
func shellVariable(name string) string {
	i := strings.IndexByte(name, '$')
	if i < 0 || i+1 >= len(name) {
		return ""
	}
	rest := name[i+1:]
	if rest[0] == '{' {
		if j := strings.IndexByte(rest, '}'); j > 1 {
			return name[i : i+j+2]
		}
		return ""
	}
	j := 0
	for j < len(rest) && (rest[j] == '_' || 'A' <= rest[j] && rest[j] <= 'Z' || 'a' <= rest[j] && rest[j] <= 'z' || j > 0 && isDigit(rest[j])) {
		j++
	}
	if j == 0 {
		return ""
	}
	return name[i : i+j+1]
}
