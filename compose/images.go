package compose

import (
	"archive/tar"
	"bytes"
	"context"
	"crypto/sha256"
	"debug/elf"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/moby/moby/client"
	"github.com/testcontainers/testcontainers-go"
	tclog "github.com/testcontainers/testcontainers-go/log"

	"github.com/fencebench/fencebench/internal/guard"
)

// Images the bench builds locally, FROM scratch, with static binaries: no registry is needed.
const (
	// MinIOImage runs the pinned MinIO (see MinIOPin) as ENTRYPOINT ["/minio"].
	MinIOImage = "fencebench/minio:local"
	// ToxiproxyImage runs toxiproxy-server v2.12.0 as ENTRYPOINT ["/toxiproxy"].
	ToxiproxyImage = "fencebench/toxiproxy:local"
)

// Official images docker-compose.yml defaults to (the versions the local images are built from).
const (
	OfficialMinIOImage     = "minio/minio:RELEASE.2025-09-07T16-13-09Z"
	OfficialToxiproxyImage = "ghcr.io/shopify/toxiproxy:2.12.0"
)

// EnvToxiproxyBin names a static toxiproxy-server binary for ToxiproxyImage.
const EnvToxiproxyBin = "FENCEBENCH_TOXIPROXY_BIN"

// labelSource is the image label holding the digest of what the image was built from, so a
// cached image is rebuilt when its binary changes.
const labelSource = "org.fencebench.source"

// ImageSpec describes an image made of one static binary.
type ImageSpec struct {
	Tag        string   // e.g. MinIOImage
	Binary     string   // a statically linked executable, copied to /<Name>
	Name       string   // the executable's name in the image
	Cmd        []string // default arguments
	Expose     []string // e.g. "9000/tcp"
	Env        []string // KEY=value
	Volumes    []string // e.g. "/data"
	Entrypoint []string // "" = ["/<Name>"]
}

// MinIOImageSpec is the spec of MinIOImage for a static MinIO binary.
func MinIOImageSpec(binary string) ImageSpec {
	return ImageSpec{Tag: MinIOImage, Binary: binary, Name: "minio", Cmd: []string{"server", "/data"},
		Expose: []string{"9000/tcp", "9001/tcp"}, Env: []string{"HOME=/", "MINIO_BROWSER=off", "MINIO_UPDATE=off"},
		Volumes: []string{"/data"}}
}

// ToxiproxyImageSpec is the spec of ToxiproxyImage for a static toxiproxy-server binary.
func ToxiproxyImageSpec(binary string) ImageSpec {
	return ImageSpec{Tag: ToxiproxyImage, Binary: binary, Name: "toxiproxy", Cmd: []string{"-host=0.0.0.0"},
		Expose: []string{"8474/tcp"}}
}

func (s ImageSpec) dockerfile() []byte {
	q := func(xs []string) string {
		b, _ := json.Marshal(xs)
		return string(b)
	}
	var b strings.Builder
	b.WriteString("FROM scratch\n")
	fmt.Fprintf(&b, "COPY %s /%s\n", s.Name, s.Name)
	for _, e := range s.Env {
		k, v, _ := strings.Cut(e, "=")
		fmt.Fprintf(&b, "ENV %s=%q\n", k, v)
	}
	for _, p := range s.Expose {
		fmt.Fprintf(&b, "EXPOSE %s\n", p)
	}
	if len(s.Volumes) > 0 {
		fmt.Fprintf(&b, "VOLUME %s\n", q(s.Volumes))
	}
	ep := s.Entrypoint
	if len(ep) == 0 {
		ep = []string{"/" + s.Name}
	}
	fmt.Fprintf(&b, "ENTRYPOINT %s\n", q(ep))
	if len(s.Cmd) > 0 {
		fmt.Fprintf(&b, "CMD %s\n", q(s.Cmd))
	}
	return []byte(b.String())
}

