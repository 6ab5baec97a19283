package scenarios

import (
	"fmt"
	"sort"
	"strings"
)

// closest suggests the allowed word nearest to s when it is a plausible typo.
func closest(s string, allowed []string) string {
	best, bestD := "", min(3, max(1, len(s)/3)+1)
	for _, a := range allowed {
		if d := editDistance(strings.ToLower(s), strings.ToLower(a)); d < bestD && d < len(s) {
			best, bestD = a, d
		}
	}
	return best
}

func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur := make([]int, len(b)+1)
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			c := 1
			if a[i-1] == b[j-1] {
				c = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+c)
		}
		prev = cur
	}
	return prev[len(b)]
}

func sortedKeys(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

func suggest(s string, allowed []string) string {
	if c := closest(s, allowed); c != "" {
		return fmt.Sprintf(" (did you mean %q?)", c)
	}
	return ""
}
