package exec

import (
	"context"
	"fmt"
	"math"
	"slices"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/rowttl/rowttl"
	"github.com/rowttl/rowttl/schema"
)

// WindowFunc is a window function.
type WindowFunc uint8

const (
	// RowNumber numbers the rows of a partition 1, 2, 3, ... in ORDER BY
	// order (ties in input order).
	RowNumber WindowFunc = iota + 1
	// Rank is 1 + the number of rows of the partition before the row's
	// peers (rows with equal ORDER BY keys): 1, 1, 3.
	Rank
	// DenseRank is 1 + the number of distinct peer groups before the
	// row's: 1, 1, 2.
	DenseRank
	// Lag is Arg of the row Offset rows before in the partition, Default
	// when there is none; Lead the row Offset rows after.
	Lag
	Lead
	// WindowAgg is the aggregate Agg of Arg over the row's frame.
	WindowAgg
	// NTile is the bucket (1 to Offset) of the row when the partition's
	// rows are dealt in order into Offset buckets whose sizes differ by
	// at most one, the larger first.
	NTile
	// PercentRank is (rank - 1) / (rows of the partition - 1), 0 for a
	// partition of one row; CumeDist is the fraction of the partition's
	// rows up to the row's last peer.
	PercentRank
	CumeDist
	// FirstValue, LastValue and NthValue are Arg of the first, the last
	// and the Offset-th (from 1) row of the row's frame; NULL when the
	// frame has no such row.
	FirstValue
	LastValue
	NthValue
)

var windowFuncNames = [...]string{RowNumber: "row_number", Rank: "rank", DenseRank: "dense_rank", Lag: "lag",
	Lead: "lead", WindowAgg: "aggregate", NTile: "ntile", PercentRank: "percent_rank", CumeDist: "cume_dist",
	FirstValue: "first_value", LastValue: "last_value", NthValue: "nth_value"}

func (f WindowFunc) String() string {
	if int(f) < len(windowFuncNames) && windowFuncNames[f] != "" {
		return windowFuncNames[f]
	}
	return "window?"
}

// FrameBoundKind is one end of a ROWS frame.
type FrameBoundKind uint8

const (
	UnboundedPreceding FrameBoundKind = iota + 1
	// Preceding is Offset rows before the current row.
	Preceding
	CurrentRow
	// Following is Offset rows after the current row.
	Following
	UnboundedFollowing
)

var boundNames = [...]string{UnboundedPreceding: "UNBOUNDED PRECEDING", Preceding: "PRECEDING",
	CurrentRow: "CURRENT ROW", Following: "FOLLOWING", UnboundedFollowing: "UNBOUNDED FOLLOWING"}

// FrameBound is one end of a ROWS frame; Offset (>= 0) counts rows for
// Preceding and Following.
type FrameBound struct {
	Kind   FrameBoundKind
	Offset int64
}

func (b FrameBound) String() string {
	if int(b.Kind) >= len(boundNames) || boundNames[b.Kind] == "" {
		return "BOUND?"
	}
	if b.Kind == Preceding || b.Kind == Following {
		return fmt.Sprintf("%d %s", b.Offset, boundNames[b.Kind])
	}
	return boundNames[b.Kind]
}

// WindowFrame is ROWS (or RANGE) BETWEEN Start AND End, within the row's
// partition. A frame may be empty (1 PRECEDING AND 2 PRECEDING, or near
// the edge of a partition): count is 0 there, the other aggregates NULL.
//
// A RANGE frame counts in values of the one ORDER BY key rather than in
// rows: CURRENT ROW is the row's first peer (as a start) or last peer (as
// an end), n PRECEDING the first row whose key is at most n before the
// row's (after, ordered DESC) and n FOLLOWING the last row at most n
// after. The key must then be an integer, a DECIMAL, a date (n days),
// FLOAT or DOUBLE; a row whose key is NULL has its NULL peers as the frame of an
// offset bound, and NULLs are never within n of a value.
type WindowFrame struct {
	Range      bool
	Start, End FrameBound
}

func (f WindowFrame) String() string {
	unit := "ROWS"
	if f.Range {
		unit = "RANGE"
	}
	return fmt.Sprintf("%s BETWEEN %s AND %s", unit, f.Start, f.End)
}

