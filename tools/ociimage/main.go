// Command ociimage assembles the rolloutlint container image as an OCI image
// layout, offline: no Docker daemon and no base image pulled from a registry.
//
// The image is two layers on nothing: a base layer made here (the /etc/passwd
// and /etc/group entries of a non-root user 65532, as distroless/static has
// them, the CA certificates of the build machine, a /tmp and a home
// directory), and the static binaries in /usr/bin: rolloutlint, the
// entrypoint, and its Helm companion rolloutlint-helm, which rolloutlint finds
// beside itself. Every file has a fixed owner and the given creation time, so
// the same inputs give the same digests.
//
//	ociimage build -out DIR -version v0.1.0 -revision SHA -created RFC3339 \
//	    -ca-certs /etc/ssl/certs/ca-certificates.crt -license LICENSE \
//	    linux/amd64=dist/…/rolloutlint,dist/…/rolloutlint-helm linux/arm64=…
//	ociimage inspect DIR           # JSON: per platform, digest, config, layer files
//	ociimage export DIR PLATFORM DEST   # the flattened root filesystem
//
// A release pushes the layout with `crane push DIR REF` (scripts/release.sh).
package main

import (
	"archive/tar"
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

// The user the image runs as: distroless's "nonroot".
const (
	uid      = 65532
	userName = "nonroot"
	home     = "/home/nonroot"
	certPath = "/etc/ssl/certs/ca-certificates.crt"
	source   = "https://github.com/rolloutlint/rolloutlint"
)

// The binaries go to binDir under their own names; entrypoint is the one the
// image runs, which every OS/ARCH=BINARY[,BINARY…] argument must include.
const (
	binDir     = "/usr/bin"
	entrypoint = "rolloutlint"
	binPath    = binDir + "/" + entrypoint
)

func main() {
	if err := run(os.Args[1:], os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "ociimage:", err)
		os.Exit(1)
	}
}

func run(args []string, stdout io.Writer) error {
	if len(args) == 0 {
		return errors.New("usage: ociimage build|inspect|export …")
	}
	switch args[0] {
	case "build":
		return buildCmd(args[1:])
	case "inspect":
		if len(args) != 2 {
			return errors.New("usage: ociimage inspect DIR")
		}
		return inspect(args[1], stdout)
	case "export":
		if len(args) != 4 {
			return errors.New("usage: ociimage export DIR PLATFORM DEST")
		}
		return export(args[1], args[2], args[3])
	}
	return fmt.Errorf("unknown command %q (build, inspect, export)", args[0])
}

// options is what one image build needs.
type options struct {
	out, version, revision, caCerts, license string
	created                                  time.Time
	binaries                                 map[string][]string // "linux/amd64" -> paths, installed in /usr/bin under their names
}

func buildCmd(args []string) error {
	fs := flag.NewFlagSet("build", flag.ContinueOnError)
	var o options
	var created string
	fs.StringVar(&o.out, "out", "", "OCI layout directory to write (must not exist)")
	fs.StringVar(&o.version, "version", "", "image version label, e.g. v0.1.0")
	fs.StringVar(&o.revision, "revision", "", "git commit label")
	fs.StringVar(&created, "created", "", "creation time, RFC 3339 (use the commit time: reproducible)")
	fs.StringVar(&o.caCerts, "ca-certs", certPath, "PEM bundle copied to "+certPath)
	fs.StringVar(&o.license, "license", "LICENSE", "license file copied to /usr/share/doc/rolloutlint/LICENSE")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if o.out == "" || o.version == "" || created == "" || fs.NArg() == 0 {
		return errors.New("build needs -out, -version, -created and at least one OS/ARCH=BINARY[,BINARY…]")
	}
	t, err := time.Parse(time.RFC3339, created)
	if err != nil {
		return fmt.Errorf("-created: %w", err)
	}
	o.created = t.UTC()
	o.binaries = map[string][]string{}
	for _, a := range fs.Args() {
		p, list, ok := strings.Cut(a, "=")
		if !ok || !strings.HasPrefix(p, "linux/") || list == "" {
			return fmt.Errorf("%q: want linux/ARCH=BINARY[,BINARY…]", a)
		}
		if _, dup := o.binaries[p]; dup {
			return fmt.Errorf("%q: %s is given twice", a, p)
		}
		bins := strings.Split(list, ",")
		if err := checkBinaries(bins); err != nil {
			return fmt.Errorf("%q: %w", a, err)
		}
		o.binaries[p] = bins
	}
	return build(o)
}

