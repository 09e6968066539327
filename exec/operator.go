package exec

import (
	"context"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/rowttl/rowttl"
	"github.com/rowttl/rowttl/schema"
)

// Column is one output column of an operator.
type Column struct {
	// Name is what a result header or EXPLAIN shows.
	Name string
	// Type is the SQL type; the column's Arrow type is Type.Arrow().
	Type schema.Type
	// Nullable says whether the column may hold NULL.
	Nullable bool
}

// Schema is the ordered output columns of an operator.
type Schema []Column

// Arrow returns the Arrow schema of batches with these columns.
func (s Schema) Arrow() *arrow.Schema {
	fields := make([]arrow.Field, len(s))
	for i, c := range s {
		fields[i] = arrow.Field{Name: c.Name, Type: c.Type.Arrow(), Nullable: c.Nullable}
	}
	return arrow.NewSchema(fields, nil)
}

// Operator is a pull-based stream of record batches; see the package
// documentation for its contract.
type Operator interface {
	Schema() Schema
	Next(ctx context.Context) (arrow.RecordBatch, error)
	Close()
}

// Env is what every operator and expression of one query shares.
type Env struct {
	// Mem allocates every batch the query builds.
	Mem memory.Allocator
	// Now is the statement's one now: NOW(), CURRENT_TIMESTAMP, and the TTL
	// check of every scan below.
	Now time.Time
	// Loc is the session time zone: DATETIME values are wall clocks in it,
	// TIMESTAMPTZ values are shown in it.
	Loc *time.Location
	// Budget accounts the memory of blocking operators; nil means no limit.
	Budget *Budget
	// Parallelism is the number of goroutines an operator may use; 0 means
	// GOMAXPROCS.
	Parallelism int
}

// BatchRows is the number of rows operators aim for in the batches they
// build.
const BatchRows = 64 << 10

// Budget is one query's memory limit, shared by its blocking operators.
// Grow and Shrink are safe for concurrent use.
type Budget struct {
	limit int64
	used  atomic.Int64
	peak  atomic.Int64
}

// NewBudget returns a budget of limit bytes; limit <= 0 means unlimited.
func NewBudget(limit int64) *Budget { return &Budget{limit: limit} }

// Grow charges n bytes held by the named operator, or fails with
// ErrMemLimit (charging nothing) when the total would pass the limit.
func (b *Budget) Grow(op string, n int64) error {
	if b == nil || n <= 0 {
		return nil
	}
	used := b.used.Add(n)
	if b.limit > 0 && used > b.limit {
		b.used.Add(-n)
		return rowttl.Errorf(rowttl.ErrMemLimit,
			"Memory limit exceeded: %s needs %d more bytes; exec_mem_limit is %d and the query holds %d",
			op, n, b.limit, used-n)
	}
	for {
		p := b.peak.Load()
		if used <= p || b.peak.CompareAndSwap(p, used) {
			break
		}
	}
	return nil
}

// Shrink returns n bytes charged by Grow.
func (b *Budget) Shrink(n int64) {
	if b == nil || n <= 0 {
		return
	}
	if b.used.Add(-n) < 0 {
		panic(fmt.Sprintf("exec: budget shrunk below zero by %d", n))
	}
}

// Limit returns the limit in bytes, 0 when there is none.
func (b *Budget) Limit() int64 {
	if b == nil || b.limit < 0 {
		return 0
	}
	return b.limit
}

// Used returns the bytes charged now.
func (b *Budget) Used() int64 {
	if b == nil {
		return 0
	}
	return b.used.Load()
}

// Peak returns the most bytes charged at once.
func (b *Budget) Peak() int64 {
	if b == nil {
		return 0
	}
	return b.peak.Load()
}