// WindowSpec is one window function of a Window operator, naming input
// columns by index.
type WindowSpec struct {
	Func WindowFunc
	// Agg is the aggregate of a WindowAgg: CountStar, Count, Sum, Min, Max,
	// Avg, or a variance or standard deviation of FLOAT or DOUBLE (no
	// DISTINCT).
	Agg AggFunc
	// Arg is the input column of Lag, Lead and every aggregate but
	// CountStar; the others ignore it.
	Arg int
	// Offset is how many rows back (Lag) or forward (Lead), >= 0: the
	// planner passes SQL's default 1 when the query gives none. It is the
	// number of buckets of NTile and the row of NthValue, both >= 1.
	Offset int64
	// Default is Lag and Lead's value when the row Offset away is outside
	// the partition: nil for NULL, or an array of length 1 of Arg's Arrow
	// type (NewWindow takes a reference; the operator's Close releases
	// it).
	Default arrow.Array
	// Partition are the PARTITION BY columns; none is one partition.
	Partition []int
	// Order are the ORDER BY keys within a partition.
	Order []SortKey
	// Frame is the frame of an aggregate, FirstValue, LastValue and
	// NthValue. nil is SQL's default: with ORDER BY, RANGE BETWEEN
	// UNBOUNDED PRECEDING AND CURRENT ROW (the rows up to the current
	// row's last peer, so peers share the value); without, the whole
	// partition. The ranking functions, Lag and Lead ignore it, as SQL
	// does.
	Frame *WindowFrame
	// Name is the output column's name.
	Name string
}

