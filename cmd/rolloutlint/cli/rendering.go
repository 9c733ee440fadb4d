package cli

import (
	"errors"
	"fmt"

	"github.com/spf13/pflag"

	"github.com/rolloutlint/rolloutlint/model/load"
	"github.com/rolloutlint/rolloutlint/model/render"
)

// renderFlags are the flags of lint and plan that say whether and how
// Kustomize roots, Helm charts and Argo CD Applications' sources are
// rendered.
type renderFlags struct {
	render     bool
	helmValues []string
	helmSet    []string
}

// bind adds --render, --values and --set; then says what the command does
// with the rendered units.
func (f *renderFlags) bind(fl *pflag.FlagSet, then string) {
	fl.BoolVar(&f.render, "render", true, "render Kustomize roots, Helm charts and Argo CD Applications' sources "+then)
	fl.StringArrayVar(&f.helmValues, "values", nil, "values file for Helm charts no Application deploys, as helm template --values (repeatable; a path from the working directory, not the chart)")
	fl.StringArrayVar(&f.helmSet, "set", nil, "value for Helm charts no Application deploys, as helm template --set key=value (repeatable)")
}

// helm reports whether values for Helm charts were given.
func (f *renderFlags) helm() bool { return len(f.helmValues) > 0 || len(f.helmSet) > 0 }

// check refuses values with --render=false, which renders no chart.
func (f *renderFlags) check(command string) error {
	if !f.render && f.helm() {
		return errors.New("--values and --set are values for the Helm charts " + command + " renders: with --render=false no chart is rendered, so they would do nothing")
	}
	return nil
}

// options are the render options of the flags, for the command's
// environment.
func (f *renderFlags) options(e *Env, limits load.Limits) render.Options {
	return render.Options{HelmValueFiles: e.paths(f.helmValues), HelmSet: f.helmSet, Limits: limits, Context: e.Context, Stderr: e.Err}
}

// unused refuses values when only directories were given and none of them
// loaded a chart that no Application deploys (ownChart): the values would
// do nothing. Files given alone (a pre-commit hook's changed files, whose
// args may carry --values for the commits that touch the chart) take the
// values only when a chart is among their units.
func (f *renderFlags) unused(e *Env, args []string, ownChart bool) error {
	if f.helm() && onlyDirectories(e, args) && !ownChart {
		return fmt.Errorf("--values and --set are values for the Helm charts no Application deploys, and %s holds none: they would do nothing (an Application's chart takes its values from the Application)", describePaths(args))
	}
	return nil
}
