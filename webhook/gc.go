package webhook

import "github.com/rolloutlint/rolloutlint/internal/memlimit"

// GCHeadroom is how far above the live heap the collector lets a serving
// process's heap grow before it collects (see TuneGC). With a cluster view of
// 10,000 objects about 33 MB are live, and at Go's default (GOGC=100) a
// review load of 200/s collected twice a second; the reviews that met a
// collection's marking made up most of the steady load's p99. 96 MiB keeps
// the heap within live + 96 MiB (well inside the shipped GOMEMLIMIT of
// 400MiB) and collects about three times less often; a process whose live
// heap is larger than this collects as at the default.
const GCHeadroom = 96 << 20

// TuneGC sets the collector for serving reviews: GOGC follows the live heap so
// that GCHeadroom bytes may be allocated between collections, never less than
// at the default (memlimit.Headroom); the soft memory limit still applies. It
// does nothing when GOGC is set. The webhook command calls it at start; stop
// restores the previous setting.
func TuneGC() (stop func()) { return memlimit.Headroom(GCHeadroom) }
