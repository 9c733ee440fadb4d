// Package earlygc raises the collector's GOGC before the package
// initialisation of the rolloutlint command runs (see memlimit.Startup).
// Only the command imports it, as its first import: Go initialises packages
// in import-path order among those whose imports are initialised, and this
// one imports only the standard library and memlimit, so it runs before the
// large initialisers of the dependencies (Helm's JSON Schema meta-schemas,
// client-go's scheme, OPA's built-ins), which allocate about 8 MB and at the
// default GOGC cost a pre-commit lint two collections before main starts.
package earlygc

import "github.com/rolloutlint/rolloutlint/internal/memlimit"

func init() { memlimit.Startup() }
