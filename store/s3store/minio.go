package s3store

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/url"

	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/credentials"

	"github.com/fencebench/fencebench/store"
)

type minioStore struct {
	cfg    store.Config
	bucket string
	c      *minio.Client
}

// NewMinio returns a store.Store over github.com/minio/minio-go/v7 with retries off (MaxRetries 1
// unless cfg.MaxAttempts says otherwise) and single-part uploads.
func NewMinio(cfg store.Config) (store.Store, error) {
	c, err := MinioClient(cfg, cfg.Attempts())
	if err != nil {
		return nil, err
	}
	return &minioStore{cfg: cfg, bucket: cfg.Bucket, c: c}, nil
}

// MinioClient returns the minio-go client for cfg: its endpoint, static credentials,
// transport (dialer and trust), region and bucket addressing. maxRetries is minio-go's
// MaxRetries; 0 keeps minio-go's default.
func MinioClient(cfg store.Config, maxRetries int) (*minio.Client, error) {
	u, err := url.Parse(cfg.Endpoint)
	if err != nil || u.Host == "" {
		return nil, fmt.Errorf("store: bad endpoint %q: want a URL like http://host:port", cfg.Endpoint)
	}
	lookup := minio.BucketLookupDNS
	if cfg.PathStyle {
		lookup = minio.BucketLookupPath
	}
	c, err := minio.New(u.Host, &minio.Options{
		Creds:        credentials.NewStaticV4(cfg.AccessKey, cfg.SecretKey, cfg.SessionToken),
		Secure:       u.Scheme == "https",
		Transport:    cfg.RoundTripper(),
		Region:       cfg.RegionOrDefault(),
		BucketLookup: lookup,
		MaxRetries:   maxRetries,
	})
	if err != nil {
		return nil, fmt.Errorf("store: minio-go client: %w", err)
	}
	return c, nil
}

func (s *minioStore) classify(op, key string, err error) error {
	if err == nil {
		return nil
	}
	var er minio.ErrorResponse
	if errors.As(err, &er) && (er.StatusCode != 0 || er.Code != "") {
		return &store.Error{Op: op, Key: key, Kind: store.Classify(er.StatusCode, er.Code), Status: er.StatusCode,
			Code: er.Code, RequestID: er.RequestID, Err: err}
	}
	return store.Ambiguous(op, key, err)
}

func (s *minioStore) Get(ctx context.Context, key string) (store.Object, error) {
	ctx, cancel := context.WithTimeout(ctx, s.cfg.CallTimeout())
	defer cancel()
	obj, err := s.c.GetObject(ctx, s.bucket, key, minio.GetObjectOptions{})
	if err != nil {
		return store.Object{}, s.classify("get", key, err)
	}
	defer obj.Close()
	body, err := io.ReadAll(obj)
	if err != nil {
		return store.Object{}, s.classify("get", key, err)
	}
	st, err := obj.Stat()
	if err != nil {
		return store.Object{}, s.classify("get", key, err)
	}
	return store.Object{Body: body, ETag: store.NormalizeETag(st.ETag)}, nil
}

func (s *minioStore) put(ctx context.Context, op, key string, body []byte, opts minio.PutObjectOptions) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, s.cfg.CallTimeout())
	defer cancel()
	opts.DisableMultipart = true
	opts.ContentType = "application/octet-stream"
	info, err := s.c.PutObject(ctx, s.bucket, key, bytes.NewReader(body), int64(len(body)), opts)
	if err != nil {
		return "", s.classify(op, key, err)
	}
	return store.NormalizeETag(info.ETag), nil
}

func (s *minioStore) Put(ctx context.Context, key string, body []byte) (string, error) {
	return s.put(ctx, "put", key, body, minio.PutObjectOptions{})
}

func (s *minioStore) PutIfAbsent(ctx context.Context, key string, body []byte) (string, error) {
	var o minio.PutObjectOptions
	o.SetMatchETagExcept("*")
	return s.put(ctx, "put-if-absent", key, body, o)
}

func (s *minioStore) PutIfMatch(ctx context.Context, key string, body []byte, etag string) (string, error) {
	var o minio.PutObjectOptions
	o.SetMatchETag(store.NormalizeETag(etag)) // minio-go adds the quotes
	return s.put(ctx, "put-if-match", key, body, o)
}

func (s *minioStore) Delete(ctx context.Context, key string) error {
	ctx, cancel := context.WithTimeout(ctx, s.cfg.CallTimeout())
	defer cancel()
	return s.classify("delete", key, s.c.RemoveObject(ctx, s.bucket, key, minio.RemoveObjectOptions{}))
}

func (s *minioStore) DeleteMany(ctx context.Context, keys []string) ([]store.KeyError, error) {
	if len(keys) == 0 {
		return nil, nil
	}
	ctx, cancel := context.WithTimeout(ctx, s.cfg.CallTimeout())
	defer cancel()
	ch := make(chan minio.ObjectInfo, len(keys))
	for _, k := range keys {
		ch <- minio.ObjectInfo{Key: k}
	}
	close(ch)
	var failed []store.KeyError
	for e := range s.c.RemoveObjects(ctx, s.bucket, ch, minio.RemoveObjectsOptions{}) {
		failed = append(failed, store.KeyError{Key: e.ObjectName, Err: s.classify("delete-many", e.ObjectName, e.Err)})
	}
	if len(failed) == len(keys) && len(keys) > 0 {
		// Every key failed: if they share a non-per-key cause (transport), report the call.
		var se *store.Error
		if errors.As(failed[0].Err, &se) && se.Status == 0 && se.Code == "" {
			return failed, failed[0].Err
		}
	}
	return failed, nil
}

func (s *minioStore) List(ctx context.Context, prefix string) ([]store.Entry, error) {
	ctx, cancel := context.WithTimeout(ctx, s.cfg.CallTimeout())
	defer cancel()
	var out []store.Entry
	for o := range s.c.ListObjects(ctx, s.bucket, minio.ListObjectsOptions{Prefix: prefix, Recursive: true}) {
		if o.Err != nil {
			return nil, s.classify("list", prefix, o.Err)
		}
		out = append(out, store.Entry{Key: o.Key, ETag: store.NormalizeETag(o.ETag), Size: o.Size})
	}
	return out, nil
}