// IsStatic reports whether the ELF executable at path is statically linked (no program
// interpreter), so it runs in a FROM scratch image.
func IsStatic(path string) (bool, error) {
	f, err := elf.Open(path)
	if err != nil {
		return false, err
	}
	defer f.Close()
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP {
			return false, nil
		}
	}
	return true, nil
}

// moduleRoot is the nearest directory at or above the working directory holding go.mod.
func moduleRoot() string {
	dir, err := os.Getwd()
	if err != nil {
		return ""
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return ""
		}
		dir = parent
	}
}

// findStatic returns the first statically linked file among candidates.
func findStatic(what, hint string, candidates ...string) (string, error) {
	var seen []string
	for _, c := range candidates {
		if c == "" {
			continue
		}
		if _, err := os.Stat(c); err != nil {
			continue
		}
		ok, err := IsStatic(c)
		if err == nil && ok {
			return c, nil
		}
		seen = append(seen, c)
	}
	msg := "no static " + what + " binary"
	if len(seen) > 0 {
		msg += " (" + strings.Join(seen, ", ") + " not statically linked)"
	}
	return "", errors.New(msg + ": " + hint)
}

// FindStaticMinIO locates a statically linked MinIO for MinIOImage: $FENCEBENCH_MINIO_BIN,
// .cache/bin/minio or .cache/static/minio under the module root, the first that is static.
func FindStaticMinIO() (string, error) {
	root := moduleRoot()
	var c []string
	c = append(c, os.Getenv(EnvMinIOBin))
	if root != "" {
		c = append(c, filepath.Join(root, ".cache", "bin", "minio"), filepath.Join(root, ".cache", "static", "minio"))
	}
	return findStatic("MinIO", "run `make minio` (it builds with CGO_ENABLED=0) or `CGO_ENABLED=0 GOBIN=$PWD/.cache/static go install "+MinIOPin+"`", c...)
}

// FindStaticToxiproxy locates a statically linked toxiproxy-server for ToxiproxyImage:
// $FENCEBENCH_TOXIPROXY_BIN or .cache/static/toxiproxy under the module root.
func FindStaticToxiproxy() (string, error) {
	var c []string
	c = append(c, os.Getenv(EnvToxiproxyBin))
	if root := moduleRoot(); root != "" {
		c = append(c, filepath.Join(root, ".cache", "static", "toxiproxy"))
	}
	return findStatic("toxiproxy-server", "run `make images` (it builds github.com/Shopify/toxiproxy/v2/cmd/server@v2.12.0 with CGO_ENABLED=0)", c...)
}

// testcontainers announces the engine and every container step on its default logger
// (stderr); the bench reports what matters itself, and passes its own logger per container.
func init() { tclog.SetDefault(tclog.NewNoopLogger()) }

// dockerClient connects to the Docker engine testcontainers would use (DOCKER_HOST, the
// testcontainers properties, or the default socket).
func dockerClient(ctx context.Context) (*testcontainers.DockerClient, error) {
	return testcontainers.NewDockerClientWithOpts(ctx)
}

// DockerAvailable returns nil when a Docker engine answers, and otherwise an error saying why.
func DockerAvailable(ctx context.Context) error {
	cli, err := dockerClient(ctx)
	if err != nil {
		return fmt.Errorf("compose: no Docker engine: %w", err)
	}
	defer cli.Close()
	if _, err := cli.Ping(ctx, client.PingOptions{}); err != nil {
		return fmt.Errorf("compose: the Docker engine does not answer: %w", err)
	}
	return nil
}

// ImageExists reports whether the Docker engine has an image tagged tag.
func ImageExists(ctx context.Context, tag string) bool {
	cli, err := dockerClient(ctx)
	if err != nil {
		return false
	}
	defer cli.Close()
	_, err = cli.ImageInspect(ctx, tag)
	return err == nil
}