// checkBinaries refuses a platform's binary list that lacks the entrypoint
// or would put two files at one /usr/bin path.
func checkBinaries(bins []string) error {
	seen := map[string]bool{}
	for _, b := range bins {
		name := filepath.Base(b)
		if b == "" || name == "." || name == "/" {
			return errors.New("empty binary path")
		}
		if seen[name] {
			return fmt.Errorf("two binaries named %s", name)
		}
		seen[name] = true
	}
	if !seen[entrypoint] {
		return fmt.Errorf("no binary named %s, the entrypoint", entrypoint)
	}
	return nil
}

// build writes the OCI layout: index.json names one image index, tagged with
// the version, that holds one image per platform.
func build(o options) error {
	if _, err := os.Stat(o.out); err == nil {
		return fmt.Errorf("%s exists", o.out)
	}
	certs, err := os.ReadFile(o.caCerts)
	if err != nil {
		return fmt.Errorf("CA certificates: %w", err)
	}
	license, err := os.ReadFile(o.license)
	if err != nil {
		return fmt.Errorf("license: %w", err)
	}
	base, err := layer(baseFiles(certs, license), o.created)
	if err != nil {
		return fmt.Errorf("base layer: %w", err)
	}
	platforms := make([]string, 0, len(o.binaries))
	for p := range o.binaries {
		platforms = append(platforms, p)
	}
	sort.Strings(platforms)

	idx := mutate.IndexMediaType(empty.Index, types.OCIImageIndex)
	for _, p := range platforms {
		img, err := platformImage(o, p, base)
		if err != nil {
			return fmt.Errorf("%s: %w", p, err)
		}
		plat, err := v1.ParsePlatform(p)
		if err != nil {
			return err
		}
		idx = mutate.AppendManifests(idx, mutate.IndexAddendum{Add: img, Descriptor: v1.Descriptor{Platform: plat}})
	}
	idx = mutate.Annotations(idx, labels(o)).(v1.ImageIndex)

	tmp := o.out + ".tmp"
	_ = os.RemoveAll(tmp)
	lp, err := layout.Write(tmp, empty.Index)
	if err != nil {
		return err
	}
	if err := lp.AppendIndex(idx, layout.WithAnnotations(map[string]string{
		"org.opencontainers.image.ref.name": o.version,
	})); err != nil {
		return err
	}
	return os.Rename(tmp, o.out) // the layout appears whole or not at all
}

func platformImage(o options, platform string, base v1.Layer) (v1.Image, error) {
	// Sorted by name: the layer's bytes do not depend on the argument order.
	bins := append([]string(nil), o.binaries[platform]...)
	sort.Slice(bins, func(i, j int) bool { return filepath.Base(bins[i]) < filepath.Base(bins[j]) })
	files := []file{{path: "/usr", dir: true}, {path: binDir, dir: true}}
	paths := make([]string, 0, len(bins))
	for _, b := range bins {
		data, err := os.ReadFile(b)
		if err != nil {
			return nil, fmt.Errorf("binary: %w", err)
		}
		p := binDir + "/" + filepath.Base(b)
		files = append(files, file{path: p, mode: 0o755, data: data})
		paths = append(paths, p)
	}
	app, err := layer(files, o.created)
	if err != nil {
		return nil, err
	}
	img := mutate.MediaType(empty.Image, types.OCIManifestSchema1)
	img = mutate.ConfigMediaType(img, types.OCIConfigJSON)
	img, err = mutate.Append(img,
		mutate.Addendum{Layer: base, MediaType: types.OCILayer, History: v1.History{
			Created: v1.Time{Time: o.created}, CreatedBy: "ociimage: passwd/group (nonroot 65532), CA certificates, /tmp, " + home,
		}},
		mutate.Addendum{Layer: app, MediaType: types.OCILayer, History: v1.History{
			Created: v1.Time{Time: o.created}, CreatedBy: "ociimage: " + strings.Join(paths, " ") + " " + o.version,
		}},
	)
	if err != nil {
		return nil, err
	}
	cf, err := img.ConfigFile()
	if err != nil {
		return nil, err
	}
	plat, err := v1.ParsePlatform(platform)
	if err != nil {
		return nil, err
	}
	cf = cf.DeepCopy()
	cf.OS, cf.Architecture, cf.Variant = plat.OS, plat.Architecture, plat.Variant
	cf.Created = v1.Time{Time: o.created}
	cf.Config = v1.Config{
		User:       fmt.Sprintf("%d:%d", uid, uid),
		Entrypoint: []string{binPath},
		WorkingDir: home,
		Env: []string{
			"PATH=/usr/bin:/bin",
			"SSL_CERT_FILE=" + certPath,
			"HOME=" + home,
		},
		Labels: labels(o),
	}
	return mutate.ConfigFile(img, cf)
}

