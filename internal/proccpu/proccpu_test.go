package proccpu

import (
	"os"
	"os/exec"
	"runtime"
	"testing"
)

func TestSelfCountsWork(t *testing.T) {
	if runtime.GOOS == "windows" || runtime.GOOS == "plan9" || runtime.GOOS == "js" || runtime.GOOS == "wasip1" {
		t.Skip("not read on this system")
	}
	before := Self()
	x := 0
	for i := range 50_000_000 {
		x += i % 7
	}
	if after := Self(); after <= before {
		t.Errorf("CPU time did not grow over a busy loop (%d): %v then %v", x, before, after)
	}
}

func TestPeakRSSOfAChild(t *testing.T) {
	if os.Getenv("PROCCPU_CHILD") == "1" {
		b := make([]byte, 64<<20)
		for i := range b {
			b[i] = 1
		}
		runtime.KeepAlive(b)
		return
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestPeakRSSOfAChild$")
	cmd.Env = append(os.Environ(), "PROCCPU_CHILD=1")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("child: %v\n%s", err, out)
	}
	peak, ok := PeakRSS(cmd.ProcessState)
	if !ok {
		t.Skip("not known on this system")
	}
	if peak < 64<<20 || peak > 4<<30 {
		t.Errorf("peak resident memory of a child that touched 64 MiB: %d bytes", peak)
	}
}
