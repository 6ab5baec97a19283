package main

import (
	"bytes"
	"context"
	"crypto/md5"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"

	"github.com/fencebench/fencebench/reports"
)

// handS3 sends single signed HTTP requests, path-style, one at a time, with nothing of the
// bench's clients between it and the store: the minimal request sequences that check a
// store's findings once more. Each request and its answer is written down as a step.
type handS3 struct {
	p     thirdParty
	c     *http.Client
	steps []string
}

func newHandS3(p thirdParty) *handS3 {
	return &handS3{p: p, c: &http.Client{Timeout: 10 * time.Second}}
}

type handAnswer struct {
	status int
	etag   string
	body   []byte
	err    error
}

func (a handAnswer) String() string {
	if a.err != nil {
		return "no response (" + a.err.Error() + ")"
	}
	s := fmt.Sprint(a.status)
	if a.etag != "" {
		s += " ETag " + a.etag
	}
	return s
}

// do sends method on key with the headers, and records the step (unless quiet).
func (h *handS3) do(method, key string, headers map[string]string, body []byte, quiet bool) handAnswer {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	url := h.p.endpoint + "/" + h.p.bucket + "/" + key
	req, err := http.NewRequestWithContext(ctx, method, url, bytes.NewReader(body))
	if err != nil {
		return handAnswer{err: err}
	}
	sum := sha256.Sum256(body)
	payload := hex.EncodeToString(sum[:])
	req.Header.Set("X-Amz-Content-Sha256", payload)
	var hs []string
	for k, v := range headers {
		req.Header.Set(k, v)
		hs = append(hs, k+": "+v)
	}
	creds := aws.Credentials{AccessKeyID: h.p.access, SecretAccessKey: h.p.secret}
	if err := v4.NewSigner().SignHTTP(ctx, creds, req, payload, "s3", "us-east-1", time.Now()); err != nil {
		return handAnswer{err: err}
	}
	resp, err := h.c.Do(req)
	a := handAnswer{err: err}
	if err == nil {
		a.body, _ = io.ReadAll(resp.Body)
		resp.Body.Close()
		a.status, a.etag = resp.StatusCode, resp.Header.Get("ETag")
	}
	if !quiet {
		step := method + " /" + h.p.bucket + "/" + key
		if len(hs) > 0 {
			step += "  " + strings.Join(hs, "  ")
		}
		if len(body) > 0 {
			step += fmt.Sprintf("  (body %q)", body)
		}
		h.steps = append(h.steps, step+"  ->  "+a.String())
	}
	return a
}

func handKey(t *testing.T, what string) string {
	return "fencebench-handcheck/" + what + "-" + randomHex(t, 4)
}

// checkConditionalDelete: is DELETE If-Match with a stale ETag honoured? The certification's
// E19 says honoured (true or false); the minimal sequence is PUT v1, PUT v2, DELETE If-Match
// v1's ETag, GET.
func checkConditionalDelete(t *testing.T, p thirdParty, certified string) reports.HandCheck {
	h := newHandS3(p)
	k := handKey(t, "e19")
	v1 := h.do("PUT", k, nil, []byte("v1"), false)
	h.do("PUT", k, nil, []byte("v2"), false)
	del := h.do("DELETE", k, map[string]string{"If-Match": v1.etag}, nil, false)
	get := h.do("GET", k, nil, nil, false)
	hc := reports.HandCheck{Finding: "E19: DELETE If-Match with a stale ETag (certify recorded honoured=" + certified + ")", Steps: h.steps}
	var seen string
	switch {
	case v1.err != nil || del.err != nil || get.err != nil || v1.status != 200:
		hc.Judgement, hc.Why = reports.NotJudged, "a request of the sequence got no usable answer"
		return hc
	case del.status == 412 && get.status == 200:
		seen = "true"
	case del.status/100 == 2:
		seen = "false"
	default:
		seen = "unknown"
	}
	if seen == certified {
		hc.Judgement = reports.StoreProperty
		hc.Why = fmt.Sprintf("the sequence shows the same (DELETE answered %d, GET then %d): the store does this; fencebench's protocol never deletes conditionally", del.status, get.status)
	} else {
		hc.Judgement = reports.BenchLimitation
		hc.Why = fmt.Sprintf("the sequence shows honoured=%s where the probe recorded %s", seen, certified)
	}
	return hc
}