func labels(o options) map[string]string {
	l := map[string]string{
		"org.opencontainers.image.title":    "rolloutlint",
		"org.opencontainers.image.source":   source,
		"org.opencontainers.image.version":  o.version,
		"org.opencontainers.image.licenses": "Apache-2.0",
		"org.opencontainers.image.created":  o.created.Format(time.RFC3339),
	}
	if o.revision != "" {
		l["org.opencontainers.image.revision"] = o.revision
	}
	return l
}

// file is one entry of a layer.
type file struct {
	path  string
	dir   bool
	mode  int64
	owner int
	data  []byte
}

// baseFiles is what a static Go binary needs from an OS image: a user to run
// as, CA certificates for HTTPS (Prometheus, the Kubernetes API), a /tmp.
// No shell, no package manager; time zones are not needed (rolloutlint
// prints UTC).
func baseFiles(certs, license []byte) []file {
	passwd := fmt.Sprintf("root:x:0:0:root:/root:/sbin/nologin\n%s:x:%d:%d:%s:%s:/sbin/nologin\n", userName, uid, uid, userName, home)
	group := fmt.Sprintf("root:x:0:\n%s:x:%d:\n", userName, uid)
	return []file{
		{path: "/etc", dir: true},
		{path: "/etc/passwd", mode: 0o644, data: []byte(passwd)},
		{path: "/etc/group", mode: 0o644, data: []byte(group)},
		{path: "/etc/nsswitch.conf", mode: 0o644, data: []byte("hosts: files dns\n")},
		{path: "/etc/ssl", dir: true},
		{path: "/etc/ssl/certs", dir: true},
		{path: certPath, mode: 0o644, data: certs},
		{path: "/home", dir: true},
		{path: home, dir: true, mode: 0o700, owner: uid},
		{path: "/root", dir: true, mode: 0o700},
		{path: "/tmp", dir: true, mode: 0o1777},
		{path: "/usr", dir: true},
		{path: "/usr/share", dir: true},
		{path: "/usr/share/doc", dir: true},
		{path: "/usr/share/doc/rolloutlint", dir: true},
		{path: "/usr/share/doc/rolloutlint/LICENSE", mode: 0o644, data: license},
	}
}

// layer makes a gzip-compressed OCI layer of files, in the order given.
func layer(files []file, mtime time.Time) (v1.Layer, error) {
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	for _, f := range files {
		h := &tar.Header{
			Name: strings.TrimPrefix(f.path, "/"), ModTime: mtime, Uid: f.owner, Gid: f.owner,
			Format: tar.FormatPAX, Mode: f.mode,
		}
		switch {
		case f.dir:
			h.Typeflag, h.Name = tar.TypeDir, h.Name+"/"
			if h.Mode == 0 {
				h.Mode = 0o755
			}
		default:
			h.Typeflag, h.Size = tar.TypeReg, int64(len(f.data))
		}
		if err := tw.WriteHeader(h); err != nil {
			return nil, err
		}
		if _, err := tw.Write(f.data); err != nil {
			return nil, err
		}
	}
	if err := tw.Close(); err != nil {
		return nil, err
	}
	b := buf.Bytes()
	return tarball.LayerFromOpener(func() (io.ReadCloser, error) {
		return io.NopCloser(bytes.NewReader(b)), nil
	}, tarball.WithMediaType(types.OCILayer))
}

