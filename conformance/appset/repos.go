package main

import (
	"context"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/argoproj/argo-cd/v3/util/git"
)

// checkout is the repository as the repo server has it checked out: a
// copy of the tree in a temporary directory with a git index of its files.
type checkout struct {
	root string
	git  git.Client
}

// newCheckout copies the tree (hidden directories left out, as a
// repository's .git is) and indexes every file with `git add`.
func newCheckout(tree string) (*checkout, func(), error) {
	tmp, err := os.MkdirTemp("", "appset-checkout-")
	if err != nil {
		return nil, nil, fmt.Errorf("checkout: %w", err)
	}
	cleanup := func() { _ = os.RemoveAll(tmp) }
	fail := func(err error) (*checkout, func(), error) {
		cleanup()
		return nil, nil, err
	}
	root := filepath.Join(tmp, "repo")
	if err := copyTree(tree, root); err != nil {
		return fail(fmt.Errorf("checkout: copy %s: %w", tree, err))
	}
	for _, args := range [][]string{{"init", "-q"}, {"add", "-A"}} {
		cmd := exec.Command("git", args...)
		cmd.Dir = root
		cmd.Env = append(os.Environ(), "GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_NOSYSTEM=1")
		if out, err := cmd.CombinedOutput(); err != nil {
			return fail(fmt.Errorf("checkout: git %s: %w: %s", strings.Join(args, " "), err, out))
		}
	}
	c, err := git.NewClientExt("file://"+root, root, git.NopCreds{}, true, false, "", "")
	if err != nil {
		return fail(fmt.Errorf("checkout: git client: %w", err))
	}
	return &checkout{root: root, git: c}, cleanup, nil
}

func copyTree(src, dst string) error {
	return filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(src, p)
		if err != nil {
			return err
		}
		if d.IsDir() && rel != "." && strings.HasPrefix(d.Name(), ".") {
			return filepath.SkipDir
		}
		target := filepath.Join(dst, rel)
		switch {
		case d.IsDir():
			return os.MkdirAll(target, 0o755)
		case d.Type().IsRegular():
			data, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			return os.WriteFile(target, data, 0o644)
		}
		return nil // symlinks and others are not part of the fixtures
	})
}

// localRepos is the git generator's repo service (services.Repos) over
// the checkout; repoURL, revision and project are not looked at.
type localRepos struct {
	checkout *checkout
}

// GetFiles does what the repo server's GetGitFiles does: Argo CD's git
// client lists the files the pattern matches (new globbing off, the
// controller's default), and each is read.
func (r *localRepos) GetFiles(_ context.Context, _, _, _, pattern string, _, _ bool) (map[string][]byte, error) {
	if pattern == "" {
		pattern = "."
	}
	files, err := r.checkout.git.LsFiles(pattern, false)
	if err != nil {
		return nil, fmt.Errorf("list files %q: %w", pattern, err)
	}
	res := map[string][]byte{}
	for _, f := range files {
		data, err := os.ReadFile(filepath.Join(r.checkout.root, f))
		if err != nil {
			return nil, fmt.Errorf("read %s: %w", f, err)
		}
		res[f] = data
	}
	return res, nil
}

// GetDirectories does what the repo server's GetGitDirectories does: every
// directory of the checkout, relative to its root, hidden ones (and what
// they hold) left out.
func (r *localRepos) GetDirectories(_ context.Context, _, _, _ string, _, _ bool) ([]string, error) {
	root := r.checkout.root
	var paths []string
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() {
			return nil
		}
		if strings.HasPrefix(d.Name(), ".") {
			return filepath.SkipDir
		}
		rel, err := filepath.Rel(root, p)
		if err != nil {
			return err
		}
		if rel != "." {
			paths = append(paths, rel)
		}
		return nil
	})
	return paths, err
}
