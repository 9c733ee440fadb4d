// Package rules defines what a rule is, what it reports and what it sees. Go
// rules and Rego policies both become a Rule; the analyzer runs them over one
// graph and turns their diagnostics into findings.
package rules

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"sync"

	"github.com/rolloutlint/rolloutlint/model/graph"
)

// Severity orders findings: info < warning < error.
type Severity int

// Severities.
const (
	Info Severity = iota + 1
	Warning
	Error
)

// String returns error, warning or info.
func (s Severity) String() string {
	switch s {
	case Info:
		return "info"
	case Warning:
		return "warning"
	case Error:
		return "error"
	}
	return "none"
}

// ParseSeverity parses error, warning or info.
func ParseSeverity(s string) (Severity, error) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "error":
		return Error, nil
	case "warning", "warn":
		return Warning, nil
	case "info":
		return Info, nil
	}
	return 0, fmt.Errorf("unknown severity %q (want error, warning or info)", s)
}

// MarshalJSON writes the severity name.
func (s Severity) MarshalJSON() ([]byte, error) { return json.Marshal(s.String()) }

// Source says where a rule is implemented.
type Source string

// Rule sources.
const (
	SourceGo   Source = "go"
	SourceRego Source = "rego"
	SourceUser Source = "user"
)

// Rule is one check. It is a plain struct so that Go rules, built-in Rego
// policies and user policies are handled alike by the registry, config,
// suppression, docs and every output format (go/analysis's Analyzer is the
// model). Validate checks the fields; the registry test runs it on every rule.
type Rule struct {
	// ID is RL followed by four digits; its first digit is the theme (see
	// DESIGN.md). IDs are never reused, so configs and suppressions stay
	// meaningful. Required.
	ID string
	// Name is a kebab-case slug, unique among the rules, shown next to the ID
	// and accepted by `explain`. Required.
	Name string
	// Summary is one line saying what the rule finds. It heads the docs page
	// and is the `rules` listing and SARIF shortDescription. Required.
	Summary string
	// Doc is the documentation: why it matters, how to fix it, a bad and a
	// good example (see Doc). Required.
	Doc Doc
	// Since is the release that added the rule ("v0.1.0"). Required for
	// built-in rules.
	Since string
	// Severity is the default severity; the config may change it. Required.
	Severity Severity
	// Kinds are the kinds whose objects the rule reads. For Rego policies only
	// those objects are converted into the policy's input; for Go rules a
	// test checks that the rule reports the same on a bundle cut down to these
	// kinds (rules/all TestKindsDeclared). Names are the model/kinds constants
	// (or policies.AllKinds). Required for policies; a Go rule with none
	// reads no objects (the RL0xxx rules report the loader's problems).
	Kinds []string
	// Source says where the rule is implemented. It picks the stage the rule
	// runs in (Go and live rules first, then policies; see analyzer.Run),
	// whether it needs a live system (SourceLive) and the SARIF precision, so
	// it is required.
	Source Source
	// Tags group rules in SARIF and docs (for example "traffic", "istio").
	Tags []string
	// Options are the settings the rule reads from its config entry
	// (`rules.<ID>.options`). Keys the rule does not declare, and values of
	// the wrong type, are config errors. Pass.Options holds the declared
	// defaults for keys the config leaves out.
	Options []Option
	// OptIn rules are advisory and off unless the config or --enable names
	// them (an ID or a glob such as RL6*).
	OptIn bool
	// Defined is where a user policy's rule is declared (its package clause),
	// so a failure of the rule is reported where the user can fix it. Zero
	// for built-in rules.
	Defined graph.Position
	// Sharded Go rules (Validate refuses the mark on other sources) may be
	// run shard by shard on a large graph: the analyzer runs every sharded
	// rule over one part of each kind's objects while those objects are in
	// the CPU caches, then over the next part (see Shard). A rule may be
	// sharded only when its findings for an object depend on that object
	// and on lookups in the whole graph (Graph.Get, Graph.Refs, the host and
	// label indexes, memos), never on which other objects of the kinds it
	// scans exist: no duplicates, no "two objects share X", no counts or
	// sets built across them, no finding reported once for a group. It
	// scans through Pass.OfKind, Pass.Resources, Pass.Rollouts or ShardPart,
	// which keep to the shard's objects, never through Graph.OfKind or
	// Graph.Refs().Rollouts; an index it builds over the whole graph goes in
	// a graph.Memo, or every shard builds it again. A test runs every
	// sharded rule one object a shard and compares the findings with an
	// unsharded run (rules/all TestShardedSameFindings).
	Sharded bool
	// MergeShards, set on a sharded rule that merges the findings several
	// objects cause at one spot (the analysis rules' collector: a template
	// run by Rollouts that fall in different shards), joins its shards'
	// diagnostics, given in shard order, into what one pass over the whole
	// graph reports. Nil: the shards' diagnostics are concatenated.
	// Optional.
	MergeShards func([]Diagnostic) []Diagnostic
	// Run reports diagnostics through the pass. It returns an error only when
	// the rule itself breaks; that becomes an RL0009 finding naming the rule.
	// A rule never does I/O, never prints and never exits; it may run
	// concurrently with other rules over the same graph, which it must not
	// modify. Required.
	Run func(*Pass) error
	// Prepare, when set, does a rule's one-off setup for a graph (compiling
	// the policies the graph needs).
	// The analyzer starts it when a lint begins, so that it overlaps the
	// stage before the rule's; Run must still work (and wait for it) when
	// Prepare was never called. Optional.
	Prepare func(g *graph.Graph, globals Globals)
}

