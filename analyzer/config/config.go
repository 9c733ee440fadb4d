// Package config reads .rolloutlint.yaml: per-rule severity or off (IDs and
// globs), rule options, paths, excludes and defaults for the command line.
package config

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/rolloutlint/rolloutlint/internal/textdist"
	"github.com/rolloutlint/rolloutlint/model/load"
	"github.com/rolloutlint/rolloutlint/rules"
)

// FileName is the config file looked for upward from the working directory.
const FileName = ".rolloutlint.yaml"

// Config is a parsed .rolloutlint.yaml.
type Config struct {
	// File is the path the config was read from ("" for the zero config).
	File string
	// Dir is the directory holding the config; relative paths are resolved from it.
	Dir string
	// Namespace is the default namespace for objects that set none.
	Namespace string
	// Paths are linted when the command line names none, and serve as context
	// for the files it does name (so a commit touching only a VirtualService is
	// checked against its Rollout).
	Paths []string
	// Exclude holds globs of files never read (`**` matches across directories).
	Exclude []string
	// FailLevel is the lowest severity that makes lint exit 1.
	FailLevel string
	// Policies are directories of user Rego policies.
	Policies []string
	// ArgoCD says the bundle is deployed by Argo CD even when no Application is in it.
	ArgoCD bool
	// IstioVersion selects the xDS model for plan and RL6xxx rules.
	IstioVersion string
	// Rules holds per-rule settings in file order.
	Rules []RuleSetting
	// lines are the lines of the top-level settings, for At.
	lines map[string]int
}

// settings are the top-level keys of a config, in the order the README lists them.
var settings = []string{"namespace", "paths", "exclude", "failLevel", "policies", "argocd", "istioVersion", "rules"}

// At names where a top-level setting is written, "FILE:LINE: key", for an
// error about its value found after parsing (an unsupported istioVersion);
// "key in config" when the setting's line is not known.
func (c *Config) At(key string) string {
	if c == nil || c.lines[key] == 0 {
		return key + " in config"
	}
	return fmt.Sprintf("%s:%d: %s", c.File, c.lines[key], key)
}

// RuleSetting is one entry under `rules:`.
type RuleSetting struct {
	Pattern  string // an ID (RL2003) or a glob (RL2*)
	Off      bool
	Severity rules.Severity // 0 keeps the rule's default
	Options  rules.Options
	Line     int
	// optionLines are the lines of the option keys, for CheckOptions.
	optionLines map[string]int
}

// Error is a config problem with its location.
type Error struct {
	File string
	Line int
	Key  string
	Msg  string
}

func (e *Error) Error() string {
	if e.Key != "" {
		return fmt.Sprintf("%s:%d: %s: %s", e.File, e.Line, e.Key, e.Msg)
	}
	return fmt.Sprintf("%s:%d: %s", e.File, e.Line, e.Msg)
}

// Find looks for .rolloutlint.yaml in dir and its parents. It returns "" when
// there is none.
func Find(dir string) string {
	dir, err := filepath.Abs(dir)
	if err != nil {
		return ""
	}
	for {
		p := filepath.Join(dir, FileName)
		if st, err := os.Stat(p); err == nil && !st.IsDir() {
			return p
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return ""
		}
		dir = parent
	}
}

// Load reads and validates a config file.
func Load(path string) (*Config, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("reading config: %w", err)
	}
	return Parse(path, data)
}

var rulePattern = regexp.MustCompile(`^RL[0-9*?]{1,4}\*?$`)

