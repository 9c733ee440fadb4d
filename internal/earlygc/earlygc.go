// Package earlygc raises the collector's GOGC before the package
// initialisation of the rolloutlint command runs (see memlimit.Startup).
// Only the command imports it, as its first import: Go initialises packages
// in import-path order among those whose imports are initialised, and this
// one imports only the standard library and memlimit, so it runs before the
// large initialisers of the dependencies (protobuf's descriptors, OPA's
// built-ins; in rolloutlint-helm, Helm's JSON Schema meta-schemas and
// client-go's scheme), which at the default GOGC cost a short run
// collections before main starts.
package earlygc

import "github.com/rolloutlint/rolloutlint/internal/memlimit"

func init() { memlimit.Startup() }
