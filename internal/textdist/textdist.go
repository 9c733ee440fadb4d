// Package textdist measures how far apart two names are, for "did you mean"
// suggestions in findings.
package textdist

import (
	"math"
	"unicode/utf8"
)

// Distance is the Levenshtein edit distance between a and b, in runes.
func Distance(a, b string) int {
	d, _ := bounded([]rune(a), []rune(b), math.MaxInt)
	return d
}

// Within reports whether Distance(a, b) <= k, and the distance when it is.
// It is for a name compared with many candidates: a candidate whose length
// (in runes) differs by more than k is rejected without the table, and the
// table stops at the first row whose every cell exceeds k (a row's minimum
// never decreases further down).
func Within(a, b string, k int) (int, bool) {
	la, lb := utf8.RuneCountInString(a), utf8.RuneCountInString(b)
	if la-lb > k || lb-la > k {
		return 0, false
	}
	return bounded([]rune(a), []rune(b), k)
}

// bounded is the edit distance of ra and rb by the two-row table, given up
// (0, false) as soon as a row's minimum exceeds k.
func bounded(ra, rb []rune, k int) (int, bool) {
	prev := make([]int, len(rb)+1)
	cur := make([]int, len(rb)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(ra); i++ {
		cur[0] = i
		low := cur[0]
		for j := 1; j <= len(rb); j++ {
			cost := 1
			if ra[i-1] == rb[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
			low = min(low, cur[j])
		}
		if low > k {
			return 0, false
		}
		prev, cur = cur, prev
	}
	if d := prev[len(rb)]; d <= k {
		return d, true
	}
	return 0, false
}