// image finds the image for platform in the layout at dir.
func image(dir, platform string) (v1.Image, error) {
	ii, err := topIndex(dir)
	if err != nil {
		return nil, err
	}
	m, err := ii.IndexManifest()
	if err != nil {
		return nil, err
	}
	for _, d := range m.Manifests {
		if d.Platform != nil && d.Platform.String() == platform {
			return ii.Image(d.Digest)
		}
	}
	return nil, fmt.Errorf("%s has no image for %s", dir, platform)
}

// topIndex is the one image index index.json names.
func topIndex(dir string) (v1.ImageIndex, error) {
	lp, err := layout.ImageIndexFromPath(dir)
	if err != nil {
		return nil, err
	}
	m, err := lp.IndexManifest()
	if err != nil {
		return nil, err
	}
	if len(m.Manifests) != 1 || !m.Manifests[0].MediaType.IsIndex() {
		return nil, fmt.Errorf("%s: index.json should name exactly one image index", dir)
	}
	return lp.ImageIndex(m.Manifests[0].Digest)
}

// inspection is what `ociimage inspect` prints for each platform.
type inspection struct {
	Platform string    `json:"platform"`
	Digest   string    `json:"digest"`
	Config   v1.Config `json:"config"`
	Created  string    `json:"created"`
	Layers   []string  `json:"layers"`
}

func inspect(dir string, w io.Writer) error {
	ii, err := topIndex(dir)
	if err != nil {
		return err
	}
	m, err := ii.IndexManifest()
	if err != nil {
		return err
	}
	var out []inspection
	for _, d := range m.Manifests {
		img, err := ii.Image(d.Digest)
		if err != nil {
			return err
		}
		cf, err := img.ConfigFile()
		if err != nil {
			return err
		}
		in := inspection{Platform: d.Platform.String(), Digest: d.Digest.String(), Config: cf.Config,
			Created: cf.Created.UTC().Format(time.RFC3339)}
		ls, err := img.Layers()
		if err != nil {
			return err
		}
		for _, l := range ls {
			dg, err := l.Digest()
			if err != nil {
				return err
			}
			in.Layers = append(in.Layers, dg.String())
		}
		out = append(out, in)
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(out)
}

// export writes the flattened filesystem of the platform's image to dest,
// with the owners and modes of the layers (as root), for a chroot test.
func export(dir, platform, dest string) error {
	img, err := image(dir, platform)
	if err != nil {
		return err
	}
	rc := mutate.Extract(img)
	defer func() { _ = rc.Close() }()
	tr := tar.NewReader(rc)
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
		name := filepath.Clean("/" + h.Name)
		target := filepath.Join(dest, name)
		switch h.Typeflag {
		case tar.TypeDir:
			if err := os.MkdirAll(target, 0o755); err != nil {
				return err
			}
		case tar.TypeReg:
			if err := os.MkdirAll(filepath.Dir(target), 0o755); err != nil {
				return err
			}
			f, err := os.OpenFile(target, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o600)
			if err != nil {
				return err
			}
			if _, err := io.Copy(f, tr); err != nil {
				_ = f.Close()
				return err
			}
			if err := f.Close(); err != nil {
				return err
			}
		default:
			return fmt.Errorf("%s: unexpected entry type %c", h.Name, h.Typeflag)
		}
		if err := os.Chmod(target, os.FileMode(h.Mode&0o777)|modeBits(h.Mode)); err != nil {
			return err
		}
		if os.Geteuid() == 0 {
			if err := os.Lchown(target, h.Uid, h.Gid); err != nil {
				return err
			}
		}
	}
}

// modeBits converts the tar header's setuid/setgid/sticky bits.
func modeBits(m int64) os.FileMode {
	var fm os.FileMode
	if m&0o4000 != 0 {
		fm |= os.ModeSetuid
	}
	if m&0o2000 != 0 {
		fm |= os.ModeSetgid
	}
	if m&0o1000 != 0 {
		fm |= os.ModeSticky
	}
	return fm
}
