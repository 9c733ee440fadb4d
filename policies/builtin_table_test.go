package policies

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"reflect"
	"testing"

	"github.com/open-policy-agent/opa/v1/ast"

	"github.com/rolloutlint/rolloutlint/rules"
)

var update = flag.Bool("update", false, "rewrite policies/builtin.json from the embedded policies")

// fullBuiltin compiles the embedded policies the way user policies are
// compiled: METADATA parsed, every compiler check, the contract checks.
func fullBuiltin(t *testing.T) *compiled {
	t.Helper()
	all, err := builtinSources()
	if err != nil {
		t.Fatal(err)
	}
	var srcs []Source
	for _, s := range all {
		if !s.IsTest() {
			srcs = append(srcs, s)
		}
	}
	set, err := compile(srcs, rules.SourceRego)
	if err != nil {
		t.Fatal(err)
	}
	return set
}

// libFilesOf parses the library and one policy file as a lint does and
// returns the library files the policy reaches (nil: all of them).
func libFilesOf(t *testing.T, file string) []string {
	t.Helper()
	all, err := builtinSources()
	if err != nil {
		t.Fatal(err)
	}
	mods := map[string]*ast.Module{}
	for _, s := range all {
		if s.IsTest() || s.Name != file && !isLibFile(s.Name) {
			continue
		}
		m, err := ast.ParseModuleWithOpts(s.Name, s.Text, ast.ParserOptions{RegoVersion: ast.RegoV1})
		if err != nil {
			t.Fatal(err)
		}
		mods[s.Name] = m
	}
	if mods[file] == nil {
		t.Fatalf("no embedded file %s", file)
	}
	files, ok := libFilesReached(mods, isLibFile)
	if !ok {
		return nil
	}
	return files
}

// TestBuiltinTable checks that builtin.json, which a process reads instead
// of parsing the policies, says what the policies' METADATA blocks say.
func TestBuiltinTable(t *testing.T) {
	set := fullBuiltin(t)
	metas := make([]builtinMeta, 0, len(set.policies))
	for _, p := range set.policies {
		r := p.rule
		lib := libFilesOf(t, p.file)
		metas = append(metas, builtinMeta{
			Package: p.pkg, Loc: p.loc, File: p.file, ID: r.ID, Name: r.Name, Summary: r.Summary,
			Why: r.Doc.Why, Bad: r.Doc.Bad, Good: r.Doc.Good, References: r.Doc.References,
			Since: r.Since, Severity: r.Severity.String(), Kinds: r.Kinds, Requires: p.requires, Lib: lib, Tags: r.Tags,
		})
	}
	want, err := json.MarshalIndent(metas, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	want = append(want, '\n')
	if *update {
		if err := os.WriteFile("builtin.json", want, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	if !bytes.Equal(builtinTable, want) {
		t.Fatalf("policies/builtin.json is stale: run go test ./policies -run BuiltinTable -update")
	}

	// The rules built from the table are the compiled policies' rules.
	got, err := LoadBuiltin()
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(set.rules) {
		t.Fatalf("%d rules from the table, %d compiled", len(got), len(set.rules))
	}
	for i, r := range got {
		a, b := *r, *set.rules[i]
		a.Run, b.Run, a.Prepare = nil, nil, nil
		if !reflect.DeepEqual(a, b) {
			t.Errorf("rule %s from the table:\n%+v\ncompiled:\n%+v", r.ID, a, b)
		}
	}
}

// TestPrepareBuiltinSameFields checks that the lazy compile (no METADATA,
// check-only stages skipped) reads the same object fields as the full one,
// since the fields pick what the Rego input converts.
func TestPrepareBuiltinSameFields(t *testing.T) {
	set := fullBuiltin(t)
	if err := prepareBuiltin(); err != nil {
		t.Fatal(err)
	}
	if got, want := builtin.fields.String(), set.fields.String(); got != want {
		t.Errorf("fields read by the lazily compiled policies:\n%s\nby the full compile:\n%s", got, want)
	}
	// A policy compiled earlier in the process, by a lint that needed only
	// some of them, keeps the fields of its own set: each is ready and
	// reads no field outside the union.
	for _, p := range builtin.policies {
		if !p.ready.Load() || p.fields == nil {
			t.Errorf("policy %s not prepared", p.pkg)
			continue
		}
		if u := builtin.fields.union(p.fields); u.String() != builtin.fields.String() {
			t.Errorf("policy %s reads fields outside the union:\n%s", p.pkg, p.fields)
		}
	}
}