// NewWindow returns in with one column per spec appended.
//
// Input. It reads in to its end and holds it (at most 2^31-1 rows),
// charged to env.Budget as "Window", then sorts row indices (not rows) for each distinct
// (Partition, Order) of the specs: partition columns ascending with NULLs
// first, then the Order keys; stable, so rows equal on both keep their
// input order. Partitions and peers compare NULL equal to NULL, -0 equal
// to 0 and NaN equal to NaN.
//
// Output. The input columns, then one column per spec in order. Rows come
// out sorted by the first spec's partition then order keys as above, in
// batches of at most BatchRows. Result types: RowNumber, Rank, DenseRank,
// CountStar and Count BIGINT NOT NULL; Lag, Lead, Min and Max Arg's type;
// Sum BIGINT for integers (an error when a frame's total leaves BIGINT),
// DECIMAL(38,s) for DECIMAL(p,s), exact, DOUBLE for FLOAT and DOUBLE; Avg
// DOUBLE for integers and floats, DECIMAL(38,max(s,4)) for DECIMAL(p,s),
// exact then rounded half away from zero. Sum, Avg, Min and Max are NULL
// over a frame without a non-NULL value.
//
// A refused description is ErrInvalidArgument (ErrNotSupported for what
// the operator does not do) and leaves closing the input to the caller;
// once built, the operator owns its input and Close closes it.
func NewWindow(env *Env, in Operator, specs []WindowSpec) (Operator, error) {
	is := in.Schema()
	out := slices.Clone(is)
	col := func(what string, i int) error {
		if i < 0 || i >= len(is) {
			return rowttl.Errorf(rowttl.ErrInvalidArgument, "Window: %s names column %d of %d", what, i, len(is))
		}
		return nil
	}
	for si, s := range specs {
		name := fmt.Sprintf("window function %d (%s)", si+1, s.Name)
		for _, p := range s.Partition {
			if err := col(name+" PARTITION BY", p); err != nil {
				return nil, err
			}
			if !keyTypeSupported(is[p].Type.Arrow()) {
				return nil, rowttl.Errorf(rowttl.ErrNotSupported, "Window: cannot partition by %s (%s)", is[p].Name, is[p].Type)
			}
		}
		for _, k := range s.Order {
			if err := col(name+" ORDER BY", k.Column); err != nil {
				return nil, err
			}
			if !keyTypeSupported(is[k.Column].Type.Arrow()) {
				return nil, rowttl.Errorf(rowttl.ErrNotSupported, "Window: cannot order by %s (%s)", is[k.Column].Name, is[k.Column].Type)
			}
		}
		c := Column{Name: s.Name}
		if s.Frame != nil {
			if err := checkFrame(*s.Frame); err != nil {
				return nil, err
			}
			if s.Frame.Range && (s.Frame.Start.Kind == Preceding || s.Frame.Start.Kind == Following ||
				s.Frame.End.Kind == Preceding || s.Frame.End.Kind == Following) {
				if len(s.Order) != 1 || !rangeKeyType(is[s.Order[0].Column].Type) {
					return nil, rowttl.Errorf(rowttl.ErrInvalidArgument,
						"Window: %s needs exactly one ORDER BY key of a numeric or date type", s.Frame)
				}
			}
		}
		switch s.Func {
		case RowNumber, Rank, DenseRank:
			c.Type = schema.BigIntType
		case NTile:
			if s.Offset < 1 {
				return nil, rowttl.Errorf(rowttl.ErrInvalidArgument, "Window: ntile of %d buckets", s.Offset)
			}
			c.Type = schema.BigIntType
		case PercentRank, CumeDist:
			c.Type = schema.DoubleType
		case FirstValue, LastValue, NthValue:
			if err := col(name+" argument", s.Arg); err != nil {
				return nil, err
			}
			if s.Func == NthValue && s.Offset < 1 {
				return nil, rowttl.Errorf(rowttl.ErrInvalidArgument, "Window: nth_value of row %d", s.Offset)
			}
			if !keyTypeSupported(is[s.Arg].Type.Arrow()) {
				return nil, rowttl.Errorf(rowttl.ErrNotSupported, "Window: %s of %s", s.Func, is[s.Arg].Type)
			}
			c.Type, c.Nullable = is[s.Arg].Type, true
		case Lag, Lead:
			if err := col(name+" argument", s.Arg); err != nil {
				return nil, err
			}
			if s.Offset < 0 {
				return nil, rowttl.Errorf(rowttl.ErrInvalidArgument, "Window: %s offset %d is negative", s.Func, s.Offset)
			}
			arg := is[s.Arg]
			if s.Default != nil && (s.Default.Len() != 1 || !arrow.TypeEqual(s.Default.DataType(), arg.Type.Arrow())) {
				return nil, rowttl.Errorf(rowttl.ErrInvalidArgument,
					"Window: %s default must be one value of %s's type %s, not %d of %s",
					s.Func, arg.Name, arg.Type, s.Default.Len(), s.Default.DataType())
			}
			if !keyTypeSupported(arg.Type.Arrow()) {
				return nil, rowttl.Errorf(rowttl.ErrNotSupported, "Window: %s of %s", s.Func, arg.Type)
			}
			c.Type = arg.Type
			c.Nullable = arg.Nullable || s.Default == nil || s.Default.IsNull(0)
		case WindowAgg:
			if s.Agg == CountStar {
				c.Type = schema.BigIntType
				break
			}
			if err := col(name+" argument", s.Arg); err != nil {
				return nil, err
			}
			t, nullable, err := windowAggType(s.Agg, is[s.Arg])
			if err != nil {
				return nil, err
			}
			c.Type, c.Nullable = t, nullable
		default:
			return nil, rowttl.Errorf(rowttl.ErrInvalidArgument, "Window: unknown window function %d", s.Func)
		}
		out = append(out, c)
	}
	w := &window{env: env, in: in, specs: slices.Clone(specs), schema: out, arrow: out.Arrow(), nIn: len(is)}
	for _, s := range specs {
		if s.Default != nil {
			s.Default.Retain()
		}
	}
	return w, nil
}

// windowAggType is the result type of agg over arg, and whether it may be
// NULL.
func windowAggType(agg AggFunc, arg Column) (schema.Type, bool, error) {
	t := arg.Type
	switch agg {
	case Count:
		return schema.BigIntType, false, nil
	case Min, Max:
		if !keyTypeSupported(t.Arrow()) {
			break
		}
		return t, true, nil
	case Sum:
		switch {
		case t.IsInteger():
			return schema.BigIntType, true, nil
		case t.Kind == schema.Decimal:
			return schema.Type{Kind: schema.Decimal, Precision: 38, Scale: t.Scale}, true, nil
		case t.Kind == schema.Float || t.Kind == schema.Double:
			return schema.DoubleType, true, nil
		}
	case VarPop, VarSamp, StddevPop, StddevSamp:
		if t.Kind == schema.Float || t.Kind == schema.Double {
			return schema.DoubleType, true, nil
		}
	case Avg:
		switch {
		case t.IsInteger(), t.Kind == schema.Float, t.Kind == schema.Double:
			return schema.DoubleType, true, nil
		case t.Kind == schema.Decimal:
			return schema.Type{Kind: schema.Decimal, Precision: 38, Scale: max(t.Scale, 4)}, true, nil
		}
	default:
		return schema.Type{}, false, rowttl.Errorf(rowttl.ErrInvalidArgument, "Window: unknown aggregate %d", agg)
	}
	return schema.Type{}, false, rowttl.Errorf(rowttl.ErrInvalidArgument, "Window: %s of %s (%s)", agg, arg.Name, t)
}