var idPattern = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^RL[0-9]{4}$`) })
var namePattern = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[a-z0-9]+(-[a-z0-9]+)*$`) })

// Validate checks that a rule is well formed: every required field is set,
// including those whose zero value would silently change behaviour (Source
// picks the run stage, Kinds a policy's input).
func (r *Rule) Validate() error {
	switch {
	case !idPattern().MatchString(r.ID):
		return fmt.Errorf("rule ID %q is not RL followed by four digits", r.ID)
	case !namePattern().MatchString(r.Name):
		return fmt.Errorf("rule %s: name %q is not a kebab-case slug", r.ID, r.Name)
	case strings.TrimSpace(r.Summary) == "":
		return fmt.Errorf("rule %s: empty summary", r.ID)
	case strings.Contains(r.Summary, "\n"):
		return fmt.Errorf("rule %s: the summary is more than one line", r.ID)
	case r.Severity < Info || r.Severity > Error:
		return fmt.Errorf("rule %s: no default severity", r.ID)
	case r.Source != SourceGo && r.Source != SourceRego && r.Source != SourceUser && r.Source != SourceLive:
		return fmt.Errorf("rule %s: Source %q is not go, rego, user or live (it picks the stage the rule runs in)", r.ID, r.Source)
	case len(r.Kinds) == 0 && r.Source != SourceGo:
		return fmt.Errorf("rule %s: no Kinds (the kinds whose objects the policy reads)", r.ID)
	case r.Run == nil:
		return fmt.Errorf("rule %s: no Run function", r.ID)
	case r.Sharded && r.Source != SourceGo:
		return fmt.Errorf("rule %s: Sharded but a %s rule: only Go rules run shard by shard", r.ID, r.Source)
	case r.MergeShards != nil && !r.Sharded:
		return fmt.Errorf("rule %s: MergeShards set on a rule that is not Sharded", r.ID)
	}
	return r.validateDoc()
}

// Related is a secondary location of a diagnostic: the other object
// involved (the other VirtualService defining the host, the Rollout step
// that runs a template). SARIF shows it as a related location linked from
// the message.
type Related struct {
	// File, Line and Column locate it (1-based; Column counts characters).
	File   string `json:"file"`
	Line   int    `json:"line"`
	Column int    `json:"column"`
	// EndLine and EndColumn end the region, when known (0 otherwise). They
	// are not part of the JSON output contract (DESIGN.md), which SARIF
	// extends.
	EndLine   int `json:"-"`
	EndColumn int `json:"-"`
	// Message says what this location is, as a noun phrase or sentence
	// ("Rollout checkout step 3 analysis").
	Message string `json:"message"`
	// Object is the object the location is in, when built by RelatedAt
	// (not part of the JSON contract).
	Object graph.ObjectRef `json:"-"`
	// Peer, set by PeerAt, is the other object of a paired finding (two
	// objects claiming one host, two Rollouts managing one route): the
	// finding is as much about it as about the object it is reported on, so
	// a suppression on the peer (the ignore annotation, or an inline comment
	// covering this location's line) suppresses the finding too.
	Peer *graph.Resource `json:"-"`

	// resource and path, when set, are resolved to File/Line/Column only if
	// the diagnostic is reported: positions need the yaml node, which is
	// rebuilt on demand, so rules may build related locations freely.
	resource *graph.Resource
	path     string
}

// RelatedAt builds a related location at a field of a resource. Its position
// is resolved when the diagnostic carrying it is reported.
func RelatedAt(r *graph.Resource, path, message string) Related {
	return Related{File: r.File, Message: message, Object: r.Ref(), resource: r, path: path}
}

// PeerAt builds the related location of the other side of a paired finding,
// which is reported once, on the first of the objects in file order (see
// Related.Peer): a suppression written on the other object still applies.
func PeerAt(r *graph.Resource, path, message string) Related {
	rel := RelatedAt(r, path, message)
	rel.Peer = r
	return rel
}

// Resolve fills in the position of a related location built by RelatedAt.
func (r *Related) Resolve() {
	if r.resource == nil {
		return
	}
	p := r.resource.Pos(r.path)
	r.File, r.Line, r.Column, r.EndLine, r.EndColumn = p.File, p.Line, p.Column, p.EndLine, p.EndColumn
	r.resource = nil
}

