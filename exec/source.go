package exec

import (
	"context"

	"github.com/apache/arrow-go/v18/arrow"
)

// sliceSource streams batches held in memory: the rows of VALUES lists,
// constant results, and tests.
type sliceSource struct {
	schema  Schema
	batches []arrow.RecordBatch
	next    int
}

// NewSliceSource returns an operator that streams batches (skipping empty
// ones) and releases them as it goes; it takes ownership of them.
func NewSliceSource(s Schema, batches []arrow.RecordBatch) Operator {
	return &sliceSource{schema: s, batches: batches}
}

func (s *sliceSource) Schema() Schema { return s.schema }

func (s *sliceSource) Next(ctx context.Context) (arrow.RecordBatch, error) {
	for s.next < len(s.batches) {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		b := s.batches[s.next]
		s.batches[s.next] = nil
		s.next++
		if b.NumRows() > 0 {
			return b, nil
		}
		b.Release()
	}
	return nil, nil
}

func (s *sliceSource) Close() {
	for i := s.next; i < len(s.batches); i++ {
		if s.batches[i] != nil {
			s.batches[i].Release()
			s.batches[i] = nil
		}
	}
	s.next = len(s.batches)
}

// Drain reads op to its end and closes it, returning every batch; on an
// error it releases what it read.
func Drain(ctx context.Context, op Operator) ([]arrow.RecordBatch, error) {
	defer op.Close()
	var out []arrow.RecordBatch
	for {
		b, err := op.Next(ctx)
		if err != nil {
			for _, r := range out {
				r.Release()
			}
			return nil, err
		}
		if b == nil {
			return out, nil
		}
		out = append(out, b)
	}
}
