package compose

import (
	"context"
	"fmt"
	"net/url"

	"github.com/minio/minio-go/v7"

	"github.com/fencebench/fencebench/store"
	"github.com/fencebench/fencebench/store/s3store"
)

// MakeBucket creates cfg.Bucket if it does not exist yet, trusting what cfg trusts.
func MakeBucket(ctx context.Context, cfg store.Config) error {
	u, err := url.Parse(cfg.Endpoint)
	if err != nil || u.Host == "" {
		return fmt.Errorf("compose: endpoint is not a URL like http://host:port")
	}
	region := cfg.Region
	if region == "" {
		region = "us-east-1"
	}
	c, err := s3store.MinioClient(cfg, 0)
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
	if err := c.MakeBucket(ctx, cfg.Bucket, minio.MakeBucketOptions{Region: region}); err != nil {
		return fmt.Errorf("compose: make bucket %s: %w", cfg.Bucket, err)
	}
	return nil
}
