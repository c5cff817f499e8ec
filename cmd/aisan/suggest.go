package main

import (
	"strings"
)

// nearest returns the name in names closest to word — a typo of it (at
// most two edits, fewer for short words) or the one name it begins —
// or "" when none is close enough to suggest.
func nearest(word string, names []string) string {
	best, bestD := "", 0
	limit := min(2, max(1, len(word)/3))
	var prefixed []string
	for _, n := range names {
		if word != "" && strings.HasPrefix(n, word) {
			prefixed = append(prefixed, n)
		}
		d := editDistance(word, n)
		if d <= limit && (best == "" || d < bestD) {
			best, bestD = n, d
		}
	}
	if best == "" && len(prefixed) == 1 {
		best = prefixed[0]
	}
	return best
}

// editDistance is the optimal string alignment distance between a and b:
// insertions, deletions, substitutions and swaps of two neighbours each
// count one.
func editDistance(a, b string) int {
	ra, rb := []rune(a), []rune(b)
	prev2 := make([]int, len(rb)+1)
	prev := make([]int, len(rb)+1)
	cur := make([]int, len(rb)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(ra); i++ {
		cur[0] = i
		for j := 1; j <= len(rb); j++ {
			cost := 1
			if ra[i-1] == rb[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
			if i > 1 && j > 1 && ra[i-1] == rb[j-2] && ra[i-2] == rb[j-1] {
				cur[j] = min(cur[j], prev2[j-2]+1)
			}
		}
		prev2, prev, cur = prev, cur, prev2
	}
	return prev[len(rb)]
}
