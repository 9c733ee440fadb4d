package load

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// A directory holds files of every kind. Only regular files are read from
// it: a named pipe blocks the reader until something writes to it (a lint
// hung on one), and a socket or device is not a manifest. Symlinks are read
// when their target is a regular file inside the directory being linted; a
// symlink out of it is not followed unless Options.FollowSymlinks says so,
// since what it reaches (a token, a key, a home directory) was not meant to
// be linted, and its content would end up in reports. Each file skipped so
// is a finding (RL0011), not a silent hole in the lint.

// entry is one file a directory walk found: a path to read, or one skipped
// with the reason.
type entry struct {
	path    string
	skipped string
	detail  string // what follows from the skip, how to read the file anyway
}

// Entry is one file Walk found: a regular file to read, or, when Skipped is
// set, one that must not be read and the reason (an RL0011 finding).
type Entry struct {
	Path          string
	Skipped       string
	SkippedDetail string // what follows from the skip (see Input.SkippedDetail)
}

// Walk finds the files under the directory named as whose names match
// wants, with the policy of walkDir (regular files only, symlinks out of the
// directory skipped unless opts.FollowSymlinks), sorted by path. Unit
// discovery walks with it, so a Kustomize or plain-directory unit reads the
// same files a plain lint would.
func Walk(as string, opts Options, wants func(name string) bool) ([]Entry, error) {
	found, err := walkMatching(as, opts, wants)
	if err != nil {
		return nil, err
	}
	out := make([]Entry, len(found))
	for i, e := range found {
		out[i] = Entry{Path: e.path, Skipped: e.skipped, SkippedDetail: e.detail}
	}
	return out, nil
}

// ReadFile reads a file named on the command line or found by Walk as
// loading does: without blocking on a pipe, and no more than the file-size
// limit (a larger file becomes an RL0005 finding when loaded).
func ReadFile(path string, opts Options) (Input, error) {
	return readFile(path, opts.osPath(path), opts.Limits.withDefaults())
}

// walkDir finds the manifest files under the directory named as, sorted
// by path; paths are named as the caller named the directory (see
// Options.Dir).
func walkDir(as string, opts Options) ([]entry, error) {
	return walkMatching(as, opts, IsManifestName)
}

func walkMatching(as string, opts Options, wants func(name string) bool) ([]entry, error) {
	root := opts.osPath(as)
	realRoot, err := filepath.EvalSymlinks(root)
	if err != nil {
		return nil, fmt.Errorf("walking %s: %w", as, unwrapPathError(err))
	}
	if realRoot, err = filepath.Abs(realRoot); err != nil {
		return nil, fmt.Errorf("walking %s: %w", as, err)
	}
	w := &walker{opts: opts, wants: wants, root: root, as: as, realRoot: realRoot, visited: map[string]bool{realRoot: true}}
	if err := w.walk(root); err != nil {
		return nil, err
	}
	sort.Slice(w.found, func(i, j int) bool { return w.found[i].path < w.found[j].path })
	return w.found, nil
}

type walker struct {
	opts     Options
	wants    func(path string) bool // which file names are found
	root, as string                 // the directory as the file system and as the caller name it
	realRoot string
	visited  map[string]bool // real paths of the directories walked (symlink cycles)
	found    []entry
}

func (w *walker) walk(dir string) error {
	return filepath.WalkDir(dir, func(osPath string, d fs.DirEntry, err error) error {
		path := renamed(osPath, w.root, w.as)
		if err != nil {
			return fmt.Errorf("walking %s: %w", path, unwrapPathError(err))
		}
		if d.IsDir() {
			if osPath != dir && strings.HasPrefix(d.Name(), ".") {
				return filepath.SkipDir
			}
			return nil
		}
		// Hidden files are tool configs (.rolloutlint.yaml, .pre-commit-config.yaml,
		// .gitlab-ci.yml), not manifests; name one explicitly to lint it.
		if strings.HasPrefix(d.Name(), ".") || w.opts.Exclude != nil && w.opts.Exclude(path) {
			return nil
		}
		if d.Type()&fs.ModeSymlink != 0 {
			return w.symlink(osPath, path)
		}
		if !w.wants(path) {
			return nil
		}
		if why := special(d.Type()); why != "" {
			w.skip(path, why, "Only regular files are read from a directory; name it on the command line to read it.")
			return nil
		}
		w.found = append(w.found, entry{path: path})
		return nil
	})
}

// symlink reads, walks or skips the target of a symlink found in a walk
// (osPath to the file system, path as findings name it).
func (w *walker) symlink(osPath, path string) error {
	target, err := filepath.EvalSymlinks(osPath)
	if err != nil {
		if w.wants(path) {
			w.skip(path, "a symlink whose target cannot be read ("+unwrapPathError(err).Error()+")", "")
		}
		return nil
	}
	if target, err = filepath.Abs(target); err != nil {
		return fmt.Errorf("walking %s: %w", path, err)
	}
	st, err := os.Stat(target)
	if err != nil {
		return fmt.Errorf("walking %s: %w", path, unwrapPathError(err))
	}
	inside := within(w.realRoot, target)
	if st.IsDir() {
		switch {
		case !w.opts.FollowSymlinks && inside:
			return nil // its files are linted under their own path
		case !w.opts.FollowSymlinks:
			w.skip(path, "a symlink to a directory outside the linted directory", "It is not followed; --follow-symlinks follows it.")
			return nil
		case w.visited[target]:
			return nil // a cycle, or a directory already walked
		}
		w.visited[target] = true
		return w.walk(osPath + string(filepath.Separator))
	}
	if !w.wants(path) {
		return nil
	}
	switch {
	case !inside && !w.opts.FollowSymlinks:
		w.skip(path, "a symlink to a file outside the linted directory", "It is not followed and its content is not read; --follow-symlinks follows it.")
	case special(st.Mode().Type()) != "":
		w.skip(path, "a symlink to a "+special(st.Mode().Type()), "Only regular files are read from a directory.")
	default:
		w.found = append(w.found, entry{path: path})
	}
	return nil
}

func (w *walker) skip(path, why, detail string) {
	w.found = append(w.found, entry{path: path, skipped: why, detail: detail})
}

// within reports whether path is root or below it (both absolute and clean).
func within(root, path string) bool {
	rel, err := filepath.Rel(root, path)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) && !filepath.IsAbs(rel)
}

// special names a file type that is not a regular file, or "".
func special(t fs.FileMode) string {
	switch {
	case t&fs.ModeNamedPipe != 0:
		return "named pipe"
	case t&fs.ModeSocket != 0:
		return "socket"
	case t&fs.ModeCharDevice != 0:
		return "character device"
	case t&fs.ModeDevice != 0:
		return "device"
	case t&fs.ModeIrregular != 0 || !t.IsRegular() && t&fs.ModeSymlink == 0 && !t.IsDir():
		return "special file"
	}
	return ""
}
