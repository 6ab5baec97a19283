package compose

import (
	"context"
	"fmt"
	"net/url"
	"time"

	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/credentials"

	"github.com/fencebench/fencebench/store"
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
	lookup := minio.BucketLookupDNS
	if cfg.PathStyle {
		lookup = minio.BucketLookupPath
	}
	c, err := minio.New(u.Host, &minio.Options{
		Creds:        credentials.NewStaticV4(cfg.AccessKey, cfg.SecretKey, cfg.SessionToken),
		Secure:       u.Scheme == "https",
		Region:       region,
		BucketLookup: lookup,
		Transport:    cfg.HTTPClient(30 * time.Second).Transport,
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
	if err := c.MakeBucket(ctx, cfg.Bucket, minio.MakeBucketOptions{Region: region}); err != nil {
		return fmt.Errorf("compose: make bucket %s: %w", cfg.Bucket, err)
	}
	return nil
}
