package policies

import (
	"strconv"
	"unsafe"

	"github.com/open-policy-agent/opa/v1/ast"
)

// slab hands out the terms, term lists and decimal strings of the Rollouts'
// references and the refs, a block at a time instead of one allocation each:
// a Rollout's references are about a dozen objects and a few lists, and the
// terms, lists and index numbers around them were a third of the
// conversion's allocations. Everything a slab hands out belongs to one
// graph's input and is released with it, so a block outlives none of its
// parts by long. The terms of objects that outlive a graph (the webhook's
// cached cluster objects, objectTerm) are not taken from a slab: they would
// keep a whole block alive.
type slab struct {
	terms  []ast.Term
	lists  []*ast.Term
	digits []byte
	blocks int // blocks allocated so far, of all three kinds
}

// Block sizes: each block is twice the previous one up to a few KB, so that
// a small graph (a webhook review's few objects) takes small blocks and
// leaves little of them unused.
const (
	slabTerms  = 128
	slabLists  = 256
	slabDigits = 1024
	slabGrowth = 3 // the first block is 1/2^slabGrowth of the full size
)

// blockSize is the size of the next block of a kind whose full size is n.
func (s *slab) blockSize(n int) int {
	if s.blocks < slabGrowth {
		n >>= slabGrowth - s.blocks
	}
	s.blocks++
	return n
}

// term returns a new term holding v.
func (s *slab) term(v ast.Value) *ast.Term {
	if len(s.terms) == 0 {
		s.terms = make([]ast.Term, s.blockSize(slabTerms))
	}
	t := &s.terms[0]
	s.terms = s.terms[1:]
	t.Value = v
	return t
}

// list returns a zeroed list of n terms, its capacity n so that an append
// to it cannot run into the next list.
func (s *slab) list(n int) []*ast.Term {
	if n > slabLists/16 {
		return make([]*ast.Term, n)
	}
	if len(s.lists) < n {
		s.lists = make([]*ast.Term, s.blockSize(slabLists))
	}
	l := s.lists[:n:n]
	s.lists = s.lists[n:]
	return l
}

// intTerm returns a new number term for n, its digits in the slab's buffer:
// the buffer is only ever appended to, so the strings cut from it never
// change.
func (s *slab) intTerm(n int) *ast.Term {
	if cap(s.digits)-len(s.digits) < 20 {
		s.digits = make([]byte, 0, s.blockSize(slabDigits))
	}
	start := len(s.digits)
	s.digits = strconv.AppendInt(s.digits, int64(n), 10)
	return s.term(ast.Number(unsafe.String(&s.digits[start], len(s.digits)-start)))
}
