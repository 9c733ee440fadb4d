// The image assembler of the release (scripts/release.sh). A module of its
// own so that go-containerregistry stays out of the module that users build
// (`go install`, the pre-commit golang hook).
module github.com/rolloutlint/rolloutlint/tools/ociimage

go 1.26.7

require github.com/google/go-containerregistry v0.22.1

require (
	github.com/klauspost/compress v1.19.2 // indirect
	github.com/opencontainers/go-digest v1.0.0 // indirect
	github.com/opencontainers/image-spec v1.1.1 // indirect
	golang.org/x/sync v0.22.0 // indirect
)
