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
// per-key error the store reported for it ("" when none).
func (r *rawS3) deleteObjectsWithETag(ctx context.Context, key, etag string) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, r.timeout())
	defer cancel()
	out, err := r.c.DeleteObjects(ctx, &s3.DeleteObjectsInput{Bucket: &r.cfg.Bucket, Delete: &types.Delete{
		Objects: []types.ObjectIdentifier{{Key: aws.String(key), ETag: aws.String(`"` + store.NormalizeETag(etag) + `"`)}},
	}})
	if err != nil {
		return "", fmt.Errorf("%s", answerOf(smithymiddleware.Metadata{}, err))
	}
	for _, e := range out.Errors {
		if aws.ToString(e.Key) == key {
			if c := aws.ToString(e.Code); c != "" {
				return c, nil
			}
			return "(no code)", nil
		}
	}
	return "", nil
}
