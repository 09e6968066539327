package exec

import (
	"bytes"
	"context"
	"encoding/binary"
	"math"
	"slices"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/rowttl/rowttl"
)

// Sort: the input batches are held as they came, their rows are ordered,
// then gathered from them (gather.go) in batches of BatchRows, so that the
// operator never holds a second copy of its input.
//
// A single key of a fixed width (integers, temporals, booleans, floats)
// orders its rows by an order-preserving uint64 with a stable LSD radix
// sort, NULLs set apart in input order. Any other key list orders rows by
// their normalised order keys (keys_order.go), built over the whole input
// so that a column without NULLs in any batch drops its null byte, with the first 16
// bytes inlined next to the row number, so that most comparisons are
// integer comparisons; equal keys fall back to the row number, which makes the sort
// stable.

const sortName = "Sort"

type sortOp struct {
	ordered

	batches []arrow.RecordBatch
	charged int64
}

// NewSort returns the operator of ORDER BY keys: every row of in, ordered
// by the keys (NULLs first or last per key, strings by bytes, DOUBLE with
// NaN after every number and -0 equal to 0), rows of equal keys in input
// order. It holds its whole input, charged to env.Budget. It takes
// ownership of in.
func NewSort(env *Env, in Operator, keys []SortKey) (Operator, error) {
	o, err := newOrdered(sortName, env, in, keys)
	if err != nil {
		return nil, err
	}
	return &sortOp{ordered: o}, nil
}

func (s *sortOp) Next(ctx context.Context) (arrow.RecordBatch, error) { return s.next(ctx, s) }

func (s *sortOp) Close() { s.close(s) }

func (s *sortOp) sources() []arrow.RecordBatch { return s.batches }

func (s *sortOp) release() {
	releaseBatches(s.batches)
	s.batches = nil
	s.out = nil
	s.env.Budget.Shrink(s.charged)
	s.charged = 0
}

func (s *sortOp) grow(n int64) error {
	if err := s.env.Budget.Grow(sortName, n); err != nil {
		return err
	}
	s.charged += n
	return nil
}