// rangeKeyType reports the ORDER BY key types a RANGE frame with an
// offset measures: integers, DECIMAL, DATE (in days), FLOAT and DOUBLE.
func rangeKeyType(t schema.Type) bool {
	return t.IsInteger() || t.Kind == schema.Decimal || t.Kind == schema.Date || t.Kind == schema.Float || t.Kind == schema.Double
}

func boundRank(k FrameBoundKind) int {
	if k < UnboundedPreceding || k > UnboundedFollowing {
		return -1
	}
	return int(k)
}

func checkFrame(f WindowFrame) error {
	rs, re := boundRank(f.Start.Kind), boundRank(f.End.Kind)
	switch {
	case rs < 0 || re < 0:
		return rowttl.Errorf(rowttl.ErrInvalidArgument, "Window: unknown frame bound in %s", f)
	case f.Start.Kind == UnboundedFollowing:
		return rowttl.Errorf(rowttl.ErrInvalidArgument, "Window: frame start cannot be UNBOUNDED FOLLOWING")
	case f.End.Kind == UnboundedPreceding:
		return rowttl.Errorf(rowttl.ErrInvalidArgument, "Window: frame end cannot be UNBOUNDED PRECEDING")
	case rs > re:
		return rowttl.Errorf(rowttl.ErrInvalidArgument, "Window: frame %s starts after it ends", f)
	case f.Start.Offset < 0 || f.End.Offset < 0:
		return rowttl.Errorf(rowttl.ErrInvalidArgument, "Window: frame %s has a negative offset", f)
	case f.Range && (f.Start.Kind == Following || f.End.Kind == Preceding):
		return rowttl.Errorf(rowttl.ErrNotSupported, "Window: %s: a RANGE frame starting after or ending before the current row", f)
	}
	return nil
}

type window struct {
	env    *Env
	in     Operator
	specs  []WindowSpec
	schema Schema
	arrow  *arrow.Schema
	nIn    int

	charged int64
	done    bool
	err     error
	// The held input: its batches, [column][batch] arrays, each row's place.
	batches []arrow.RecordBatch
	cols    [][]arrow.Array
	refs    []rowRef
	flats   map[int]*flatCol
	// perm is the output order; results[s] holds spec s's values by input
	// row.
	perm    []int32
	results []windowResult
	pos     int
}

// windowResult is one spec's values by input row, in one of three forms.
type windowResult struct {
	ints  []int64 // BIGINT results
	valid []bool  // nil: no NULL (ints, floats, decs)
	flts  []float64
	decs  []decimal128.Num
	// refs: values copied from rows of the input (Lag, Lead, Min, Max);
	// batch len(batches) is the spec's Default.
	refs []rowRef
}

func (w *window) Schema() Schema { return w.schema }

func (w *window) grow(n int64) error {
	if err := w.env.Budget.Grow("Window", n); err != nil {
		return err
	}
	w.charged += n
	return nil
}

