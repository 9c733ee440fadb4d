package cli

import (
	"fmt"
	"os"
	"runtime"
	"runtime/pprof"

	"github.com/spf13/cobra"
)

// profiler writes Go pprof profiles of one run, for performance reports
// (docs/performance.md). It is started before the command runs and stopped
// after it, whatever its outcome, so a lint that exits 1 is profiled too.
type profiler struct {
	env              *Env
	cpuPath, memPath string
	cpuFile          *os.File
}

func (p *profiler) register(root *cobra.Command) {
	fl := root.PersistentFlags()
	fl.StringVar(&p.cpuPath, "cpuprofile", "", "write a CPU profile of the run to this file (go tool pprof)")
	fl.StringVar(&p.memPath, "memprofile", "", "write a heap profile at the end of the run to this file (go tool pprof)")
	_ = fl.MarkHidden("cpuprofile")
	_ = fl.MarkHidden("memprofile")
	root.PersistentPreRunE = func(*cobra.Command, []string) error { return p.start() }
}

func (p *profiler) start() error {
	if p.cpuPath == "" {
		return nil
	}
	f, err := os.Create(p.env.path(p.cpuPath))
	if err != nil {
		return fmt.Errorf("--cpuprofile: %w", err)
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		_ = f.Close()
		return fmt.Errorf("--cpuprofile: %w", err)
	}
	p.cpuFile = f
	return nil
}

// stop ends the CPU profile and writes the heap profile.
func (p *profiler) stop() error {
	if p.cpuFile != nil {
		pprof.StopCPUProfile()
		if err := p.cpuFile.Close(); err != nil {
			return fmt.Errorf("--cpuprofile: %w", err)
		}
		p.cpuFile = nil
	}
	if p.memPath == "" {
		return nil
	}
	f, err := os.Create(p.env.path(p.memPath))
	if err != nil {
		return fmt.Errorf("--memprofile: %w", err)
	}
	runtime.GC() // the profile shows what is live at the end, not garbage
	if err := pprof.Lookup("allocs").WriteTo(f, 0); err != nil {
		_ = f.Close()
		return fmt.Errorf("--memprofile: %w", err)
	}
	return f.Close()
}
