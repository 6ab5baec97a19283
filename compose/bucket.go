package compose

import (
	"context"
	"fmt"

	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/credentials"
	"net/url"

	"github.com/fencebench/fencebench/store"
)

// MakeBucket creates cfg.Bucket if it does not exist yet.
func MakeBucket(ctx context.Context, cfg store.Config) error {
	u, err := url.Parse(cfg.Endpoint)
	if err != nil {
		return fmt.Errorf("compose: endpoint %q: %w", cfg.Endpoint, err)
	}
	c, err := minio.New(u.Host, &minio.Options{
		Creds:     credentials.NewStaticV4(cfg.AccessKey, cfg.SecretKey, ""),
		Secure:    u.Scheme == "https",
		Region:    "us-east-1",
		Transport: store.NewTransport(nil),
	})
	if err != nil {
		return fmt.Errorf("compose: client: %w", err)
	}
	ok, err := c.BucketExists(ctx, cfg.Bucket)
	if err != nil {
		return fmt.Errorf("compose: bucket %s: %w", cfg.Bucket, err)
	}
	if ok {
		return nil
	}
	if err := c.MakeBucket(ctx, cfg.Bucket, minio.MakeBucketOptions{Region: "us-east-1"}); err != nil {
		return fmt.Errorf("compose: make bucket %s: %w", cfg.Bucket, err)
	}
	return nil
}
