// Command litestream-lease is one node of a system nobody here wrote: Litestream's S3 lease
// (github.com/benbjohnson/litestream/s3, Leaser: a lock object written with If-None-Match or
// If-Match on its ETag, a generation and a TTL) with the smallest write-ahead log a user of
// that lease would put on top, speaking the bench's process protocol (package system).
//
// The node elects itself: it tries to acquire the lease every --poll, renews it every TTL/3
// while it holds it, and reports owner at the lease's generation when it wins it. A write is
// accepted only while the node holds an unexpired lease (by its own clock); it then appends
// the op to the log as wal/<position> (position: one past the last entry it knows of, read
// from a listing when it won the lease) and acknowledges at the lease's generation. The data
// writes carry no fencing check: a write that stalls past the TTL lands after a successor took
// the lease and read the log's tail, so the old and the new owner write the same position and
// whichever lands last erases the other's acknowledged op.
//
// A read lists wal/ and returns every op id of every entry.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	awss3 "github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/benbjohnson/litestream"
	lss3 "github.com/benbjohnson/litestream/s3"

	"github.com/fencebench/fencebench/system"
)

var (
	ttl  = flag.Duration("ttl", 2*time.Second, "the lease's TTL")
	poll = flag.Duration("poll", 100*time.Millisecond, "how often a node without the lease tries to acquire it")
)

func main() {
	flag.Parse()
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	defer stop()
	if err := system.Serve(ctx, os.Stdin, os.Stdout, sys{}); err != nil {
		fmt.Fprintln(os.Stderr, "litestream-lease:", err)
		os.Exit(1)
	}
}

type sys struct{}

func (sys) Start(ctx context.Context, cfg system.Config, emit func(system.Event)) (system.Node, system.Hello, error) {
	client := awss3.New(awss3.Options{
		Region:           cfg.Region,
		BaseEndpoint:     aws.String(cfg.Endpoint),
		UsePathStyle:     true,
		Credentials:      credentials.NewStaticCredentialsProvider(cfg.AccessKey, cfg.SecretKey, ""),
		RetryMaxAttempts: 1,
		HTTPClient:       &httpClient{},
	})
	l := lss3.NewLeaser()
	l.SetClient(client)
	l.SetLogger(slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelDebug})))
	l.Bucket, l.Path, l.TTL, l.Owner = cfg.Bucket, strings.TrimSuffix(cfg.Prefix, "/"), *ttl, cfg.Node
	n := &node{s3: client, leaser: l, bucket: cfg.Bucket, wal: cfg.Prefix + "wal/", emit: emit}
	go n.elect(ctx)
	return n, system.Hello{Name: "litestream-s3-lease", Version: "litestream v0.5.18",
		Capabilities: []string{system.CapSelfElect, system.CapTerms, system.CapRead}}, nil
}

type node struct {
	s3     *awss3.Client
	leaser *lss3.Leaser
	bucket string
	wal    string
	emit   func(system.Event)

	mu    sync.Mutex
	lease *litestream.Lease
	next  int64 // the next log position
}

func (n *node) held() *litestream.Lease {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.lease != nil && time.Now().Before(n.lease.ExpiresAt) {
		return n.lease
	}
	return nil
}

// elect acquires the lease when it is free and renews it while held.
func (n *node) elect(ctx context.Context) {
	for ctx.Err() == nil {
		n.mu.Lock()
		cur := n.lease
		n.mu.Unlock()
		if cur == nil || time.Now().After(cur.ExpiresAt) {
			cctx, cancel := context.WithTimeout(ctx, 2*time.Second)
			lease, err := n.leaser.AcquireLease(cctx)
			var next int64
			if err == nil {
				next, err = n.tail(cctx)
			}
			cancel()
			if err == nil {
				n.mu.Lock()
				n.lease, n.next = lease, next
				n.mu.Unlock()
				n.emit(system.Event{Event: system.EventOwner, Term: lease.Generation})
			}
			time.Sleep(*poll)
			continue
		}
		time.Sleep(*ttl / 3)
		cctx, cancel := context.WithTimeout(ctx, 2*time.Second)
		lease, err := n.leaser.RenewLease(cctx, cur)
		cancel()
		n.mu.Lock()
		switch {
		case err == nil:
			n.lease = lease
		case errors.Is(err, litestream.ErrLeaseNotHeld):
			n.lease = nil
		}
		n.mu.Unlock()
	}
}

func (n *node) entries(ctx context.Context) ([]string, error) {
	var keys []string
	p := awss3.NewListObjectsV2Paginator(n.s3, &awss3.ListObjectsV2Input{Bucket: aws.String(n.bucket), Prefix: aws.String(n.wal)})
	for p.HasMorePages() {
		page, err := p.NextPage(ctx)
		if err != nil {
			return nil, err
		}
		for _, o := range page.Contents {
			keys = append(keys, aws.ToString(o.Key))
		}
	}
	sort.Strings(keys)
	return keys, nil
}

// tail is one past the last log position.
func (n *node) tail(ctx context.Context) (int64, error) {
	keys, err := n.entries(ctx)
	if err != nil || len(keys) == 0 {
		return 0, err
	}
	return strconv.ParseInt(strings.TrimPrefix(keys[len(keys)-1], n.wal), 10, 64)
}

func (n *node) Write(ctx context.Context, op int64, _ string) (int64, error) {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.lease == nil || !time.Now().Before(n.lease.ExpiresAt) {
		return 0, &system.Error{Code: system.CodeNotOwner, Text: "no lease"}
	}
	gen := n.lease.Generation
	n.next++
	key := fmt.Sprintf("%s%016d", n.wal, n.next)
	_, err := n.s3.PutObject(ctx, &awss3.PutObjectInput{Bucket: aws.String(n.bucket), Key: aws.String(key),
		Body: strings.NewReader(strconv.FormatInt(op, 10))})
	if err != nil {
		return 0, &system.Error{Code: system.CodeUnknown, Text: err.Error()}
	}
	return gen, nil
}

func (n *node) Promote(context.Context, int64) error {
	return &system.Error{Code: system.CodeUnsupported, Text: "the lease elects its owner"}
}

func (n *node) Read(ctx context.Context, _ int64) ([]int64, error) {
	keys, err := n.entries(ctx)
	if err != nil {
		return nil, err
	}
	var ops []int64
	for _, k := range keys {
		o, err := n.s3.GetObject(ctx, &awss3.GetObjectInput{Bucket: aws.String(n.bucket), Key: aws.String(k)})
		if err != nil {
			return nil, err
		}
		b, err := io.ReadAll(o.Body)
		o.Body.Close()
		if err != nil {
			return nil, err
		}
		op, err := strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", k, err)
		}
		ops = append(ops, op)
	}
	return ops, nil
}