// Parse parses config text; file names the source in errors.
func Parse(file string, data []byte) (*Config, error) {
	c := &Config{File: file, Dir: filepath.Dir(file)}
	var doc yaml.Node
	dec := yaml.NewDecoder(bytes.NewReader(data))
	if err := dec.Decode(&doc); err != nil {
		if errors.Is(err, io.EOF) {
			return c, nil
		}
		msg := strings.TrimPrefix(err.Error(), "yaml: ")
		if m := regexp.MustCompile(`^line (\d+): (.*)$`).FindStringSubmatch(msg); m != nil {
			msg = m[2]
		}
		return nil, &Error{File: file, Line: load.SyntaxErrorLine(data), Msg: "invalid YAML: " + msg}
	}
	if len(doc.Content) == 0 {
		return c, nil
	}
	root := doc.Content[0]
	if root.Kind != yaml.MappingNode {
		return nil, &Error{File: file, Line: root.Line, Msg: "the config must be a mapping of settings"}
	}
	c.lines = map[string]int{}
	for i := 0; i+1 < len(root.Content); i += 2 {
		k, v := root.Content[i], root.Content[i+1]
		if first, ok := c.lines[k.Value]; ok {
			return nil, twice(file, k, k.Value, first)
		}
		c.lines[k.Value] = k.Line
		var err error
		switch k.Value {
		case "namespace":
			err = decodeScalar(v, &c.Namespace)
		case "paths":
			err = decodeStrings(v, &c.Paths)
		case "exclude":
			err = decodeStrings(v, &c.Exclude)
		case "failLevel":
			// "none" (never fail) is accepted as on the command line.
			if err = decodeScalar(v, &c.FailLevel); err == nil && c.FailLevel != "none" {
				_, err = rules.ParseSeverity(c.FailLevel)
			}
		case "policies":
			err = decodeStrings(v, &c.Policies)
		case "argocd":
			err = v.Decode(&c.ArgoCD)
		case "istioVersion":
			err = decodeScalar(v, &c.IstioVersion)
		case "rules":
			err = c.parseRules(file, v)
		default:
			return nil, &Error{File: file, Line: k.Line, Key: k.Value, Msg: unknownSetting(k.Value)}
		}
		if err != nil {
			var ce *Error
			if errors.As(err, &ce) {
				return nil, ce
			}
			return nil, &Error{File: file, Line: v.Line, Key: k.Value, Msg: err.Error()}
		}
	}
	return c, nil
}

// unknownSetting is the message for a top-level key that is no setting: the
// setting it is probably a typo of, else the list of settings.
func unknownSetting(key string) string {
	best, bestD := "", 3 // at most two edits away
	for _, s := range settings {
		if strings.EqualFold(s, key) {
			return fmt.Sprintf("unknown setting (did you mean %q?)", s)
		}
		if d, ok := textdist.Within(strings.ToLower(key), strings.ToLower(s), 2); ok && d < bestD {
			best, bestD = s, d
		}
	}
	if best != "" {
		return fmt.Sprintf("unknown setting (did you mean %q?)", best)
	}
	return "unknown setting (known: " + strings.Join(settings, ", ") + ")"
}

// twice is the error for a key written a second time in one mapping: YAML
// keeps one of the two, so one setting would be dropped unnoticed.
func twice(file string, k *yaml.Node, key string, first int) *Error {
	return &Error{File: file, Line: k.Line, Key: key, Msg: fmt.Sprintf("set twice (first at line %d): keep one", first)}
}

func decodeScalar(v *yaml.Node, out *string) error {
	if v.Kind != yaml.ScalarNode {
		return errors.New("must be a string")
	}
	*out = v.Value
	return nil
}

func decodeStrings(v *yaml.Node, out *[]string) error {
	if v.Kind == yaml.ScalarNode {
		*out = []string{v.Value}
		return nil
	}
	if v.Kind != yaml.SequenceNode {
		return errors.New("must be a list of strings")
	}
	for _, c := range v.Content {
		if c.Kind != yaml.ScalarNode {
			return fmt.Errorf("line %d: must be a string", c.Line)
		}
		*out = append(*out, c.Value)
	}
	return nil
}

