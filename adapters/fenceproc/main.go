// Command fenceproc is one node of the bench's own fencing protocol (package fence with the
// write log of adapters/fencelog) as a separate process speaking the bench's process
// protocol (package system) on stdin and stdout. --variant runs a broken protocol variant
// through the same boundary; its diagnostics go to stderr.
//
//	fencebench run --system "go run ./adapters/fenceproc --variant no-sweep" paused-primary
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/fencebench/fencebench/adapters/fencelog"
	"github.com/fencebench/fencebench/fence"
	"github.com/fencebench/fencebench/store"
	"github.com/fencebench/fencebench/system"
)

func main() {
	variant := flag.String("variant", string(fence.Correct), "protocol variant (fencebench list)")
	client := flag.String("client", string(store.ClientMinio), "S3 client: minio-go or aws-sdk")
	flag.Parse()
	v, err := fence.LookupVariant(*variant)
	if err != nil {
		fmt.Fprintln(os.Stderr, "fenceproc:", err)
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	defer stop()
	if err := system.Serve(ctx, os.Stdin, os.Stdout, fencelog.System{Variant: v, Client: store.Client(*client)}); err != nil {
		fmt.Fprintln(os.Stderr, "fenceproc:", err)
		os.Exit(1)
	}
}
