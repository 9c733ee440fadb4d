package ruletest

import (
	"fmt"
	"os"
	"regexp"
	"strings"
	"unicode/utf8"

	"github.com/rolloutlint/rolloutlint/rules"
)

// MaxMessageWidth bounds a message's first sentence, the text a finding's
// line shows, not counting the names in it (see MessageWidth): with a short
// file name, `file:line:col: severity RLxxxx ` and the names, a line then
// fits about 100 columns. The why and the fix go to Diagnostic.Detail.
const MaxMessageWidth = 100

// quotesErrors are the rules whose message quotes another tool's error
// whole (a policy's evaluation error, kustomize's or Helm's), which the
// bound cannot hold to.
var quotesErrors = map[string]bool{
	"RL0009": true, // internal-error: the rule's own error
	"RL0010": true, // render-failed: kustomize's or Helm's error
}

// CheckMessage reports what is wrong with a diagnostic's message and detail:
// a message on more than one line or ending in a period, one wider than
// MaxMessageWidth once the names are left out, a detail that is not
// sentences ending in a period. names are the object names and namespaces
// the testdata holds (see Names).
func CheckMessage(d *rules.Diagnostic, names map[string]bool) []string {
	var out []string
	msg := d.Message
	switch {
	case strings.ContainsAny(msg, "\r\n"):
		out = append(out, "the message is more than one line")
	case strings.HasSuffix(msg, "."):
		out = append(out, "the message ends with a period: it is the first sentence, the detail follows it")
	}
	if w, shown := MessageWidth(msg, names); w > MaxMessageWidth && !quotesErrors[d.RuleID] {
		out = append(out, fmt.Sprintf("the message is %d characters without its names (at most %d; move the why and the fix to the detail): %s",
			w, MaxMessageWidth, shown))
	}
	if d.Detail != "" && !strings.HasSuffix(d.Detail, ".") {
		out = append(out, "the detail does not end with a period")
	}
	return out
}

var (
	quoted  = regexp.MustCompile("\"(?:[^\"\\\\]|\\\\.)*\"|`[^`]*`")
	nameish = regexp.MustCompile(`[A-Za-z0-9][A-Za-z0-9._/*-]*`)
)

// MessageWidth is the width of a message with its names left out: a quoted
// value ("…" or `…`) counts as its quotes, and a word made of names of the
// testdata (an object name, a namespace, ns/name, a host whose first
// label is a name) as one character.
// It returns the message as measured, names shown as x.
func MessageWidth(msg string, names map[string]bool) (int, string) {
	s := quoted.ReplaceAllStringFunc(msg, func(q string) string { return q[:1] + q[len(q)-1:] })
	s = nameish.ReplaceAllStringFunc(s, func(w string) string {
		if isName(w, names) {
			return "x"
		}
		return w
	})
	return utf8.RuneCountInString(s), s
}

func isName(w string, names map[string]bool) bool {
	w = strings.TrimRight(w, ".-")
	if w == "" {
		return false
	}
	for _, part := range strings.Split(w, "/") {
		first, _, _ := strings.Cut(part, ".") // a host: reviews.shop.svc.cluster.local
		if !names[part] && !names[first] {
			return false
		}
	}
	return true
}

// nameLine finds the names a user chooses in YAML, block or flow style:
// `name: x` (and other keys ending in name, such as stableSubsetName),
// `namespace: x`, `subset: x`, `host: x`, `stableService: x`.
var nameLine = regexp.MustCompile(`(?:^|[\s{,-])(?:[A-Za-z]*[Nn]ame|namespace|subset|host|[a-z]+Service):\s*["']?([A-Za-z0-9][A-Za-z0-9._-]*)`)

// Names collects the object names and namespaces written in files: the
// names a message may carry that the user chose.
func Names(files []string) map[string]bool {
	out := map[string]bool{}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		for _, m := range nameLine.FindAllStringSubmatch(string(data), -1) {
			out[m[1]] = true
		}
	}
	return out
}
