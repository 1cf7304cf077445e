package main

import "strings"

// suggest returns the option closest to name, for a "did you mean"
// hint: by edit distance, case folded, at most a third of name's length
// (at least 1, at most 3) away; "" when none is that close.
func suggest(name string, options []string) string {
	bound := min(max(len(name)/3, 1), 3)
	best, bestDist := "", bound+1
	for _, o := range options {
		if d := editDistance(strings.ToLower(name), strings.ToLower(o)); d < bestDist {
			best, bestDist = o, d
		}
	}
	return best
}

// editDistance is the Levenshtein distance between a and b, in bytes.
func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}
