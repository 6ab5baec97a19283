package main

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
)

// redactor replaces credentials in everything the command prints and in the files the run
// wrote. The run never prints them in the first place; this is the second line of defence.
//
// What is a credential: the secret access key and the session token (of the flags, the
// environment, the profile, or the store the bench started itself). The access key id is
// not: it names the key, proves nothing, and is often an ordinary word (the nightly stack's
// is "fencebench", which is also in every bucket, prefix and command name).
//
// How it matches: only whole tokens, a secret whose neighbours are not ASCII letters or
// digits, so an ordinary word that merely contains a secret is never rewritten. A secret
// shorter than minSecret bytes is ignored: real secrets are far longer (AWS's are 40
// characters, MinIO refuses fewer than 8), and redacting a short one would wreck the output.
type redactor struct {
	mu      sync.Mutex
	secrets [][]byte
}

const redacted = "[REDACTED]"

// minSecret is the shortest string treated as a credential.
const minSecret = 8

func (r *redactor) add(s string) {
	if len(s) < minSecret {
		return
	}
	r.mu.Lock()
	r.secrets = append(r.secrets, []byte(s))
	r.mu.Unlock()
}

// scrub replaces every whole-token occurrence of a secret in b and says how many it replaced.
func (r *redactor) scrub(b []byte) ([]byte, int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	n := 0
	for _, s := range r.secrets {
		var out []byte
		rest, done := b, 0
		for {
			i := bytes.Index(rest, s)
			if i < 0 {
				break
			}
			start, end := done+i, done+i+len(s)
			if (start == 0 || !wordByte(b[start-1])) && (end == len(b) || !wordByte(b[end])) {
				out = append(append(out, b[done:start]...), redacted...)
				n++
				done = end
				rest = b[end:]
				continue
			}
			// Inside a longer token: keep looking after this occurrence's first byte.
			out = append(out, b[done:start+1]...)
			done = start + 1
			rest = b[done:]
		}
		if out != nil {
			b = append(out, b[done:]...)
		}
	}
	return b, n
}

func wordByte(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9'
}

// writer wraps w so that credentials never reach it.
func (r *redactor) writer(w io.Writer) io.Writer { return redactingWriter{r: r, w: w} }

type redactingWriter struct {
	r *redactor
	w io.Writer
}

func (rw redactingWriter) Write(p []byte) (int, error) {
	b, _ := rw.r.scrub(p)
	if _, err := rw.w.Write(b); err != nil {
		return 0, err
	}
	return len(p), nil
}

// trendPage is the one file a run writes outside its own folder: the results folder's index.
const trendPage = "index.html"

// scrubFiles rewrites the files the command wrote that hold a credential, and returns how
// many occurrences it replaced: zero unless something leaked. The command wrote every
// regular file under runDir (a folder it created empty, see claimRunDir) and the files
// named in also; nothing else is read or rewritten, whatever else the results folder holds.
func (r *redactor) scrubFiles(runDir string, also ...string) (int, error) {
	total := 0
	fix := func(path string) error {
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		out, n := r.scrub(b)
		if n == 0 {
			return nil
		}
		total += n
		return os.WriteFile(path, out, 0o644)
	}
	err := filepath.WalkDir(runDir, func(path string, d os.DirEntry, err error) error {
		if err != nil || !d.Type().IsRegular() {
			return err
		}
		return fix(path)
	})
	if err != nil {
		return total, err
	}
	for _, f := range also {
		if st, err := os.Lstat(f); err == nil && st.Mode().IsRegular() {
			if err := fix(f); err != nil {
				return total, err
			}
		}
	}
	return total, nil
}

// claimRunDir creates the folder a run (or a certification) writes into. A folder that
// already holds anything is refused, so everything in it afterwards is the run's own: that
// is what lets the redactor rewrite it without touching anyone's files.
func claimRunDir(dir string) error {
	if err := os.MkdirAll(filepath.Dir(dir), 0o755); err != nil {
		return fmt.Errorf("results folder: %w", err)
	}
	err := os.Mkdir(dir, 0o755)
	if !errors.Is(err, fs.ErrExist) {
		return err
	}
	return refuseUsedDir(dir)
}

// refuseUsedDir refuses a results folder that already holds anything; a missing or empty
// one is fine. It writes nothing.
func refuseUsedDir(dir string) error {
	entries, err := os.ReadDir(dir)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil
	case err != nil:
		return fmt.Errorf("results folder: %w", err)
	case len(entries) > 0:
		return fmt.Errorf("the results folder %s already exists and is not empty: a run writes only into a folder of its own (choose another --run-id or --out)", dir)
	}
	return nil
}

// newRedactor returns a redactor that already knows the secret key given on the command line.
func newRedactor(args []string) *redactor {
	r := &redactor{}
	for _, s := range flagValues(args, "secret-key") {
		r.add(s)
	}
	return r
}