func (w *window) Next(ctx context.Context) (arrow.RecordBatch, error) {
	if w.done {
		return nil, nil
	}
	if w.err != nil {
		return nil, w.err
	}
	if w.perm == nil {
		if err := w.compute(ctx); err != nil {
			// A half-computed window cannot be resumed: every later call
			// fails the same way.
			w.err = err
			return nil, err
		}
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if w.pos >= len(w.perm) {
		w.done = true
		return nil, nil
	}
	end := min(w.pos+BatchRows, len(w.perm))
	b := w.emit(w.perm[w.pos:end])
	w.pos = end
	return b, nil
}

// flat returns input column c in flat form, made once.
func (w *window) flat(c int) (*flatCol, error) {
	if f, ok := w.flats[c]; ok {
		return f, nil
	}
	f := newFlatCol(w.schema[c].Type.Arrow(), w.cols[c], len(w.refs))
	if err := w.grow(f.bytes()); err != nil {
		return nil, err
	}
	w.flats[c] = f
	return f, nil
}

func (w *window) compute(ctx context.Context) error {
	w.cols = make([][]arrow.Array, w.nIn)
	w.flats = map[int]*flatCol{}
	for {
		b, err := w.in.Next(ctx)
		if err != nil {
			return err
		}
		if b == nil {
			break
		}
		w.batches = append(w.batches, b)
		if err := w.grow(batchBytes(b) + 8*b.NumRows()); err != nil {
			return err
		}
		for c := range w.cols {
			w.cols[c] = append(w.cols[c], b.Column(c))
		}
		if len(w.refs)+int(b.NumRows()) > math.MaxInt32 {
			return rowttl.Errorf(rowttl.ErrNotSupported, "Window: an input of more than %d rows", math.MaxInt32)
		}
		for i := 0; i < int(b.NumRows()); i++ {
			w.refs = append(w.refs, rowRef{batch: int32(len(w.batches) - 1), row: int32(i)})
		}
	}
	n := len(w.refs)
	// One sort per distinct (Partition, Order).
	type ordering struct {
		perm                 []int32
		partStart, peerStart []bool
	}
	orderings := map[string]*ordering{}
	w.results = make([]windowResult, len(w.specs))
	for si, s := range w.specs {
		if err := ctx.Err(); err != nil {
			return err
		}
		id := fmt.Sprint(s.Partition, s.Order)
		o := orderings[id]
		if o == nil {
			var pkeys, okeys []sortCol
			for _, p := range s.Partition {
				f, err := w.flat(p)
				if err != nil {
					return err
				}
				pkeys = append(pkeys, sortCol{col: f, nullsFirst: true})
			}
			for _, k := range s.Order {
				f, err := w.flat(k.Column)
				if err != nil {
					return err
				}
				okeys = append(okeys, sortCol{col: f, desc: k.Desc, nullsFirst: k.NullsFirst})
			}
			// perm and the two flags per row stay; the sort's scratch
			// goes once it is done.
			scratch := int64(n) * sortScratch
			if err := w.grow(int64(n)*6 + scratch); err != nil {
				return err
			}
			o = &ordering{}
			o.perm, o.partStart, o.peerStart = sortRows(append(slices.Clone(pkeys), okeys...), len(pkeys), n)
			w.env.Budget.Shrink(scratch)
			w.charged -= scratch
			orderings[id] = o
			if si == 0 {
				w.perm = o.perm
			}
		}
		if err := w.evaluate(si, o.perm, o.partStart, o.peerStart); err != nil {
			return err
		}
	}
	if w.perm == nil {
		w.perm = []int32{}
	}
	return nil
}

// evaluate computes spec si over rows in the order perm, whose partitions
// and peer groups start where partStart and peerStart say.
func (w *window) evaluate(si int, perm []int32, partStart, peerStart []bool) error {
	s := w.specs[si]
	res := &w.results[si]
	n := len(perm)
	switch s.Func {
	case RowNumber, Rank, DenseRank:
		if err := w.grow(int64(n) * 8); err != nil {
			return err
		}
		res.ints = make([]int64, n)
		var num, rank, dense int64
		for i, r := range perm {
			if partStart[i] {
				num, rank, dense = 0, 0, 0
			}
			num++
			if peerStart[i] {
				rank, dense = num, dense+1
			}
			switch s.Func {
			case RowNumber:
				res.ints[r] = num
			case Rank:
				res.ints[r] = rank
			default:
				res.ints[r] = dense
			}
		}
		return nil
	case NTile, PercentRank, CumeDist:
		if err := w.grow(int64(n) * 8); err != nil {
			return err
		}
		w.distribute(s, res, perm, partStart, peerStart)
		return nil
	case FirstValue, LastValue, NthValue:
		if err := w.grow(int64(n) * 16); err != nil {
			return err
		}
		fs, fe, err := w.frames(s, perm, partStart, peerStart)
		if err != nil {
			return err
		}
		res.refs = make([]rowRef, n)
		for i, r := range perm {
			j := -1
			switch s.Func {
			case FirstValue:
				j = int(fs[i])
			case LastValue:
				j = int(fe[i]) - 1
			default:
				if s.Offset <= int64(fe[i]-fs[i]) {
					j = int(fs[i]) + int(s.Offset) - 1
				}
			}
			if fs[i] < fe[i] && j >= int(fs[i]) && j < int(fe[i]) {
				res.refs[r] = w.refs[perm[j]]
			} else {
				res.refs[r] = nullRef
			}
		}
		return nil
	case Lag, Lead:
		if err := w.grow(int64(n) * 8); err != nil {
			return err
		}
		res.refs = make([]rowRef, n)
		def := nullRef
		if s.Default != nil {
			def = rowRef{batch: int32(len(w.batches))}
		}
		for ps, pe := range partitions(partStart) {
			for i := ps; i < pe; i++ {
				j := int64(i) - s.Offset
				if s.Func == Lead {
					j = int64(i) + s.Offset
				}
				r := perm[i]
				if j >= int64(ps) && j < int64(pe) {
					res.refs[r] = w.refs[perm[j]]
				} else {
					res.refs[r] = def
				}
			}
		}
		return nil
	}
	var arg *flatCol
	if s.Agg != CountStar {
		var err error
		if arg, err = w.flat(s.Arg); err != nil {
			return err
		}
	}
	// The result (at most a decimal and a flag a row) and the peer ends.
	if err := w.grow(int64(n) * 21); err != nil {
		return err
	}
	return w.aggregate(si, arg, res, perm, partStart, peerStart)
}

// emit builds the output batch of input rows rows.
func (w *window) emit(rows []int32) arrow.RecordBatch {
	refs := make([]rowRef, len(rows))
	for i, r := range rows {
		refs[i] = w.refs[r]
	}
	arrs := make([]arrow.Array, 0, len(w.schema))
	for c := 0; c < w.nIn; c++ {
		arrs = append(arrs, gatherColumn(w.env.Mem, w.arrow.Field(c).Type, w.cols[c], refs))
	}
	for si, s := range w.specs {
		res := &w.results[si]
		typ := w.arrow.Field(w.nIn + si).Type
		switch {
		case res.refs != nil:
			col := w.cols[s.Arg]
			if s.Default != nil {
				col = append(slices.Clone(col), s.Default)
			}
			for i, r := range rows {
				refs[i] = res.refs[r]
			}
			arrs = append(arrs, gatherColumn(w.env.Mem, typ, col, refs))
		case res.ints != nil:
			b := array.NewInt64Builder(w.env.Mem)
			b.AppendValues(pick(res.ints, rows), pickValid(res.valid, rows))
			arrs = append(arrs, b.NewArray())
			b.Release()
		case res.flts != nil:
			b := array.NewFloat64Builder(w.env.Mem)
			b.AppendValues(pick(res.flts, rows), pickValid(res.valid, rows))
			arrs = append(arrs, b.NewArray())
			b.Release()
		default:
			b := array.NewDecimal128Builder(w.env.Mem, typ.(*arrow.Decimal128Type))
			b.AppendValues(pick(res.decs, rows), pickValid(res.valid, rows))
			arrs = append(arrs, b.NewArray())
			b.Release()
		}
	}
	return newBatchOwning(w.arrow, arrs, int64(len(rows)))
}

// pick returns vals[rows[0]], vals[rows[1]], ...
func pick[T any](vals []T, rows []int32) []T {
	out := make([]T, len(rows))
	for i, r := range rows {
		out[i] = vals[r]
	}
	return out
}

// pickValid is pick for validity, nil (no NULL) staying nil.
func pickValid(valid []bool, rows []int32) []bool {
	if valid == nil {
		return nil
	}
	return pick(valid, rows)
}

func (w *window) Close() {
	for _, b := range w.batches {
		b.Release()
	}
	for _, s := range w.specs {
		if s.Default != nil {
			s.Default.Release()
		}
	}
	w.specs = nil
	w.batches, w.cols, w.refs, w.flats, w.perm, w.results = nil, nil, nil, nil, nil, nil
	w.env.Budget.Shrink(w.charged)
	w.charged = 0
	w.done = true
	w.in.Close()
}
