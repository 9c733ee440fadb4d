package policies

import (
	"sort"

	"github.com/open-policy-agent/opa/v1/ast"
)

// pruneLib drops from the library modules the rules that no other module of
// mods reaches, directly or through other library rules: a lint that
// compiles two of the built-in policies compiles the few helpers they call,
// not the whole library (most of it is Argo CD Application semantics). A rule
// no query reaches is never evaluated, so the findings are the same
// (TestPrunedLibrarySameFindings). The analysis over-approximates: inside the
// library any variable named like a library rule keeps that rule, and a
// policy that uses the library other than as lib.<rule> (the package as a
// value, a computed rule name) keeps the whole library. It reports whether
// it pruned.
func pruneLib(mods map[string]*ast.Module, isLib func(name string) bool) bool {
	need, _, ok := libReach(mods, isLib)
	if !ok {
		return false
	}
	for name, m := range mods {
		if !isLib(name) {
			continue
		}
		kept := m.Rules[:0]
		for _, r := range m.Rules {
			if n, _ := ruleName(r); need[n] {
				kept = append(kept, r)
			}
		}
		m.Rules = kept
	}
	return true
}

// libFilesReached returns the library files (by module name) that hold the
// rules the other modules reach, sorted, and false when every file is needed
// (see pruneLib). TestBuiltinTable writes them to builtin.json, so that a lint
// parses only those.
func libFilesReached(mods map[string]*ast.Module, isLib func(name string) bool) ([]string, bool) {
	need, libRules, ok := libReach(mods, isLib)
	if !ok {
		return nil, false
	}
	files := map[string]bool{}
	for n := range need {
		for _, r := range libRules[n] {
			files[r.Location.File] = true
		}
	}
	out := make([]string, 0, len(files))
	for f := range files {
		out = append(out, f)
	}
	sort.Strings(out)
	return out, true
}

// libReach finds the library rules (by name) the non-library modules of
// mods reach, directly or through other library rules, and the library's
// rules by name. It returns false when nothing may be left out (see
// pruneLib).
func libReach(mods map[string]*ast.Module, isLib func(name string) bool) (map[string]bool, map[string][]*ast.Rule, bool) {
	libRules := map[string][]*ast.Rule{}
	libMods := 0
	for name, m := range mods {
		if !isLib(name) {
			continue
		}
		if !m.Package.Path.Equal(libRef) {
			return nil, nil, false // another package under the library's name: leave it alone
		}
		libMods++
		for _, r := range m.Rules {
			n, ok := ruleName(r)
			if !ok {
				return nil, nil, false
			}
			libRules[n] = append(libRules[n], r)
		}
	}
	if libMods == 0 {
		return nil, nil, false
	}
	need := map[string]bool{}
	var queue []string
	mark := func(n string) {
		if !need[n] && libRules[n] != nil {
			need[n] = true
			queue = append(queue, n)
		}
	}
	for name, m := range mods {
		if isLib(name) {
			continue
		}
		if !libUses(m, mark) {
			return nil, nil, false
		}
	}
	for len(queue) > 0 {
		n := queue[len(queue)-1]
		queue = queue[:len(queue)-1]
		for _, r := range libRules[n] {
			// Sibling rules are named by bare variables; a local variable
			// that shares a rule's name keeps that rule too (harmless).
			ast.WalkVars(r, func(v ast.Var) bool {
				mark(string(v))
				return false
			})
			ast.WalkRefs(r, func(ref ast.Ref) bool {
				if len(ref) > len(libRef) && ref.HasPrefix(libRef) {
					if s, ok := ref[len(libRef)].Value.(ast.String); ok {
						mark(string(s))
					}
				}
				return false
			})
		}
	}
	return need, libRules, true
}

// ruleName is the first part of a rule's name (the library's rules have
// plain names).
func ruleName(r *ast.Rule) (string, bool) {
	ref := r.Head.Ref()
	if len(ref) == 0 {
		return "", false
	}
	v, ok := ref[0].Value.(ast.Var)
	return string(v), ok
}

// libUses marks the library rules a (non-library) module names, as
// lib.<rule> through an import of the library or as
// data.rolloutlint.lib.<rule>. It returns false when the module uses the
// library in a way that names no rule (the package itself as a value, a
// computed key), so that nothing may be pruned.
func libUses(m *ast.Module, mark func(string)) bool {
	aliases := map[ast.Var]bool{}
	for _, imp := range m.Imports {
		ref, ok := imp.Path.Value.(ast.Ref)
		if !ok || !ref.HasPrefix(libRef) {
			continue
		}
		switch {
		case len(ref) == len(libRef):
			alias := imp.Alias
			if alias == "" {
				alias = ast.Var("lib")
			}
			aliases[alias] = true
		default:
			s, ok := ref[len(libRef)].Value.(ast.String)
			if !ok {
				return false
			}
			mark(string(s)) // import data.rolloutlint.lib.<rule>
		}
	}
	ok := true
	var walk func(x any)
	walk = func(x any) {
		ast.NewGenericVisitor(func(x any) bool {
			switch t := x.(type) {
			case ast.Ref:
				n := 0
				switch {
				case len(t) > 0 && isAlias(t[0], aliases):
					n = 1
				case t.HasPrefix(libRef):
					n = len(libRef)
				default:
					return false
				}
				s, isName := ast.String(""), false
				if len(t) > n {
					s, isName = t[n].Value.(ast.String)
				}
				if !isName {
					ok = false
					return true
				}
				mark(string(s))
				for _, e := range t[n+1:] {
					walk(e)
				}
				return true
			case ast.Var:
				if aliases[t] {
					ok = false // the library package as a value
				}
			}
			return false
		}).Walk(x)
	}
	for _, r := range m.Rules {
		walk(r)
	}
	return ok
}

func isAlias(t *ast.Term, aliases map[ast.Var]bool) bool {
	v, ok := t.Value.(ast.Var)
	return ok && aliases[v]
}