// checkIfMatchMissing: PUT If-Match on a key that does not exist must not create it (A5).
func checkIfMatchMissing(t *testing.T, p thirdParty, certifiedPass bool) reports.HandCheck {
	h := newHandS3(p)
	k := handKey(t, "a5")
	put := h.do("PUT", k, map[string]string{"If-Match": `"6f5902ac237024bdd0c176cb93063dc4"`}, []byte("must not be created"), false)
	get := h.do("GET", k, nil, nil, false)
	hc := reports.HandCheck{Finding: fmt.Sprintf("A5: If-Match on a missing key (certify: %s)", map[bool]string{true: "pass", false: "fail"}[certifiedPass]), Steps: h.steps}
	switch {
	case put.err != nil || get.err != nil:
		hc.Judgement, hc.Why = reports.NotJudged, "a request of the sequence got no usable answer"
	case (put.status/100 == 2 || get.status == 200) != !certifiedPass:
		hc.Judgement, hc.Why = reports.BenchLimitation, "the sequence disagrees with the probe"
	case certifiedPass:
		hc.Judgement, hc.Why = reports.StoreProperty, fmt.Sprintf("refused with %d and nothing created: the store enforces it", put.status)
	default:
		hc.Judgement, hc.Why = reports.StoreProperty, fmt.Sprintf("answered %d and GET finds the object: the store creates on If-Match", put.status)
	}
	return hc
}

// checkTornRead: does a GET ever return a body with an ETag that is not that body's? One
// writer replaces the object 300 times, one reader GETs it meanwhile; a plain single-part PUT's
// ETag is the MD5 of its body on these stores, so a GET whose ETag is not the MD5 of the body it
// returned read the body and the ETag of two different versions. It checks B11's witness (a
// GET returning a version's body with another version's ETag).
func checkTornRead(t *testing.T, p thirdParty, b11Failed bool) reports.HandCheck {
	h := newHandS3(p)
	k := handKey(t, "torn")
	first := h.do("PUT", k, nil, []byte("version 0"), false)
	hc := reports.HandCheck{Finding: fmt.Sprintf("B11: body and ETag read as one (certify B11: %s)", map[bool]string{true: "failed", false: "passed"}[b11Failed])}
	if first.err != nil || strings.Trim(first.etag, `"`) != fmt.Sprintf("%x", md5.Sum([]byte("version 0"))) {
		hc.Steps, hc.Judgement, hc.Why = h.steps, reports.NotJudged, "the store's ETag is not the MD5 of the body, so this sequence cannot tell a torn read"
		return hc
	}
	var mu sync.Mutex
	var torn []string
	gets := 0
	done := make(chan struct{})
	go func() {
		defer close(done)
		for i := 1; i <= 300; i++ {
			h.do("PUT", k, nil, []byte(fmt.Sprintf("version %d", i)), true)
		}
	}()
	r := newHandS3(p)
	for running := true; running; {
		select {
		case <-done:
			running = false
		default:
		}
		a := r.do("GET", k, nil, nil, true)
		if a.err != nil || a.status != 200 {
			continue
		}
		mu.Lock()
		gets++
		if want := fmt.Sprintf("%x", md5.Sum(a.body)); strings.Trim(a.etag, `"`) != want && len(torn) < 3 {
			torn = append(torn, fmt.Sprintf("GET /%s/%s  ->  200 body %q ETag %s, but the MD5 of that body is %s", p.bucket, k, a.body, a.etag, want))
		}
		mu.Unlock()
	}
	hc.Steps = append(h.steps, fmt.Sprintf("PUT /%s/%s (body \"version N\") for N = 1..300, one after another, while a second connection GETs it: %d GETs", p.bucket, k, gets))
	hc.Steps = append(hc.Steps, torn...)
	switch {
	case len(torn) > 0 && !b11Failed:
		hc.Judgement, hc.Why = reports.StoreProperty, "a GET returned a body with an ETag that is not that body's (another version's, or none): body and ETag are not read as one; "+
			"B11 passed in this certification, so its pass does not cover this (B11 catches it only when a torn read lands in its chain)"
	case len(torn) > 0:
		hc.Judgement, hc.Why = reports.StoreProperty, "a GET returned a body with an ETag that is not that body's (another version's, or none): body and ETag are not read as one"
	case b11Failed:
		hc.Judgement, hc.Why = reports.NotJudged, "no torn read in this sequence; the probe's failure stays open (not a green verdict)"
	default:
		hc.Judgement, hc.Why = reports.StoreProperty, "every GET's ETag was the MD5 of its body"
	}
	return hc
}

// handChecks runs the checks of one store's findings from its certification results.
func handChecks(t *testing.T, p thirdParty, cmp reports.Comparison, i int) []reports.HandCheck {
	e19, a5pass, b11failed := "unknown", true, false
	for _, r := range cmp.Rows {
		c := r.Cells[i]
		switch {
		case strings.HasPrefix(r.ID, "E19 (aws-sdk)"):
			for _, f := range strings.Fields(c.Detail) {
				if v, ok := strings.CutPrefix(f, "honoured="); ok {
					e19 = v
				}
			}
		case strings.HasPrefix(r.ID, "A5 ("):
			a5pass = a5pass && c.Verdict == "pass"
		case strings.HasPrefix(r.ID, "B11 ("):
			b11failed = b11failed || c.Verdict == "fail"
		}
	}
	return []reports.HandCheck{checkIfMatchMissing(t, p, a5pass), checkConditionalDelete(t, p, e19), checkTornRead(t, p, b11failed)}
}