func (c *Config) parseRules(file string, v *yaml.Node) error {
	if v.Kind != yaml.MappingNode {
		return errors.New("must map rule IDs or globs to off, info, warning, error or {severity, options}")
	}
	seen := map[string]int{}
	for i := 0; i+1 < len(v.Content); i += 2 {
		k, val := v.Content[i], v.Content[i+1]
		key := "rules." + k.Value
		if !rulePattern.MatchString(k.Value) {
			return &Error{File: file, Line: k.Line, Key: key, Msg: "not a rule ID (RL + four digits) or a glob such as RL2*"}
		}
		if first, ok := seen[k.Value]; ok {
			return twice(file, k, key, first)
		}
		seen[k.Value] = k.Line
		s := RuleSetting{Pattern: k.Value, Line: k.Line}
		level := ""
		switch val.Kind {
		case yaml.ScalarNode:
			level = val.Value
		case yaml.MappingNode:
			seenSetting := map[string]int{}
			for j := 0; j+1 < len(val.Content); j += 2 {
				sk, sv := val.Content[j], val.Content[j+1]
				if first, ok := seenSetting[sk.Value]; ok {
					return twice(file, sk, key+"."+sk.Value, first)
				}
				seenSetting[sk.Value] = sk.Line
				switch sk.Value {
				case "severity":
					level = sv.Value
				case "options":
					if sv.Kind != yaml.MappingNode {
						return &Error{File: file, Line: sv.Line, Key: key + ".options", Msg: "must be a mapping"}
					}
					s.optionLines = map[string]int{}
					for k := 0; k+1 < len(sv.Content); k += 2 {
						ok := sv.Content[k]
						if first, dup := s.optionLines[ok.Value]; dup {
							return twice(file, ok, key+".options."+ok.Value, first)
						}
						s.optionLines[ok.Value] = ok.Line
					}
					var opts map[string]any
					if err := sv.Decode(&opts); err != nil {
						return &Error{File: file, Line: sv.Line, Key: key + ".options", Msg: "must be a mapping"}
					}
					s.Options = opts
				default:
					return &Error{File: file, Line: sk.Line, Key: key + "." + sk.Value, Msg: "unknown rule setting (known: severity, options)"}
				}
			}
		default:
			return &Error{File: file, Line: val.Line, Key: key, Msg: "must be off, info, warning, error or {severity, options}"}
		}
		switch strings.ToLower(level) {
		case "":
		case "off", "false", "disabled":
			s.Off = true
		default:
			sev, err := rules.ParseSeverity(level)
			if err != nil {
				return &Error{File: file, Line: val.Line, Key: key, Msg: fmt.Sprintf("%q is not off, info, warning or error", level)}
			}
			s.Severity = sev
		}
		c.Rules = append(c.Rules, s)
	}
	return nil
}

// CheckOptions checks each rules entry against the rules of rs: an ID or
// glob that matches none of them (a typo such as RL2103, as --enable
// rejects it) is an *Error at its line, and so are an option no matched rule
// declares (rules.Rule.Options) and a value of the wrong type, as an
// ill-formed rule ID is.
func (c *Config) CheckOptions(rs []*rules.Rule) error {
	if c == nil {
		return nil
	}
	for _, s := range c.Rules {
		var matched []*rules.Rule
		for _, r := range rs {
			if MatchRule(s.Pattern, r.ID) {
				matched = append(matched, r)
			}
		}
		if len(matched) == 0 {
			return &Error{File: c.File, Line: s.Line, Key: "rules." + s.Pattern, Msg: fmt.Sprintf("no rule matches %s (see 'rolloutlint rules')", s.Pattern)}
		}
		if len(s.Options) == 0 {
			continue
		}
		keys := make([]string, 0, len(s.Options))
		for k := range s.Options {
			keys = append(keys, k)
		}
		sort.Slice(keys, func(i, j int) bool {
			if li, lj := s.optionLines[keys[i]], s.optionLines[keys[j]]; li != lj {
				return li < lj
			}
			return keys[i] < keys[j]
		})
		for _, k := range keys {
			line := s.optionLines[k]
			if line == 0 {
				line = s.Line
			}
			key := "rules." + s.Pattern + ".options." + k
			declared := false
			var known []string
			for _, r := range matched {
				for _, o := range r.Options {
					known = append(known, o.Name)
					if o.Name != k {
						continue
					}
					declared = true
					if err := o.Check(s.Options[k]); err != nil {
						return &Error{File: c.File, Line: line, Key: key, Msg: fmt.Sprintf("%v (option of %s)", err, r.ID)}
					}
				}
			}
			if !declared {
				return &Error{File: c.File, Line: line, Key: key, Msg: unknownOption(s.Pattern, k, known)}
			}
		}
	}
	return nil
}

