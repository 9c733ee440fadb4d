package tool

import "github.com/rolloutlint/rolloutlint/rules"

// Skipped reports files found in a linted directory that were not read.
var Skipped = &rules.Rule{
	ID: "RL0011", Name: "skipped-file", Severity: rules.Warning, Source: rules.SourceGo, Tags: []string{"input"},
	Summary: "A manifest-named file in a linted directory is a pipe, socket, device or a symlink out of the directory, and was not read.",
	Doc: rules.Doc{
		Why: `Only regular files are read from a directory: a named pipe would block the lint until
something writes to it, and a socket or device is not a manifest. A symlink is read when its
target is a regular file inside the directory being linted; a symlink that leaves it (to a
token, a key, another checkout) is not followed, so what it points at is neither linted nor
quoted in a report. Each such file gets this finding instead of a silent hole in the lint.

To lint a symlink's target, name it on the command line or pass \'--follow-symlinks\', which
follows symlinks to files and directories outside the linted directory (cycles are walked
once). To lint what a pipe delivers, name the pipe, or use \'-\' for standard input.`,
		BadNote: "a directory with a symlink out of it",
		Bad: `
deploy/
  rollout.yaml
  secrets.yaml -> /home/ci/.config/token.yaml
`,
		GoodNote: "regular files, or symlinks within the directory",
		Good: `
deploy/
  rollout.yaml
  current.yaml -> rollout.yaml
`,
		Lang: "text",
	},
	Since: "v0.1.0",
	Run:   fromProblems,
}