// EnsureImage builds spec.Tag FROM scratch with spec.Binary, unless an image with that tag
// built from the same binary and Dockerfile already exists (so repeated runs are fast).
func EnsureImage(ctx context.Context, spec ImageSpec) error {
	if ok, err := IsStatic(spec.Binary); err != nil {
		return fmt.Errorf("compose: %s: %w", spec.Binary, err)
	} else if !ok {
		return fmt.Errorf("compose: %s is not statically linked; a FROM scratch image needs CGO_ENABLED=0", spec.Binary)
	}
	df := spec.dockerfile()
	f, err := os.Open(spec.Binary)
	if err != nil {
		return err
	}
	defer f.Close()
	h := sha256.New()
	h.Write(df)
	size, err := io.Copy(h, f)
	if err != nil {
		return fmt.Errorf("compose: read %s: %w", spec.Binary, err)
	}
	digest := hex.EncodeToString(h.Sum(nil))

	cli, err := dockerClient(ctx)
	if err != nil {
		return fmt.Errorf("compose: no Docker engine: %w", err)
	}
	defer cli.Close()
	if img, err := cli.ImageInspect(ctx, spec.Tag); err == nil && img.Config != nil && img.Config.Labels[labelSource] == digest {
		return nil
	}

	if _, err := f.Seek(0, io.SeekStart); err != nil {
		return err
	}
	pr, pw := io.Pipe()
	guard.Go(ctx, "the image build context writer", func() { writeBuildContext(pw, df, spec.Name, size, f) })
	res, err := cli.ImageBuild(ctx, pr, client.ImageBuildOptions{Tags: []string{spec.Tag}, Dockerfile: "Dockerfile",
		Labels: map[string]string{labelSource: digest}, Remove: true, ForceRemove: true})
	if err != nil {
		_ = pr.CloseWithError(err)
		return fmt.Errorf("compose: build %s: %w", spec.Tag, err)
	}
	defer res.Body.Close()
	out, err := readBuildOutput(res.Body, spec.Tag)
	if err != nil {
		return err
	}
	img, err := cli.ImageInspect(ctx, spec.Tag)
	if err != nil || img.Config == nil || img.Config.Labels[labelSource] != digest {
		return fmt.Errorf("compose: build %s: the image is missing afterwards (%v)\n%s", spec.Tag, err, out)
	}
	return nil
}

// writeBuildContext writes the image build context, the Dockerfile df and the binary bin
// (size bytes) as name, to pw as a tar stream, and closes pw with the first error.
func writeBuildContext(pw *io.PipeWriter, df []byte, name string, size int64, bin io.Reader) {
	tw := tar.NewWriter(pw)
	err := tw.WriteHeader(&tar.Header{Name: "Dockerfile", Mode: 0o644, Size: int64(len(df))})
	if err == nil {
		_, err = tw.Write(df)
	}
	if err == nil {
		err = tw.WriteHeader(&tar.Header{Name: name, Mode: 0o755, Size: size})
	}
	if err == nil {
		_, err = io.Copy(tw, bin)
	}
	if err == nil {
		err = tw.Close()
	}
	pw.CloseWithError(err)
}

// readBuildOutput reads an image build's JSON message stream to its end and returns the
// build's output; a build error is returned with the output so far.
func readBuildOutput(body io.Reader, tag string) (string, error) {
	var out bytes.Buffer
	dec := json.NewDecoder(body)
	for {
		var m struct {
			Stream      string `json:"stream"`
			Error       string `json:"error"`
			ErrorDetail struct {
				Message string `json:"message"`
			} `json:"errorDetail"`
		}
		if err := dec.Decode(&m); err == io.EOF {
			break
		} else if err != nil {
			return "", fmt.Errorf("compose: build %s: %w", tag, err)
		}
		out.WriteString(m.Stream)
		if m.Error != "" {
			return "", fmt.Errorf("compose: build %s: %s\n%s", tag, m.Error, out.String())
		}
	}
	return out.String(), nil
}