// unknownOption says which options the matched rules do have.
func unknownOption(pattern, key string, known []string) string {
	sort.Strings(known)
	known = slices.Compact(known)
	if len(known) == 0 {
		return fmt.Sprintf("unknown option: %s has no options", pattern)
	}
	msg := fmt.Sprintf("unknown option (known for %s: %s)", pattern, strings.Join(known, ", "))
	for _, k := range known {
		if strings.EqualFold(k, key) {
			return fmt.Sprintf("unknown option (did you mean %q?)", k)
		}
	}
	return msg
}

// Setting is the effective configuration of one rule.
type Setting struct {
	Enabled bool
	// Explicit is true when an entry of the config matched the rule.
	Explicit bool
	Severity rules.Severity // 0: the rule's default
	Options  rules.Options
}

// For returns the effective setting of a rule ID: globs apply in file order,
// then exact IDs, so `RL2*: off` with `RL2003: error` keeps RL2003 on.
func (c *Config) For(id string) Setting {
	s := Setting{Enabled: true}
	if c == nil {
		return s
	}
	apply := func(r RuleSetting) {
		s.Explicit = true
		if r.Off {
			s.Enabled = false
			return
		}
		s.Enabled = true
		if r.Severity != 0 {
			s.Severity = r.Severity
		}
		if r.Options != nil {
			s.Options = r.Options
		}
	}
	for _, r := range c.Rules {
		if r.Pattern != id && MatchRule(r.Pattern, id) {
			apply(r)
		}
	}
	for _, r := range c.Rules {
		if r.Pattern == id {
			apply(r)
		}
	}
	return s
}

// MatchRule reports whether a rule ID matches an ID or glob (`RL2*`, `RL20?3`).
func MatchRule(pattern, id string) bool {
	ok, err := filepath.Match(pattern, id)
	return err == nil && ok
}

// Excluded reports whether a file path matches one of the exclude globs.
// Relative globs are matched against the path as given and relative to the
// config's directory.
func (c *Config) Excluded(path string) bool { return c.ExcludedFrom("", path) }

// ExcludedFrom is Excluded for a path relative to the directory wd ("" is
// the process's working directory).
func (c *Config) ExcludedFrom(wd, path string) bool {
	if c == nil || len(c.Exclude) == 0 {
		return false
	}
	slash := filepath.ToSlash(filepath.Clean(path))
	cands := []string{slash}
	fsPath := path
	if wd != "" && !filepath.IsAbs(path) {
		fsPath = filepath.Join(wd, path)
	}
	if abs, err := filepath.Abs(fsPath); err == nil && c.Dir != "" {
		if dirAbs, err := filepath.Abs(c.Dir); err == nil {
			if rel, err := filepath.Rel(dirAbs, abs); err == nil {
				cands = append(cands, filepath.ToSlash(rel))
			}
		}
	}
	for _, g := range c.Exclude {
		re := globRegexp(g)
		for _, p := range cands {
			if re.MatchString(p) {
				return true
			}
		}
	}
	return false
}

// globRegexp translates a glob with `**` into an anchored regexp.
func globRegexp(glob string) *regexp.Regexp {
	var b strings.Builder
	b.WriteString("^")
	g := filepath.ToSlash(glob)
	for i := 0; i < len(g); i++ {
		switch {
		case strings.HasPrefix(g[i:], "**/"):
			b.WriteString("(?:.*/)?")
			i += 2
		case strings.HasPrefix(g[i:], "**"):
			b.WriteString(".*")
			i++
		case g[i] == '*':
			b.WriteString("[^/]*")
		case g[i] == '?':
			b.WriteString("[^/]")
		default:
			b.WriteString(regexp.QuoteMeta(g[i : i+1]))
		}
	}
	b.WriteString("$")
	return regexp.MustCompile(b.String())
}

// Resolve makes a path from the config relative to the config's directory.
func (c *Config) Resolve(p string) string {
	if c == nil || filepath.IsAbs(p) || c.Dir == "" {
		return p
	}
	return filepath.Join(c.Dir, p)
}
