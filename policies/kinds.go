package policies

import (
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"
	"sync"

	"github.com/open-policy-agent/opa/v1/ast"
)

// AllKinds is the custom.kinds entry of a policy that reads objects of any
// kind (e.g. a rule over every object's labels).
const AllKinds = "*"

// kindSet is the set of kinds whose objects a policy reads, as declared in its
// custom.kinds metadata. Converting the manifests into Rego values is most of
// the cost of a Rego lint, so for the built-in policies only the declared
// kinds' objects are converted (user policies get every kind).
type kindSet struct {
	all   bool
	kinds map[string]bool
}

func newKindSet(kinds []string) kindSet {
	s := kindSet{kinds: make(map[string]bool, len(kinds))}
	for _, k := range kinds {
		if k == AllKinds {
			s.all = true
		}
		s.kinds[k] = true
	}
	return s
}

// has reports whether the set holds kind.
func (s kindSet) has(kind string) bool { return s.all || s.kinds[kind] }

// covers reports whether s holds every kind of o.
func (s kindSet) covers(o kindSet) bool {
	if s.all {
		return true
	}
	if o.all {
		return false
	}
	for k := range o.kinds {
		if !s.kinds[k] {
			return false
		}
	}
	return true
}

// union returns a new set with the kinds of both.
func (s kindSet) union(o kindSet) kindSet {
	u := kindSet{all: s.all || o.all, kinds: make(map[string]bool, len(s.kinds)+len(o.kinds))}
	for k := range s.kinds {
		u.kinds[k] = true
	}
	for k := range o.kinds {
		u.kinds[k] = true
	}
	return u
}

// String lists the kinds, sorted.
func (s kindSet) String() string {
	ks := make([]string, 0, len(s.kinds))
	for k := range s.kinds {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return strings.Join(ks, ", ")
}

// declared is the union of the kinds the inputs of the policies compiled in
// this process need (policy.input): one conversion per graph then serves
// every policy of a lint.
var declared struct {
	sync.Mutex
	kinds kindSet
}

// declareKinds adds the kinds a compiled policy's input needs to the
// process-wide union.
func declareKinds(s kindSet) {
	declared.Lock()
	defer declared.Unlock()
	declared.kinds = declared.kinds.union(s)
}

// declaredKinds returns a snapshot of the process-wide union.
func declaredKinds() kindSet {
	declared.Lock()
	defer declared.Unlock()
	return declared.kinds.union(kindSet{})
}

var libRef = ast.MustParseRef(LibPackage)

// applicationRules are the library rules that read the bundle's Argo CD
// Applications: a policy using one reads Applications.
var applicationRules = map[string]bool{"applications": true, "argocd_managed": true, "config_only": true}

// checkKindsRead rejects, at load time, a policy that names a kind its
// custom.kinds does not declare in a place where it reads that kind's objects:
// lib.resources("K"), lib.get("K", ...), input.kinds.K, input.objects.K, or
// the library's Application rules. input.kinds[x] and input.objects[x] with a
// computed x need "*". It keeps custom.kinds truthful (it is shown by
// `rolloutlint rules` and explain) and guards the built-in policies, whose
// input holds only their declared kinds' objects.
func checkKindsRead(c *ast.Compiler, pols []*policy) error {
	byPkg := make(map[string]*policy, len(pols))
	for _, p := range pols {
		byPkg[p.pkg] = p
	}
	names := make([]string, 0, len(c.Modules))
	for name := range c.Modules {
		names = append(names, name)
	}
	sort.Strings(names)
	var errs []string
	for _, name := range names {
		m := c.Modules[name]
		p := byPkg[strings.TrimPrefix(m.Package.Path.String(), "data.")]
		if p == nil || p.kinds.all || strings.HasSuffix(name, "_test.rego") {
			continue
		}
		report := func(loc *ast.Location, how string) {
			row := 0
			if loc != nil {
				row = loc.Row
			}
			errs = append(errs, fmt.Sprintf("%s:%d: policy %s reads %s but custom.kinds [%s] does not declare it: custom.kinds lists every kind a policy reads; add it (or %q for every kind)",
				name, row, p.pkg, how, p.kinds, AllKinds))
		}
		checkCall := func(loc *ast.Location, op ast.Ref, args []*ast.Term) {
			fn := op.String()
			if (fn == LibPackage+".resources" || fn == LibPackage+".get") && len(args) > 0 {
				if k, ok := args[0].Value.(ast.String); ok && !p.kinds.has(string(k)) {
					report(loc, fmt.Sprintf("kind %s (lib.%s)", string(k), fn[len(LibPackage)+1:]))
				}
			}
		}
		// Compiled terms often lose their location; their expression keeps it.
		ast.WalkExprs(m, func(e *ast.Expr) bool {
			if e.IsCall() {
				checkCall(e.Location, e.Operator(), e.Operands())
			}
			ast.WalkTerms(e, func(t *ast.Term) bool {
				switch v := t.Value.(type) {
				case ast.Call:
					if r, ok := v[0].Value.(ast.Ref); ok {
						checkCall(e.Location, r, v[1:])
					}
				case ast.Ref:
					checkRef(p, v, e.Location, report)
				}
				return false
			})
			return false
		})
	}
	if len(errs) > 0 {
		sort.Strings(errs)
		errs = slices.Compact(errs)
		return errors.New("policies read undeclared kinds:\n  " + strings.Join(errs, "\n  "))
	}
	return nil
}

// checkRef checks one reference of a policy: input.kinds/objects by kind and
// the library's Application rules.
func checkRef(p *policy, r ast.Ref, loc *ast.Location, report func(*ast.Location, string)) {
	if len(r) >= 3 && r[0].Equal(ast.InputRootDocument) {
		if f, ok := r[1].Value.(ast.String); ok && (f == "kinds" || f == "objects") {
			switch k := r[2].Value.(type) {
			case ast.String:
				if !p.kinds.has(string(k)) {
					report(loc, fmt.Sprintf("kind %s (input.%s)", string(k), string(f)))
				}
			default:
				report(loc, fmt.Sprintf("input.%s[...] with a kind computed at run time (any kind: declare \"*\")", string(f)))
			}
		}
	}
	if len(r) >= 4 && r[:3].Equal(libRef) && !p.kinds.has("Application") {
		if f, ok := r[3].Value.(ast.String); ok && applicationRules[string(f)] {
			report(loc, fmt.Sprintf("kind Application (lib.%s)", string(f)))
		}
	}
}
