package webhook

import (
	"reflect"
	"strings"

	"github.com/rolloutlint/rolloutlint/analyzer"
	"github.com/rolloutlint/rolloutlint/rules"
)

// verdict is a lint's findings sorted by what the review does with them.
type verdict struct {
	all   []Finding // every finding, for the log, metrics and audit annotation
	errs  []Finding // error-level findings that deny
	warns []Finding // warning-level findings
	// existing are error-level findings the old object of an UPDATE had
	// already; they are answered as warnings.
	existing []Finding
	// broken is set when a rule failed (RL0009 on the object): the object
	// was not fully checked.
	broken  *Finding
	related int
}

func classify(res *Result) verdict {
	v := verdict{all: res.Findings, related: res.Related}
	for i, f := range res.Findings {
		if f.RuleID == analyzer.RuleInternal && !f.OnOther {
			v.broken = &res.Findings[i]
			return v
		}
		switch f.Severity {
		case rules.Error:
			v.errs = append(v.errs, f)
		case rules.Warning:
			v.warns = append(v.warns, f)
		} // info-level findings are logged and counted only
	}
	return v
}

// splitExisting moves the errors that the old object of an UPDATE already had
// from errs to existing. A finding of the new object matches one of the old
// object when rule, object, field path and message are the same; failing
// that, when they are the same with every number ignored, so that a finding
// that only moved (a step inserted before it renumbers "steps[3]" to
// "steps[4]" and "step 3" to "step 4") still counts as old. Matching is by
// count: an update that adds a second finding of a kind the object had
// once is denied.
func (v *verdict) splitExisting(old []Finding) {
	exact := map[string]int{}
	loose := map[string]int{}
	for _, f := range old {
		exact[exactKey(f)]++
		loose[looseKey(f)]++
	}
	matched := make([]bool, len(v.errs))
	for i, f := range v.errs {
		if k := exactKey(f); exact[k] > 0 {
			exact[k]--
			loose[looseKey(f)]--
			matched[i] = true
		}
	}
	for i, f := range v.errs {
		if k := looseKey(f); !matched[i] && loose[k] > 0 {
			loose[k]--
			matched[i] = true
		}
	}
	var introduced []Finding
	for i, f := range v.errs {
		if matched[i] {
			v.existing = append(v.existing, f)
		} else {
			introduced = append(introduced, f)
		}
	}
	v.errs = introduced
}

func exactKey(f Finding) string {
	return f.RuleID + "\x00" + f.Object.String() + "\x00" + f.Path + "\x00" + f.Message
}

func looseKey(f Finding) string {
	return f.RuleID + "\x00" + f.Object.String() + "\x00" + withoutNumbers(f.Path) + "\x00" + withoutNumbers(f.Message)
}

// withoutNumbers replaces every run of digits by "#".
func withoutNumbers(s string) string {
	var b strings.Builder
	b.Grow(len(s))
	inRun := false
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= '0' && c <= '9' {
			if !inRun {
				b.WriteByte('#')
			}
			inRun = true
			continue
		}
		inRun = false
		b.WriteByte(c)
	}
	return b.String()
}

// sameExceptMetadataAndStatus reports whether an UPDATE changes nothing but
// metadata (labels, annotations, finalizers, owner references, ...) or
// status: such a change is never denied and not linted.
func sameExceptMetadataAndStatus(old, obj map[string]any) bool {
	for k, v := range obj {
		if k == "metadata" || k == "status" {
			continue
		}
		if !reflect.DeepEqual(v, old[k]) {
			return false
		}
	}
	for k := range old {
		if k == "metadata" || k == "status" {
			continue
		}
		if _, ok := obj[k]; !ok {
			return false
		}
	}
	return true
}
