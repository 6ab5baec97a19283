package s3store

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"

	"github.com/aws/aws-sdk-go-v2/aws"
	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
	"github.com/aws/smithy-go"

	"github.com/fencebench/fencebench/store"
)

type awsStore struct {
	cfg store.Config
	c   *s3.Client
}

// NewAWS returns a store.Store over github.com/aws/aws-sdk-go-v2/service/s3 with retries off
// (RetryMaxAttempts 1 unless cfg.MaxAttempts says otherwise), checksums only when required and
// no Expect: 100-continue.
func NewAWS(cfg store.Config) (store.Store, error) {
	u, err := url.Parse(cfg.Endpoint)
	if err != nil || u.Host == "" {
		return nil, fmt.Errorf("store: bad endpoint %q: want a URL like http://host:port", cfg.Endpoint)
	}
	c := s3.New(s3.Options{
		Region:                       cfg.RegionOrDefault(),
		BaseEndpoint:                 aws.String(cfg.Endpoint),
		UsePathStyle:                 cfg.PathStyle,
		Credentials:                  credentials.NewStaticCredentialsProvider(cfg.AccessKey, cfg.SecretKey, cfg.SessionToken),
		HTTPClient:                   &http.Client{Transport: cfg.RoundTripper()},
		RetryMaxAttempts:             cfg.Attempts(),
		RequestChecksumCalculation:   aws.RequestChecksumCalculationWhenRequired,
		ResponseChecksumValidation:   aws.ResponseChecksumValidationWhenRequired,
		ContinueHeaderThresholdBytes: -1,
	})
	return &awsStore{cfg: cfg, c: c}, nil
}

func (s *awsStore) classify(op, key string, err error) error {
	if err == nil {
		return nil
	}
	e := &store.Error{Op: op, Key: key, Err: err}
	var re *awshttp.ResponseError
	if errors.As(err, &re) {
		e.Status = re.HTTPStatusCode()
		e.RequestID = re.ServiceRequestID()
	}
	var ae smithy.APIError
	if errors.As(err, &ae) {
		e.Code = ae.ErrorCode()
	}
	if e.Status == 0 && e.Code == "" {
		return store.Ambiguous(op, key, err)
	}
	e.Kind = store.Classify(e.Status, e.Code)
	return e
}

func (s *awsStore) Get(ctx context.Context, key string) (store.Object, error) {
	ctx, cancel := context.WithTimeout(ctx, s.cfg.CallTimeout())
	defer cancel()
	out, err := s.c.GetObject(ctx, &s3.GetObjectInput{Bucket: &s.cfg.Bucket, Key: &key})
	if err != nil {
		return store.Object{}, s.classify("get", key, err)
	}
	defer out.Body.Close()
	body, err := io.ReadAll(out.Body)
	if err != nil {
		return store.Object{}, s.classify("get", key, err)
	}
	return store.Object{Body: body, ETag: store.NormalizeETag(aws.ToString(out.ETag))}, nil
}

func (s *awsStore) put(ctx context.Context, op, key string, body []byte, ifMatch, ifNoneMatch *string) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, s.cfg.CallTimeout())
	defer cancel()
	out, err := s.c.PutObject(ctx, &s3.PutObjectInput{
		Bucket:        &s.cfg.Bucket,
		Key:           &key,
		Body:          bytes.NewReader(body),
		ContentLength: aws.Int64(int64(len(body))),
		ContentType:   aws.String("application/octet-stream"),
		IfMatch:       ifMatch,
		IfNoneMatch:   ifNoneMatch,
	})
	if err != nil {
		return "", s.classify(op, key, err)
	}
	return store.NormalizeETag(aws.ToString(out.ETag)), nil
}

func (s *awsStore) Put(ctx context.Context, key string, body []byte) (string, error) {
	return s.put(ctx, "put", key, body, nil, nil)
}

func (s *awsStore) PutIfAbsent(ctx context.Context, key string, body []byte) (string, error) {
	return s.put(ctx, "put-if-absent", key, body, nil, aws.String("*"))
}

func (s *awsStore) PutIfMatch(ctx context.Context, key string, body []byte, etag string) (string, error) {
	return s.put(ctx, "put-if-match", key, body, aws.String(store.QuoteETag(etag)), nil)
}

func (s *awsStore) Delete(ctx context.Context, key string) error {
	ctx, cancel := context.WithTimeout(ctx, s.cfg.CallTimeout())
	defer cancel()
	_, err := s.c.DeleteObject(ctx, &s3.DeleteObjectInput{Bucket: &s.cfg.Bucket, Key: &key})
	return s.classify("delete", key, err)
}

func (s *awsStore) DeleteMany(ctx context.Context, keys []string) ([]store.KeyError, error) {
	var failed []store.KeyError
	for start := 0; start < len(keys); start += 1000 {
		batch := keys[start:min(start+1000, len(keys))]
		objs := make([]types.ObjectIdentifier, len(batch))
		for i := range batch {
			objs[i] = types.ObjectIdentifier{Key: aws.String(batch[i])}
		}
		cctx, cancel := context.WithTimeout(ctx, s.cfg.CallTimeout())
		out, err := s.c.DeleteObjects(cctx, &s3.DeleteObjectsInput{
			Bucket: &s.cfg.Bucket,
			Delete: &types.Delete{Objects: objs, Quiet: aws.Bool(true)},
		})
		cancel()
		if err != nil {
			return failed, s.classify("delete-many", batch[0], err)
		}
		for _, e := range out.Errors {
			k := aws.ToString(e.Key)
			code := aws.ToString(e.Code)
			failed = append(failed, store.KeyError{Key: k, Err: &store.Error{Op: "delete-many", Key: k,
				Kind: store.Classify(0, code), Code: code, Err: errors.New(aws.ToString(e.Message))}})
		}
	}
	return failed, nil
}

func (s *awsStore) List(ctx context.Context, prefix string) ([]store.Entry, error) {
	ctx, cancel := context.WithTimeout(ctx, s.cfg.CallTimeout())
	defer cancel()
	var out []store.Entry
	p := s3.NewListObjectsV2Paginator(s.c, &s3.ListObjectsV2Input{Bucket: &s.cfg.Bucket, Prefix: &prefix})
	for p.HasMorePages() {
		page, err := p.NextPage(ctx)
		if err != nil {
			return nil, s.classify("list", prefix, err)
		}
		for _, o := range page.Contents {
			out = append(out, store.Entry{Key: aws.ToString(o.Key), ETag: store.NormalizeETag(aws.ToString(o.ETag)), Size: aws.ToInt64(o.Size)})
		}
	}
	return out, nil
}
