package main

import (
	"bufio"
	"errors"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"slices"
	"strings"

	"github.com/fencebench/fencebench/internal/mutate"
)

// readJudged reads a file of mutants a person judged (the equivalence file, the survivors
// file): one mutant id a line followed by "# why", blank lines and lines starting with #
// aside; what names the why in the error for a line without one. It returns each id with
// its why. A missing file is no judgement unless required.
func readJudged(path string, required bool, what string) (map[string]string, error) {
	out := map[string]string{}
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) && !required {
		return out, nil
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		id, why, _ := strings.Cut(line, "#")
		id, why = strings.TrimSpace(id), strings.TrimSpace(why)
		if why == "" || strings.ContainsAny(id, " \t") {
			return nil, fmt.Errorf("%s:%d: want \"<mutant id> # %s\", got %q", path, n, what, line)
		}
		out[id] = why
	}
	return out, sc.Err()
}

// sample returns at most max of ms (all when max is 0), drawn with seed and kept in the
// mutants' order, so the same seed draws the same sample.
func sample(ms []mutate.Mutant, max int, seed uint64) []mutate.Mutant {
	if max == 0 || max >= len(ms) {
		return ms
	}
	idx := rand.New(rand.NewPCG(seed, 0)).Perm(len(ms))[:max]
	slices.Sort(idx)
	out := make([]mutate.Mutant, 0, max)
	for _, i := range idx {
		out = append(out, ms[i])
	}
	return out
}
