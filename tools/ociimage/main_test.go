package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// writeFile writes data to dir/name and returns its path.
func writeFile(t *testing.T, dir, name, data string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// buildArgs are the flags of a build into out, before the OS/ARCH=… arguments.
func buildArgs(t *testing.T, dir, out string) []string {
	t.Helper()
	return []string{"build", "-out", out, "-version", "v0.0.0-test", "-revision", "abc",
		"-created", "2026-01-02T03:04:05Z", "-ca-certs", writeFile(t, dir, "certs.pem", "CERTS\n"),
		"-license", writeFile(t, dir, "LICENSE", "license text\n")}
}

func TestBuildPutsEveryBinaryInUsrBin(t *testing.T) {
	dir := t.TempDir()
	mainBin := writeFile(t, dir, "amd64/rolloutlint", "main binary")
	helm := writeFile(t, dir, "amd64/rolloutlint-helm", "helm companion")
	out := filepath.Join(dir, "image")
	// The companion first: the layer is the same whatever the argument order.
	if err := run(append(buildArgs(t, dir, out), "linux/amd64="+helm+","+mainBin), &bytes.Buffer{}); err != nil {
		t.Fatalf("build: %v", err)
	}
	root := filepath.Join(dir, "rootfs")
	if err := run([]string{"export", out, "linux/amd64", root}, &bytes.Buffer{}); err != nil {
		t.Fatalf("export: %v", err)
	}
	for name, want := range map[string]string{"rolloutlint": "main binary", "rolloutlint-helm": "helm companion"} {
		p := filepath.Join(root, "usr", "bin", name)
		data, err := os.ReadFile(p)
		if err != nil || string(data) != want {
			t.Errorf("/usr/bin/%s = %q, %v; want %q", name, data, err, want)
			continue
		}
		if fi, _ := os.Stat(p); fi.Mode().Perm() != 0o755 {
			t.Errorf("/usr/bin/%s mode %v, want 0755", name, fi.Mode().Perm())
		}
	}
	var inspected bytes.Buffer
	if err := run([]string{"inspect", out}, &inspected); err != nil {
		t.Fatalf("inspect: %v", err)
	}
	var imgs []inspection
	if err := json.Unmarshal(inspected.Bytes(), &imgs); err != nil {
		t.Fatal(err)
	}
	if len(imgs) != 1 || len(imgs[0].Config.Entrypoint) != 1 || imgs[0].Config.Entrypoint[0] != "/usr/bin/rolloutlint" || len(imgs[0].Layers) != 2 {
		t.Errorf("inspect: %s", inspected.String())
	}

	// The same binaries in the other order give the same image.
	out2 := filepath.Join(dir, "image2")
	if err := run(append(buildArgs(t, dir, out2), "linux/amd64="+mainBin+","+helm), &bytes.Buffer{}); err != nil {
		t.Fatalf("build: %v", err)
	}
	var inspected2 bytes.Buffer
	if err := run([]string{"inspect", out2}, &inspected2); err != nil {
		t.Fatalf("inspect: %v", err)
	}
	if inspected.String() != inspected2.String() {
		t.Errorf("argument order changed the image:\n%s\n%s", inspected.String(), inspected2.String())
	}
}

func TestBuildRefusesBadBinaryLists(t *testing.T) {
	dir := t.TempDir()
	mainBin := writeFile(t, dir, "a/rolloutlint", "x")
	other := writeFile(t, dir, "b/rolloutlint", "y")
	helm := writeFile(t, dir, "a/rolloutlint-helm", "z")
	for _, c := range []struct{ arg, want string }{
		{"linux/amd64=" + helm, "no binary named rolloutlint"},
		{"linux/amd64=" + mainBin + "," + other, "two binaries named rolloutlint"},
		{"linux/amd64=" + mainBin + ",", "empty binary path"},
		{"linux/amd64=", "want linux/ARCH=BINARY"},
		{"darwin/arm64=" + mainBin, "want linux/ARCH=BINARY"},
	} {
		out := filepath.Join(dir, "image")
		err := run(append(buildArgs(t, dir, out), c.arg), &bytes.Buffer{})
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want %q", c.arg, err, c.want)
		}
		if _, statErr := os.Stat(out); statErr == nil {
			t.Errorf("%s: an image was written", c.arg)
		}
	}
	err := run(append(buildArgs(t, dir, filepath.Join(dir, "image")), "linux/amd64="+mainBin, "linux/amd64="+mainBin), &bytes.Buffer{})
	if err == nil || !strings.Contains(err.Error(), "given twice") {
		t.Errorf("a platform given twice: %v", err)
	}
}