func (s *sortOp) build(ctx context.Context) error {
	rows := 0
	for {
		b, err := s.in.Next(ctx)
		if err != nil {
			return err
		}
		if b == nil {
			break
		}
		s.batches = append(s.batches, b)
		rows += int(b.NumRows())
		if rows > math.MaxInt32 {
			return rowttl.Errorf(rowttl.ErrNotSupported, "Sort: more than %d rows", math.MaxInt32)
		}
		if err := s.grow(batchBytes(b)); err != nil {
			return err
		}
	}
	if rows == 0 {
		return nil
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	if err := s.grow(int64(rows) * 8); err != nil { // s.out
		return err
	}
	var order []int32
	var err error
	if s.keys.fixed {
		order, err = s.sortFixed(rows)
	} else {
		order, err = s.sortKeys(rows)
	}
	if err != nil {
		return err
	}
	// Name the sorted rows by batch and row, for gatherBatch.
	refs := make([]rowRef, 0, rows)
	for bi, b := range s.batches {
		for r := range int32(b.NumRows()) {
			refs = append(refs, rowRef{batch: int32(bi), row: r})
		}
	}
	s.out = make([]rowRef, rows)
	for i, r := range order {
		s.out[i] = refs[r]
	}
	return nil
}

// u64Row is a row with its uint64 sort key.
type u64Row struct {
	key uint64
	row int32
}

// sortFixed orders the rows of a single fixed-width key, returning their
// numbers across the batches.
func (s *sortOp) sortFixed(n int) ([]int32, error) {
	if err := s.grow(int64(n) * (8 + 4 + 2*16)); err != nil {
		return nil, err
	}
	k := s.keys.keys[0]
	var inv uint64
	if k.Desc {
		inv = math.MaxUint64
	}
	rs := make([]u64Row, 0, n)
	var nulls []int32
	base := int32(0)
	for _, b := range s.batches {
		col := b.Column(k.Column)
		ord := orderU64(col)
		hasNulls := col.NullN() > 0
		for i := range col.Len() {
			if hasNulls && col.IsNull(i) {
				nulls = append(nulls, base+int32(i))
				continue
			}
			rs = append(rs, u64Row{ord(i) ^ inv, base + int32(i)})
		}
		base += int32(col.Len())
	}
	rs = radixSortU64(rs)
	order := make([]int32, 0, n)
	if k.NullsFirst {
		order = append(order, nulls...)
	}
	for _, r := range rs {
		order = append(order, r.row)
	}
	if !k.NullsFirst {
		order = append(order, nulls...)
	}
	return order, nil
}

// radixSortU64 sorts rs by key, stably (LSD, a byte a pass, skipping the
// bytes every key shares), and returns the sorted slice.
func radixSortU64(rs []u64Row) []u64Row {
	if len(rs) < 256 {
		slices.SortStableFunc(rs, func(a, b u64Row) int {
			switch {
			case a.key < b.key:
				return -1
			case a.key > b.key:
				return 1
			}
			return 0
		})
		return rs
	}
	var counts [8][256]int
	for _, r := range rs {
		k := r.key
		for d := range 8 {
			counts[d][byte(k>>(8*d))]++
		}
	}
	tmp := make([]u64Row, len(rs))
	src, dst := rs, tmp
	for d := range 8 {
		c := &counts[d]
		if c[byte(src[0].key>>(8*d))] == len(src) {
			continue // every key has this byte
		}
		var pos [256]int
		sum := 0
		for b := range 256 {
			pos[b] = sum
			sum += c[b]
		}
		shift := uint(8 * d)
		for _, r := range src {
			b := byte(r.key >> shift)
			dst[pos[b]] = r
			pos[b]++
		}
		src, dst = dst, src
	}
	return src
}

// keyRow is a row with the first 16 bytes of its order key (zero-padded),
// which decide most comparisons as two integer comparisons.
type keyRow struct {
	k0, k1 uint64
	row    int32
}

// sortKeys orders the rows by their order keys, returning their numbers
// across the batches.
func (s *sortOp) sortKeys(n int) ([]int32, error) {
	dropNull := make([]bool, len(s.keys.keys))
	for i, k := range s.keys.keys {
		dropNull[i] = true
		for _, b := range s.batches {
			dropNull[i] = dropNull[i] && b.Column(k.Column).NullN() == 0
		}
	}
	var a keyArena
	a.offs = make([]int, 1, n+1)
	for _, b := range s.batches {
		s.keys.bindWith(b, dropNull)
		for i := range int(b.NumRows()) {
			a.buf = s.keys.appendKey(a.buf, i)
			a.offs = append(a.offs, len(a.buf))
		}
	}
	if err := s.grow(int64(cap(a.buf)) + int64(n)*(8+4+24)); err != nil {
		return nil, err
	}
	rs := make([]keyRow, n)
	for i := range rs {
		var p [16]byte
		copy(p[:], a.key(i))
		rs[i] = keyRow{binary.BigEndian.Uint64(p[:8]), binary.BigEndian.Uint64(p[8:]), int32(i)}
	}
	slices.SortFunc(rs, func(x, y keyRow) int {
		switch {
		case x.k0 < y.k0:
			return -1
		case x.k0 > y.k0:
			return 1
		case x.k1 < y.k1:
			return -1
		case x.k1 > y.k1:
			return 1
		}
		// Keys are prefix-free, so two keys that agree on 16 padded bytes
		// are either both longer or equal: compare what follows.
		kx, ky := a.key(int(x.row)), a.key(int(y.row))
		if c := bytes.Compare(kx[min(16, len(kx)):], ky[min(16, len(ky)):]); c != 0 {
			return c
		}
		return int(x.row - y.row)
	})
	order := make([]int32, n)
	for i, r := range rs {
		order[i] = r.row
	}
	return order, nil
}
