package storeprobe

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/fencebench/fencebench/store"
)

// The sequential probes: one request at a time, through the reader, so that a store which
// is wrong without any race is named for what it does rather than caught by a race by luck.
var (
	MissingIfMatch = Kind{ID: "A5", Name: "If-Match on a missing key"}
	ReadAfterCAS   = Kind{ID: "D17", Name: "read after CAS"}
)

// Preflight is every probe, sequential ones first: what a run checks before its first cell.
var Preflight = []Kind{MissingIfMatch, ReadAfterCAS, CreateRace, CASRace}

// sequentialChecks are the checks of the sequential probes, run once per key; a check
// returns what the store got wrong ("" if nothing) and counts its answers in res.
var sequentialChecks = map[Kind]func(o Options, ctx context.Context, key string, res *Result) (string, error){
	MissingIfMatch: Options.missingIfMatch,
	ReadAfterCAS:   Options.readAfterCAS,
}

// sequential runs check once on each of o.Keys fresh keys and stops at the first violation.
func (o Options) sequential(ctx context.Context, k Kind, check func(Options, context.Context, string, *Result) (string, error)) (res Result, err error) {
	res.Kind = k
	start := time.Now()
	defer func() { res.Duration = time.Since(start) }()
	for i := 0; i < o.Keys; i++ {
		key := fmt.Sprintf("%s%s-k%d-%s", o.Prefix, k.ID, i, Nonce())
		var witness string
		if witness, err = check(o, ctx, key, &res); err != nil {
			return res, err
		}
		res.Races++
		if witness != "" {
			res.Witness = fmt.Sprintf("%s %s: key %s: %s", k.ID, k.Name, key, witness)
			return res, nil
		}
	}
	return res, nil
}

// count adds err's class to res and returns an error when the call could not be judged.
func (o Options) count(ctx context.Context, res *Result, what string, err error) error {
	switch res.add(err) {
	case NoAnswer:
		return fmt.Errorf("storeprobe: %s got no answer: %w", what, err)
	case Unexpected:
		if errors.Is(err, store.ErrNotFound) {
			res.Refused++
			return nil
		}
		if errors.Is(err, store.ErrConfig) || ctx.Err() != nil {
			return fmt.Errorf("storeprobe: %s: %w", what, err)
		}
	}
	return nil
}

// missingIfMatch: PUT If-Match on a missing key is refused (404, 412 or 409) and creates
// nothing.
func (o Options) missingIfMatch(ctx context.Context, key string, res *Result) (string, error) {
	const bogus = "6f5902ac237024bdd0c176cb93063dc4"
	etag, err := o.Reader.PutIfMatch(ctx, key, fmt.Appendf(nil, "fencebench-%s A5", o.Origin), bogus)
	if cerr := o.count(ctx, res, "PUT If-Match on the missing key "+key, err); cerr != nil {
		return "", cerr
	}
	if err == nil {
		return fmt.Sprintf("PUT If-Match: %s on a missing key answered 2xx (ETag %s): the object was created", bogus, etag), nil
	}
	if !errors.Is(err, store.ErrNotFound) && Classify(err) == Unexpected {
		return fmt.Sprintf("PUT If-Match on a missing key answered %v, want 404, 412 or 409", err), nil
	}
	if _, gerr := o.Reader.Get(ctx, key); gerr == nil {
		return fmt.Sprintf("PUT If-Match on a missing key answered %v, yet the object exists afterwards", err), nil
	} else if !errors.Is(gerr, store.ErrNotFound) {
		return "", fmt.Errorf("storeprobe: GET %s after PUT If-Match: %w", key, gerr)
	}
	return "", nil
}

// readAfterCAS: a GET right after a successful PUT If-Match returns the new body and ETag.
func (o Options) readAfterCAS(ctx context.Context, key string, res *Result) (string, error) {
	e0, err := o.Reader.Put(ctx, key, fmt.Appendf(nil, "fencebench-%s D17 E0", o.Origin))
	if err != nil {
		return "", fmt.Errorf("storeprobe: PUT the starting version of %s: %w", key, err)
	}
	b := fmt.Appendf(nil, "fencebench-%s D17 nonce=%s", o.Origin, Nonce())
	e1, err := o.Reader.PutIfMatch(ctx, key, b, e0)
	if cerr := o.count(ctx, res, "PUT If-Match: <current ETag> on "+key, err); cerr != nil {
		return "", cerr
	}
	if err != nil {
		return fmt.Sprintf("PUT If-Match: %s (the current ETag) answered %v, want 2xx", e0, err), nil
	}
	obj, err := o.Reader.Get(ctx, key)
	if err != nil {
		return "", fmt.Errorf("storeprobe: GET %s right after the CAS: %w", key, err)
	}
	if obj.ETag != e1 || !bytes.Equal(obj.Body, b) {
		return fmt.Sprintf("PUT If-Match: %s answered 2xx with ETag %s, but a GET right after it returns ETag %s (%s): the read does not see the acknowledged write",
			e0, e1, obj.ETag, describeVersion(obj.ETag, e0)), nil
	}
	return "", nil
}

func describeVersion(got, e0 string) string {
	if got == e0 {
		return "the version the CAS replaced"
	}
	return "neither the old nor the new version"
}
