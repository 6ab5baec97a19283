package certify

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	awsmiddleware "github.com/aws/aws-sdk-go-v2/aws/middleware"
	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
	"github.com/aws/smithy-go"
	smithymiddleware "github.com/aws/smithy-go/middleware"
	smithyhttp "github.com/aws/smithy-go/transport/http"

	"github.com/fencebench/fencebench/store"
)

// rawS3 sends the few requests the Store interface has no call for (conditional deletes), with
// aws-sdk-go-v2 configured like the bench's aws-sdk adapter: retries off, checksums only when
// required, the environment's transport and trust.
type rawS3 struct {
	cfg store.Config
	c   *s3.Client
}

func newRawS3(cfg store.Config) (*rawS3, error) {
	u, err := url.Parse(cfg.Endpoint)
	if err != nil || u.Host == "" {
		return nil, errors.New("bad endpoint: want a URL like http://host:port")
	}
	region := cfg.Region
	if region == "" {
		region = "us-east-1"
	}
	c := s3.New(s3.Options{
		Region:                       region,
		BaseEndpoint:                 aws.String(cfg.Endpoint),
		UsePathStyle:                 cfg.PathStyle,
		Credentials:                  credentials.NewStaticCredentialsProvider(cfg.AccessKey, cfg.SecretKey, cfg.SessionToken),
		HTTPClient:                   cfg.HTTPClient(0),
		RetryMaxAttempts:             1,
		RequestChecksumCalculation:   aws.RequestChecksumCalculationWhenRequired,
		ResponseChecksumValidation:   aws.ResponseChecksumValidationWhenRequired,
		ContinueHeaderThresholdBytes: -1,
	})
	return &rawS3{cfg: cfg, c: c}, nil
}

func (r *rawS3) timeout() time.Duration {
	if r.cfg.Timeout > 0 {
		return r.cfg.Timeout
	}
	return 10 * time.Second
}

// rawAnswer is the outcome of a raw request: its HTTP status (0 when no response arrived) and
// S3 error code.
type rawAnswer struct {
	status int
	code   string
	err    error
}

func (a rawAnswer) ok() bool { return a.err == nil && a.status/100 == 2 }

func (a rawAnswer) String() string {
	switch {
	case a.status == 0 && a.err != nil:
		return "no response (" + redactURL(a.err.Error()) + ")"
	case a.code != "":
		return fmt.Sprintf("%d %s", a.status, a.code)
	default:
		return fmt.Sprint(a.status)
	}
}

func answerOf(md smithymiddleware.Metadata, err error) rawAnswer {
	a := rawAnswer{err: err}
	if err == nil {
		if resp, ok := awsmiddleware.GetRawResponse(md).(*smithyhttp.Response); ok {
			a.status = resp.StatusCode
		} else {
			a.status = 200
		}
		return a
	}
	var re *awshttp.ResponseError
	if errors.As(err, &re) {
		a.status = re.HTTPStatusCode()
	}
	var ae smithy.APIError
	if errors.As(err, &ae) {
		a.code = ae.ErrorCode()
	}
	return a
}

// deleteIfMatch sends DELETE with If-Match: etag.
func (r *rawS3) deleteIfMatch(ctx context.Context, key, etag string) rawAnswer {
	ctx, cancel := context.WithTimeout(ctx, r.timeout())
	defer cancel()
	out, err := r.c.DeleteObject(ctx, &s3.DeleteObjectInput{Bucket: &r.cfg.Bucket, Key: &key,
		IfMatch: aws.String(`"` + store.NormalizeETag(etag) + `"`)})
	var md smithymiddleware.Metadata
	if out != nil {
		md = out.ResultMetadata
	}
	return answerOf(md, err)
}

// deleteObjectsWithETag sends DeleteObjects naming key with <ETag>etag</ETag> and returns the
// per-key error the store reported for it ("" when none), and the request's answer.
func (r *rawS3) deleteObjectsWithETag(ctx context.Context, key, etag string) (string, rawAnswer) {
	ctx, cancel := context.WithTimeout(ctx, r.timeout())
	defer cancel()
	out, err := r.c.DeleteObjects(ctx, &s3.DeleteObjectsInput{Bucket: &r.cfg.Bucket, Delete: &types.Delete{
		Objects: []types.ObjectIdentifier{{Key: aws.String(key), ETag: aws.String(`"` + store.NormalizeETag(etag) + `"`)}},
	}})
	if err != nil {
		return "", answerOf(smithymiddleware.Metadata{}, err)
	}
	ans := answerOf(out.ResultMetadata, nil)
	for _, e := range out.Errors {
		if aws.ToString(e.Key) == key {
			if c := aws.ToString(e.Code); c != "" {
				return c, ans
			}
			return "(no code)", ans
		}
	}
	return "", ans
}

// asError is a failed raw request as a store error (nil when it succeeded), so that a probe's
// tracker and its error causes treat it like any other request: no response is ambiguous, an
// answer the store's error kind of that status.
func (a rawAnswer) asError(op, key string) error {
	if a.err == nil && a.status/100 == 2 {
		return nil
	}
	e := &store.Error{Op: op, Key: key, Status: a.status, Code: a.code, Err: a.err}
	switch {
	case a.status == 0:
		e.Kind = store.ErrAmbiguous
	case a.status == 404:
		e.Kind = store.ErrNotFound
	case a.status == 412:
		e.Kind = store.ErrPreconditionFailed
	case a.status == 409:
		e.Kind = store.ErrConflict
	case a.status == 401 || a.status == 403:
		e.Kind = store.ErrConfig
	default:
		e.Kind = store.ErrAmbiguous
	}
	if e.Err == nil {
		e.Err = errors.New(a.String())
	}
	return e
}

// rawDeleteIfMatch sends DELETE If-Match through raw, recorded by the probe's tracker like its
// other requests; err is the failed request traced (nil when it succeeded).
func (t *trial) rawDeleteIfMatch(ctx context.Context, raw *rawS3, key, etag string) (rawAnswer, error) {
	if t.tr == nil {
		ans := raw.deleteIfMatch(ctx, key, etag)
		return ans, ans.asError("delete-if-match", t.short(key))
	}
	c := t.tr.begin("DELETE If-Match", key, 1)
	ans := raw.deleteIfMatch(ctx, key, etag)
	return ans, t.tr.end(ctx, c, ans.asError("delete-if-match", t.short(key)))
}

// rawDeleteObjectsWithETag sends DeleteObjects with an <ETag> through raw, recorded by the
// probe's tracker.
func (t *trial) rawDeleteObjectsWithETag(ctx context.Context, raw *rawS3, key, etag string) (string, rawAnswer, error) {
	if t.tr == nil {
		perKey, ans := raw.deleteObjectsWithETag(ctx, key, etag)
		return perKey, ans, ans.asError("delete-objects-etag", t.short(key))
	}
	c := t.tr.begin("DeleteObjects <ETag> (1 key)", key, 1)
	perKey, ans := raw.deleteObjectsWithETag(ctx, key, etag)
	return perKey, ans, t.tr.end(ctx, c, ans.asError("delete-objects-etag", t.short(key)))
}
