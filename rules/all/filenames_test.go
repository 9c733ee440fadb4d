package all_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/rolloutlint/rolloutlint/rules"
	"github.com/rolloutlint/rolloutlint/rules/all"
)

// TestRuleFileNames checks that a reader finds a Go rule by its ID: each
// rule is declared in its own file named rl<ID>_<name>.go (RL1001
// set-weight-range: rules/rollout/rl1001_set_weight_range.go), and such a
// file declares that one rule.
func TestRuleFileNames(t *testing.T) {
	files, err := filepath.Glob("../*/*.go")
	if err != nil {
		t.Fatal(err)
	}
	found := map[string]string{} // rule ID -> file
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		fs := token.NewFileSet()
		af, err := parser.ParseFile(fs, f, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		var ids []string
		ast.Inspect(af, func(n ast.Node) bool {
			cl, ok := n.(*ast.CompositeLit)
			if !ok {
				return true
			}
			if se, ok := cl.Type.(*ast.SelectorExpr); !ok || se.Sel.Name != "Rule" {
				return true
			}
			var id, name string
			for _, e := range cl.Elts {
				kv, ok := e.(*ast.KeyValueExpr)
				if !ok {
					continue
				}
				k, _ := kv.Key.(*ast.Ident)
				lit, _ := kv.Value.(*ast.BasicLit)
				if k == nil || lit == nil {
					continue
				}
				switch v, _ := strconv.Unquote(lit.Value); k.Name {
				case "ID":
					id = v
				case "Name":
					name = v
				}
			}
			if id != "" {
				ids = append(ids, id)
				if want := strings.ToLower(id) + "_" + strings.ReplaceAll(name, "-", "_") + ".go"; filepath.Base(f) != want {
					t.Errorf("%s (%s) is declared in %s; name its file %s", id, name, f, want)
				}
				found[id] = f
			}
			return true
		})
		if len(ids) > 1 {
			t.Errorf("%s declares %d rules (%s); one rule per file", f, len(ids), strings.Join(ids, ", "))
		}
	}
	for _, r := range all.Rules() {
		if (r.Source == rules.SourceGo || r.Source == rules.SourceLive) && found[r.ID] == "" {
			t.Errorf("%s: no file under rules/ declares it with literal ID and Name", r.ID)
		}
	}
}
