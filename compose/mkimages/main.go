// Command mkimages builds the FROM scratch images of the containers stack and of
// docker-compose.yml where no registry is reachable: fencebench/minio:local from the static
// MinIO binary and fencebench/toxiproxy:local from a static toxiproxy-server (see
// compose.FindStaticMinIO and compose.FindStaticToxiproxy). An image already built from the
// same binary is kept. `make images` runs it.
package main

import (
	"context"
	"fmt"
	"os"
	"time"

	"github.com/fencebench/fencebench/compose"
)

func main() {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	if err := build(ctx); err != nil {
		fmt.Fprintln(os.Stderr, "mkimages:", err)
		os.Exit(1)
	}
}

func build(ctx context.Context) error {
	if err := compose.DockerAvailable(ctx); err != nil {
		return err
	}
	minio, err := compose.FindStaticMinIO()
	if err != nil {
		return err
	}
	toxiproxy, err := compose.FindStaticToxiproxy()
	if err != nil {
		return err
	}
	for _, spec := range []compose.ImageSpec{compose.MinIOImageSpec(minio), compose.ToxiproxyImageSpec(toxiproxy)} {
		if err := compose.EnsureImage(ctx, spec); err != nil {
			return err
		}
		fmt.Printf("%s (from %s)\n", spec.Tag, spec.Binary)
	}
	return nil
}