// Fix is a suggested mechanical change.
type Fix struct {
	// Description says what to change, in words a user can apply by hand.
	Description string `json:"description"`
	// Replacement is the text that should replace the diagnostic's range,
	// when the fix is a single edit.
	Replacement string `json:"replacement,omitempty"`
}

// Suppression records why a diagnostic is not counted.
type Suppression struct {
	// Kind is inSource (a comment) or external (an annotation or the config),
	// as SARIF names them.
	Kind string `json:"kind"`
	// Reason is the justification written after "--".
	Reason string `json:"justification,omitempty"`
}

// Diagnostic is one finding (go/analysis's Diagnostic is the model). A rule
// sets Resource and Path (or Pos), Message and, when other objects are
// involved, Related; Pass.ReportDiag fills in the rest.
type Diagnostic struct {
	// RuleID and Name identify the rule; filled in by the pass.
	RuleID string `json:"ruleId"`
	Name   string `json:"name"`
	// Severity is the rule's default unless the rule sets one for this
	// finding; the config may override it afterwards.
	Severity Severity `json:"severity"`
	// Message is the first sentence: what is wrong, naming the objects and
	// values involved (`step 4: setWeight 120 is outside 0..100`). It is one
	// line without a final period, short enough that a text line fits 100
	// columns when the names do (rules/all TestMessageLength bounds it).
	Message string `json:"message"`
	// Detail is the rest, when there is more to say about this finding: what
	// Argo Rollouts or Istio does with it and how to fix it, in sentences
	// ending with a period. Text shows it with --verbose; SARIF and GitHub
	// annotations append it to the message (see FullMessage). It should not
	// repeat the rule's Doc, which explains the rule as a whole.
	Detail string `json:"detail,omitempty"`
	// Pos is the primary location. Left zero, it is computed from Resource
	// and Path.
	Pos graph.Position `json:"-"`
	// Object identifies the object the finding is about; filled in from
	// Resource.
	Object graph.ObjectRef `json:"object"`
	// Path is the field path within the object (spec.strategy.canary.steps[2]);
	// a path that does not exist lands on its nearest existing parent.
	Path string `json:"path"`
	// Related are the other locations involved. When a finding is about a
	// pair (two objects claiming one host), it is reported once, on the first
	// in file order, with the others here as peers (PeerAt).
	Related []Related `json:"related"`
	// Fix, when set, suggests a change.
	Fix *Fix `json:"fix,omitempty"`
	// Suppressed is set when a comment, annotation or config silenced the
	// finding; such findings are kept for SARIF and not counted.
	Suppressed *Suppression `json:"suppressed,omitempty"`
	// Resource is the object the diagnostic is about (nil for file-level ones).
	Resource *graph.Resource `json:"-"`
}

// MarshalJSON writes the output contract: position fields inline.
func (d Diagnostic) MarshalJSON() ([]byte, error) {
	related := d.Related
	if related == nil {
		related = []Related{}
	}
	d.Related = related
	return json.Marshal(struct {
		RuleID    string          `json:"ruleId"`
		Name      string          `json:"name"`
		Severity  Severity        `json:"severity"`
		Message   string          `json:"message"`
		Detail    string          `json:"detail,omitempty"`
		File      string          `json:"file"`
		Line      int             `json:"line"`
		Column    int             `json:"column"`
		EndLine   int             `json:"endLine"`
		EndColumn int             `json:"endColumn"`
		Object    graph.ObjectRef `json:"object"`
		Path      string          `json:"path"`
		Related   []Related       `json:"related"`
		Fix       *Fix            `json:"fix,omitempty"`
		Suppr     *Suppression    `json:"suppressed,omitempty"`
	}{d.RuleID, d.Name, d.Severity, d.Message, d.Detail, d.Pos.File, d.Pos.Line, d.Pos.Column, d.Pos.EndLine, d.Pos.EndColumn,
		d.Object, d.Path, d.Related, d.Fix, d.Suppressed})
}

// FullMessage is the message followed by the detail, for outputs with room
// for both (SARIF, GitHub annotations): "message. Detail."
func (d *Diagnostic) FullMessage() string {
	if d.Detail == "" {
		return d.Message
	}
	return d.Message + ". " + d.Detail
}

// Less orders diagnostics by file, line, column, rule, message and detail.
func Less(a, b *Diagnostic) bool {
	if a.Pos.File != b.Pos.File {
		return graph.LessFile(a.Pos.File, b.Pos.File)
	}
	if a.Pos.Line != b.Pos.Line {
		return a.Pos.Line < b.Pos.Line
	}
	if a.Pos.Column != b.Pos.Column {
		return a.Pos.Column < b.Pos.Column
	}
	if a.RuleID != b.RuleID {
		return a.RuleID < b.RuleID
	}
	if a.Message != b.Message {
		return a.Message < b.Message
	}
	return a.Detail < b.Detail
}
