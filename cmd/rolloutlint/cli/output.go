package cli

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/rolloutlint/rolloutlint/analyzer/config"
	"github.com/rolloutlint/rolloutlint/model/graph"
)

// checkOutput refuses an --output file that is one of the linted files (or
// the same file under another name): the report would replace a manifest.
func (e *Env) checkOutput(output string, files []*graph.File) error {
	out := e.canonical(output)
	outSt, statErr := os.Stat(e.path(output))
	outLst, lstatErr := os.Lstat(e.path(output))
	for _, f := range files {
		if e.canonical(f.Path) == out {
			return fmt.Errorf("--output %s is one of the files being linted: the report would replace it", output)
		}
		if statErr != nil && lstatErr != nil {
			continue
		}
		st, err := os.Stat(e.path(f.Path))
		if err != nil {
			continue
		}
		if statErr == nil && os.SameFile(st, outSt) || lstatErr == nil && os.SameFile(st, outLst) {
			return fmt.Errorf("--output %s is one of the files being linted (%s): the report would replace it", output, f.Path)
		}
	}
	return nil
}

// sideInput is a file a lint reads besides the manifests.
type sideInput struct {
	path string // absolute
	what string // what it is to the lint, for the message
}

// sideInputs are the files the lint reads besides the manifests: the
// config, every file in the policy directories, the values files, the
// Prometheus token and CA, the kubeconfig of --cluster. An --output naming
// one replaced it with the report (a config, a policy or a token lost).
func (o *lintOptions) sideInputs(e *Env, cfg *config.Config) []sideInput {
	var out []sideInput
	add := func(p, what string) {
		if p == "" {
			return
		}
		if abs, err := filepath.Abs(p); err == nil {
			out = append(out, sideInput{path: abs, what: what})
		}
	}
	if cfg != nil {
		add(cfg.File, "the config")
	}
	for _, dir := range uniqueDirs(append(configPolicyDirs(cfg), e.paths(o.policyDirs)...)) {
		_ = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
			if err == nil && !d.IsDir() {
				add(p, "a file of policy directory "+dir)
			}
			return nil
		})
	}
	for _, v := range o.rendering.helmValues {
		add(e.path(v), "a --values file")
	}
	add(e.path(o.prometheus.tokenFile), "the --prometheus-bearer-token-file")
	add(e.path(o.prometheus.caFile), "the --prometheus-ca-file")
	if o.cluster.enabled {
		add(e.path(o.cluster.kubeconfig), "the --kubeconfig")
	}
	return out
}

// checkSideOutput refuses an --output that is one of the side inputs (or
// the same file under another name).
func (e *Env) checkSideOutput(output string, inputs []sideInput) error {
	out := e.canonical(output)
	outSt, statErr := os.Stat(e.path(output))
	outLst, lstatErr := os.Lstat(e.path(output))
	for _, in := range inputs {
		same := in.path == out
		if !same && (statErr == nil || lstatErr == nil) {
			if st, err := os.Stat(in.path); err == nil {
				same = statErr == nil && os.SameFile(st, outSt) || lstatErr == nil && os.SameFile(st, outLst)
			}
		}
		if same {
			return fmt.Errorf("--output %s is %s, which the lint reads: the report would replace it", output, in.what)
		}
	}
	return nil
}

// checkOutputDir refuses an --output (named as given, at path) whose
// directory does not exist or is not a directory, before anything is linted.
func checkOutputDir(given, path string) error {
	dir := filepath.Dir(path)
	st, err := os.Stat(dir)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return fmt.Errorf("--output %s: directory %s does not exist", given, filepath.Dir(given))
	case err != nil:
		return fmt.Errorf("--output %s: %w", given, unwrapPath(err))
	case !st.IsDir():
		return fmt.Errorf("--output %s: %s is not a directory", given, filepath.Dir(given))
	}
	return nil
}

// writeOutput writes the report atomically: into a temporary file in the
// output's directory, renamed over the output once complete. A reader never
// sees half a report, a failed write leaves the old one, and an output that
// is a symlink to a file is replaced by the report rather than followed (the
// rename replaces the link itself). An output that is a device, pipe or
// socket, itself or behind a symlink (/dev/null, /dev/stdout, a FIFO), is
// written to: renaming over it would replace /dev/null with a regular file.
// The file is not fsynced before the rename: atomicity for readers does not
// need it, a report is made again by the next run, and on a busy disk the
// flush took 1-3.5 ms, a tenth of a pre-commit lint.
func writeOutput(output string, data []byte) (err error) {
	dir := filepath.Dir(output)
	if st, err := os.Lstat(output); err == nil && st.IsDir() {
		return fmt.Errorf("writing report: %s is a directory", output)
	}
	if st, err := os.Stat(output); err == nil && isStream(st.Mode()) {
		return writeStream(output, data)
	}
	// A report that replaces a regular file keeps that file's permissions:
	// one made 0600 must not become readable by others.
	perm := fs.FileMode(0o644)
	if st, err := os.Lstat(output); err == nil && st.Mode().IsRegular() {
		perm = st.Mode().Perm()
	}
	tmp, err := os.CreateTemp(dir, "."+filepath.Base(output)+".*.tmp")
	if err != nil {
		// The temporary file's name is of no use to the reader: say which
		// report could not be written, and why.
		var pe *fs.PathError
		if errors.As(err, &pe) {
			err = pe.Err
		}
		return fmt.Errorf("writing report to %s: %w", output, err)
	}
	defer func() {
		if err != nil {
			_ = os.Remove(tmp.Name())
		}
	}()
	_, err = tmp.Write(data)
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Chmod(tmp.Name(), perm) // a new report: CreateTemp's 0600 would hide it from CI steps running as others
	}
	if err == nil {
		err = os.Rename(tmp.Name(), output)
	}
	if err != nil {
		return fmt.Errorf("writing report to %s: %w", output, unwrapPath(err))
	}
	return nil
}

// isStream reports a file that is read as it is written, not stored: a
// character or block device, a named pipe or a socket.
func isStream(m fs.FileMode) bool {
	return m&(fs.ModeDevice|fs.ModeCharDevice|fs.ModeNamedPipe|fs.ModeSocket) != 0
}

// writeStream writes the report into an existing device or pipe, without
// creating or truncating anything.
func writeStream(output string, data []byte) error {
	f, err := os.OpenFile(output, os.O_WRONLY, 0)
	if err != nil {
		return fmt.Errorf("writing report: %w", unwrapPath(err))
	}
	_, err = f.Write(data)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("writing report to %s: %w", output, unwrapPath(err))
	}
	return nil
}

func unwrapPath(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return fmt.Errorf("%s: %w", pe.Path, pe.Err)
	}
	return err
}
