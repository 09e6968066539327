package exec

import (
	"context"
	"fmt"
	"math"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/rowttl/rowttl"
	"github.com/rowttl/rowttl/schema"
)

// NewHashJoin returns the join of left and right.
//
// Roles. right is the build side: it is read to its end and held (charged
// to env.Budget as "HashJoin") before the first left batch is read; left
// is the probe side, streamed batch by batch. The planner builds on the
// smaller input by swapping the inputs and turning LeftJoin into RightJoin
// (and back); Semi, Anti and NullAwareAnti always keep left rows. The
// build side holds at most 2^31-1 rows (ErrNotSupported past that).
//
// Keys. leftKeys[i] of left equals rightKeys[i] of right; both lists have
// the same length, and each pair has identical Arrow types
// (schema.Type.Arrow: DECIMAL precision and scale both match; VARCHAR(n),
// CHAR(n) and STRING all pair, being strings). Keys of different integer
// widths, or an integer with a DECIMAL, must be cast to one type by the
// planner first; anything else is ErrInvalidArgument. NULL equals
// nothing, NULL included. FLOAT and DOUBLE compare as SQL does, -0 = 0,
// and NaN equals NaN. Keys are those of GROUP BY (keys.go); a single
// fixed-width key whose build values are dense is addressed directly, and
// a Semi or Anti join without residual keeps only the set of keys
// (join_table.go).
//
// No keys. With no keys every pair of rows is a candidate (a nested loop
// over the held right side, in batches): CrossJoin must have none, and
// Inner, Left, Right, Full, Semi and Anti accept none (a join whose ON
// has no equality, all of it in residual). NullAwareAntiJoin needs
// exactly one key and no residual.
//
// Residual. residual (nil: none) is a BOOLEAN expression over the combined
// row, left columns then right columns (indices len(left.Schema()) and up
// are right's); only TRUE keeps a pair. An outer join's row whose pairs
// all fail it is emitted once, NULL-extended; a Semi join keeps a left row
// with at least one passing pair, an Anti join one with none.
//
// Output. Left columns then right columns, with their input names, the
// outer side's columns made nullable (right's for Left, left's for Right,
// both for Full); Semi, Anti and NullAwareAnti output left columns only.
// Batches hold at most BatchRows rows, however many rows one probe row
// matches. Order: for each left batch in turn, its matched pairs in left
// row order (a left row's right matches in right input order), then, for
// Left and Full, its unmatched rows; after the last left batch, for Right
// and Full, the unmatched right rows in right input order. An Inner,
// Left, Semi, Anti or NullAwareAnti join without residual probes on
// Env.Parallelism goroutines (join_parallel.go), its output the same
// batches in the same order.
//
// A refused description is ErrInvalidArgument (ErrNotSupported for what
// the operator does not do) and leaves closing the inputs to the caller;
// once built, the join owns its inputs and Close closes them.
func NewHashJoin(env *Env, left, right Operator, kind JoinKind, leftKeys, rightKeys []int, residual Expr) (Operator, error) {
	return NewHashJoinOutput(env, left, right, kind, leftKeys, rightKeys, residual, nil)
}

// NewHashJoinOutput is NewHashJoin whose output is only the columns out
// names, in that order, by their index in NewHashJoin's output (left
// columns then right ones; left ones for Semi, Anti and NullAwareAnti);
// nil means all of them. A join builds only the columns it outputs, so a
// consumer that reads few of them (an aggregate over the join, a count of
// a semi join's rows: out may be empty) spares the gathering of the rest.
func NewHashJoinOutput(env *Env, left, right Operator, kind JoinKind, leftKeys, rightKeys []int, residual Expr, out []int) (Operator, error) {
	return NewHashJoinGrouped(env, left, right, kind, leftKeys, rightKeys, residual, out, nil)
}

// NewHashJoinGrouped is NewHashJoinOutput that also numbers the build rows
// by the values of groups' columns of right (see GroupDict): out may then
// name, by the index one past the last column of NewHashJoin's output, a
// column of INT holding each pair's build-row group id (NULL for a row no
// build row extends). An aggregate grouping on that column instead of the
// build columns neither gathers nor hashes their values; GroupValue maps
// its groups back to them. Semi, Anti and NullAwareAnti joins take no
// groups.
func NewHashJoinGrouped(env *Env, left, right Operator, kind JoinKind, leftKeys, rightKeys []int, residual Expr, out []int, groups *GroupDict) (Operator, error) {
	ls, rs := left.Schema(), right.Schema()
	if kind < InnerJoin || kind > NullAwareAntiJoin {
		return nil, rowttl.Errorf(rowttl.ErrInvalidArgument, "HashJoin: unknown join kind %d", kind)
	}
	if len(leftKeys) != len(rightKeys) {
		return nil, rowttl.Errorf(rowttl.ErrInvalidArgument, "HashJoin: %d left keys and %d right keys",
			len(leftKeys), len(rightKeys))
	}
	for i := range leftKeys {
		if leftKeys[i] < 0 || leftKeys[i] >= len(ls) || rightKeys[i] < 0 || rightKeys[i] >= len(rs) {
			return nil, rowttl.Errorf(rowttl.ErrInvalidArgument,
				"HashJoin: key %d names column %d of %d left columns and %d of %d right columns",
				i, leftKeys[i], len(ls), rightKeys[i], len(rs))
		}
	}
	if kind == CrossJoin && len(leftKeys) > 0 {
		return nil, rowttl.Errorf(rowttl.ErrInvalidArgument, "HashJoin: a CROSS join has no keys")
	}
	if kind == NullAwareAntiJoin && (len(leftKeys) != 1 || residual != nil) {
		return nil, rowttl.Errorf(rowttl.ErrNotSupported,
			"HashJoin: a NULL AWARE LEFT ANTI join takes exactly one key and no residual (got %d keys)",
			len(leftKeys))
	}
	if err := checkSameTypes("HashJoin", ls, rs, leftKeys, rightKeys); err != nil {
		return nil, err
	}
	combined := append(append(Schema{}, ls...), rs...)
	if residual != nil && residual.Type().Kind != schema.Boolean {
		return nil, rowttl.Errorf(rowttl.ErrInvalidArgument, "HashJoin: residual %s is %s, not BOOLEAN",
			residual, residual.Type())
	}
	var full Schema
	switch kind {
	case SemiJoin, AntiJoin, NullAwareAntiJoin:
		full = append(full, ls...)
	default:
		full = append(full, combined...)
		for i := range full {
			if i < len(ls) && (kind == RightJoin || kind == FullJoin) ||
				i >= len(ls) && (kind == LeftJoin || kind == FullJoin) {
				full[i].Nullable = true
			}
		}
	}
	if out == nil {
		out = allColumns(len(full))
	}
	if groups != nil {
		if kind == SemiJoin || kind == AntiJoin || kind == NullAwareAntiJoin {
			return nil, rowttl.Errorf(rowttl.ErrInvalidArgument, "HashJoin: a %s join has no build groups", kind)
		}
		for _, c := range groups.cols {
			if c < 0 || c >= len(rs) {
				return nil, rowttl.Errorf(rowttl.ErrInvalidArgument, "HashJoin: group column %d of %d right columns", c, len(rs))
			}
			if err := checkKeyType("HashJoin", rs[c].Type); err != nil {
				return nil, err
			}
		}
		full = append(full, Column{Name: "group_id", Type: schema.IntType, Nullable: true})
	}
	schemaOut := make(Schema, len(out))
	for i, c := range out {
		if c < 0 || c >= len(full) {
			return nil, rowttl.Errorf(rowttl.ErrInvalidArgument, "HashJoin: output column %d of %d", c, len(full))
		}
		schemaOut[i] = full[c]
	}
	j := &hashJoin{
		env: env, left: left, right: right, kind: kind, leftKeys: leftKeys, rightKeys: rightKeys,
		residual: residual, schema: schemaOut, outArrow: schemaOut.Arrow(), combined: combined.Arrow(),
		nLeft: len(ls), nRight: len(rs), nested: len(leftKeys) == 0, outCols: out,
		allCols: allColumns(len(combined)), groups: groups,
	}
	j.ps = &prober{j: j}
	j.outAll = len(out) == len(full) && groups == nil
	for i, c := range out {
		j.outAll = j.outAll && c == i
	}
	if !j.nested {
		types := make([]schema.Type, len(leftKeys))
		for i, k := range leftKeys {
			types[i] = ls[k].Type
		}
		exists := (kind == SemiJoin || kind == AntiJoin || kind == NullAwareAntiJoin) && residual == nil
		j.table = newJoinTable(keyFormOf(types), exists)
	}
	return j, nil
}

type hashJoin struct {
	env                 *Env
	left, right         Operator
	kind                JoinKind
	leftKeys, rightKeys []int
	residual            Expr
	schema              Schema
	outArrow, combined  *arrow.Schema
	nLeft, nRight       int
	nested              bool
	// outCols are the output's columns by their index in the combined row
	// (left columns, then right ones); outAll says they are all of them.
	outCols []int
	outAll  bool
	allCols []int
	// groups numbers the build rows (gid, per build row) for the output
	// column nLeft+nRight.
	groups  *GroupDict
	gid     []int32
	nullGid int32
	// onRange is told the build keys' range (OnBuildKeyRange).
	onRange func(lo, hi int64)

	built   bool
	done    bool
	err     error
	charged int64

	// The build side: its batches while it is read, then its columns, one
	// array each (build row r is row r of every one), and nBuild rows.
	build  []arrow.RecordBatch
	bcols  []arrow.Array
	nBuild int
	table  *joinTable
	// matchedR marks the build rows some pair kept (Right, Full).
	matchedR []bool

	// ps probes batch after batch on the calling goroutine; par, when
	// set, probes them on several (join_parallel.go).
	ps  *prober
	par *parallelProbe

	// After the probe side: the next build row to consider for Right/Full.
	rightRow int
}

// prober is the state of probing one batch: the batch in hand, its rows'
// first matching build rows (-1: none), the row being paired and its next
// candidate (-1: start the row afresh), and the output batches made.
type prober struct {
	j        *hashJoin
	probe    arrow.RecordBatch
	first    []int32
	row      int
	cand     int32
	matchedL []bool
	pairL    []int32
	pairR    []int32
	pending  []arrow.RecordBatch
	scratch  probeScratch
}

func (j *hashJoin) Schema() Schema { return j.schema }

func (j *hashJoin) Next(ctx context.Context) (arrow.RecordBatch, error) {
	for {
		if ps := j.ps; len(ps.pending) > 0 {
			b := ps.pending[0]
			ps.pending[0] = nil
			ps.pending = ps.pending[1:]
			return b, nil
		}
		if j.done {
			return nil, nil
		}
		if j.err != nil {
			return nil, j.err
		}
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		if err := j.step(ctx); err != nil {
			// A half-done step cannot be resumed: every later call fails
			// the same way.
			j.err = err
			return nil, err
		}
	}
}

// step does one bounded piece of work: builds, or pairs up to BatchRows
// candidates, or finishes a probe batch, or emits unmatched build rows.
func (j *hashJoin) step(ctx context.Context) error {
	if !j.built {
		if err := j.buildSide(ctx); err != nil {
			return err
		}
		j.built = true
		if j.nBuild == 0 && (j.kind == InnerJoin || j.kind == CrossJoin || j.kind == SemiJoin || j.kind == RightJoin) ||
			j.kind == NullAwareAntiJoin && j.table.anyNull {
			j.done = true
		}
		if !j.done && j.parallelOK() {
			j.par = j.startParallel(ctx)
		}
		return nil
	}
	if j.par != nil {
		more, err := j.par.next(ctx, j.ps)
		if err != nil || more {
			return err
		}
		j.stopParallel()
		return j.finish()
	}
	ps := j.ps
	if ps.probe == nil {
		b, err := j.left.Next(ctx)
		if err != nil {
			return err
		}
		if b == nil {
			return j.finish()
		}
		ps.startProbe(b)
		return nil
	}
	if ps.row < int(ps.probe.NumRows()) && j.pairsNeeded() {
		return ps.pairChunk(ctx)
	}
	return ps.endProbe()
}

// pairsNeeded says whether the kind needs each pair (an output row or a
// residual to evaluate) rather than whether a left row has a match.
func (j *hashJoin) pairsNeeded() bool {
	switch j.kind {
	case SemiJoin, AntiJoin, NullAwareAntiJoin:
		return j.residual != nil
	}
	return true
}

func (j *hashJoin) grow() error {
	n := int64(0)
	for _, b := range j.build {
		n += batchBytes(b)
	}
	for _, c := range j.bcols {
		n += dataBytes(c.Data())
	}
	n += int64(cap(j.matchedR)) + int64(cap(j.gid))*4
	if j.table != nil {
		n += j.table.bytes()
	}
	if n > j.charged {
		if err := j.env.Budget.Grow("HashJoin", n-j.charged); err != nil {
			return err
		}
		j.charged = n
	}
	return nil
}

func (j *hashJoin) buildSide(ctx context.Context) error {
	for {
		b, err := j.right.Next(ctx)
		if err != nil {
			return err
		}
		if b == nil {
			break
		}
		j.build = append(j.build, b)
		if j.nBuild+int(b.NumRows()) > math.MaxInt32 {
			return rowttl.Errorf(rowttl.ErrNotSupported, "HashJoin: a build side of more than %d rows", math.MaxInt32)
		}
		j.nBuild += int(b.NumRows())
		if err := j.grow(); err != nil {
			return err
		}
	}
	if err := j.concatBuild(); err != nil {
		return err
	}
	// The table is built once the build side's size is known, so that it
	// never grows. Charging its estimate first keeps a table too big for
	// the Budget from being made at all.
	if !j.nested {
		if err := ctx.Err(); err != nil {
			return err
		}
		est := estimateJoinTable(j.nBuild)
		if err := j.env.Budget.Grow("HashJoin", est); err != nil {
			return err
		}
		j.env.Budget.Shrink(est)
		if j.nBuild > 0 {
			keys := make([]arrow.Array, len(j.rightKeys))
			for i, k := range j.rightKeys {
				keys[i] = j.bcols[k]
			}
			j.table.build(keys)
		}
		if err := j.grow(); err != nil {
			return err
		}
	}
	if j.kind == RightJoin || j.kind == FullJoin {
		j.matchedR = make([]bool, j.nBuild)
	}
	if j.groups != nil {
		if err := j.groupBuild(); err != nil {
			return err
		}
	}
	if j.onRange != nil && j.table != nil && j.table.hasRange {
		j.onRange(j.table.keyLo, j.table.keyHi)
	}
	return j.grow()
}

// OnBuildKeyRange has a hash join call f with its least and greatest build
// key once it holds its build side, before it reads its first probe batch,
// so that whoever produces the probe rows may skip those outside the range
// (a scan's zone maps skip their pages): for a join of one integer key
// (TINYINT to BIGINT) that keeps no probe row without a match (Inner,
// Semi, Right). It reports whether f will be called: not for any other
// join or operator, nor once the join has started. f is not called when
// no build row has a key.
func OnBuildKeyRange(op Operator, f func(lo, hi int64)) bool {
	j, ok := op.(*hashJoin)
	if !ok || j.built || j.nested || len(j.leftKeys) != 1 {
		return false
	}
	switch j.kind {
	case InnerJoin, SemiJoin, RightJoin:
	default:
		return false
	}
	switch j.left.Schema()[j.leftKeys[0]].Type.Kind {
	case schema.TinyInt, schema.SmallInt, schema.Int, schema.BigInt:
	default:
		return false
	}
	j.onRange = f
	return true
}

// concatBuild makes the build side's batches one array per column, so
// that a build row is one index into every column wherever it came from.
func (j *hashJoin) concatBuild() error {
	if len(j.build) == 0 {
		return nil
	}
	j.bcols = make([]arrow.Array, 0, j.nRight)
	if len(j.build) == 1 {
		for _, c := range j.build[0].Columns() {
			c.Retain()
			j.bcols = append(j.bcols, c)
		}
		j.build[0].Release()
		j.build = nil
		return nil
	}
	// The batches' columns are held apart, so that each column's parts go
	// as soon as it is copied: two copies of one column at a time, not of
	// the whole build side.
	parts := make([][]arrow.Array, j.nRight)
	var est int64
	for c := range parts {
		var n int64
		for _, b := range j.build {
			a := b.Column(c)
			a.Retain()
			parts[c] = append(parts[c], a)
			n += dataBytes(a.Data())
		}
		est = max(est, n)
	}
	for _, b := range j.build {
		b.Release()
	}
	j.build = nil
	defer func() {
		for _, ps := range parts {
			for _, a := range ps {
				a.Release()
			}
		}
	}()
	if err := j.env.Budget.Grow("HashJoin", est); err != nil {
		return err
	}
	defer j.env.Budget.Shrink(est)
	for c := range parts {
		a, err := array.Concatenate(parts[c], j.env.Mem)
		if err != nil {
			return rowttl.Errorf(rowttl.ErrNotSupported, "HashJoin: build side column %s: %w", j.right.Schema()[c].Name, err)
		}
		for _, p := range parts[c] {
			p.Release()
		}
		parts[c] = nil
		j.bcols = append(j.bcols, a)
	}
	return nil
}

func (p *prober) startProbe(b arrow.RecordBatch) {
	j := p.j
	p.probe = b
	p.row, p.cand = 0, -1
	n := int(b.NumRows())
	p.matchedL = resize(p.matchedL, n)
	clear(p.matchedL)
	if !j.nested {
		keys := make([]arrow.Array, len(j.leftKeys))
		for i, k := range j.leftKeys {
			keys[i] = b.Column(k)
		}
		p.first = j.table.probe(p.first, keys, &p.scratch)
	}
}

// firstCandidate returns the first build row that may pair with probe
// row i, or -1.
func (p *prober) firstCandidate(i int) int32 {
	j := p.j
	if j.nested {
		if j.nBuild == 0 {
			return -1
		}
		return 0
	}
	return p.first[i]
}

func (p *prober) nextCandidate(c int32) int32 {
	j := p.j
	if j.nested {
		if int(c)+1 < j.nBuild {
			return c + 1
		}
		return -1
	}
	return j.table.next[c]
}

// pairChunk pairs probe rows with their candidates, up to BatchRows pairs,
// keeps those the residual passes, and queues them for output.
func (p *prober) pairChunk(ctx context.Context) error {
	j := p.j
	p.pairL, p.pairR = p.pairL[:0], p.pairR[:0]
	n := int(p.probe.NumRows())
	if j.nested {
		for p.row < n && len(p.pairL) < BatchRows {
			if p.cand < 0 {
				p.cand = p.firstCandidate(p.row)
			}
			for p.cand >= 0 && len(p.pairL) < BatchRows {
				p.pairL = append(p.pairL, int32(p.row))
				p.pairR = append(p.pairR, p.cand)
				p.cand = p.nextCandidate(p.cand)
			}
			if p.cand >= 0 {
				break
			}
			p.row++
		}
	} else {
		// The same walk over the table's chains, inlined.
		first, next := p.first, j.table.next
		pairL, pairR := p.pairL, p.pairR
		row, cand := p.row, p.cand
		for row < n && len(pairL) < BatchRows {
			if cand < 0 {
				cand = first[row]
			}
			for cand >= 0 && len(pairL) < BatchRows {
				pairL = append(pairL, int32(row))
				pairR = append(pairR, cand)
				cand = next[cand]
			}
			if cand >= 0 {
				break
			}
			row++
		}
		p.pairL, p.pairR, p.row, p.cand = pairL, pairR, row, cand
	}
	if len(p.pairL) == 0 {
		return nil
	}
	emit := j.kind != SemiJoin && j.kind != AntiJoin
	var pairs arrow.RecordBatch
	if j.residual != nil {
		pairs = p.pairBatch(j.combined, j.allCols, p.pairL, p.pairR)
		res, err := j.residual.Eval(j.env, pairs)
		if err != nil {
			pairs.Release()
			return fmt.Errorf("HashJoin residual %s: %w", j.residual, err)
		}
		keep := res.(*array.Boolean)
		w := 0
		for k := range p.pairL {
			if keep.IsValid(k) && keep.Value(k) {
				p.pairL[w], p.pairR[w] = p.pairL[k], p.pairR[k]
				w++
			}
		}
		res.Release()
		if !emit || !j.outAll || w < len(p.pairL) {
			pairs.Release()
			pairs = nil
		}
		p.pairL, p.pairR = p.pairL[:w], p.pairR[:w]
	}
	for k, l := range p.pairL {
		p.matchedL[l] = true
		if j.matchedR != nil {
			j.matchedR[p.pairR[k]] = true
		}
	}
	if emit && len(p.pairL) > 0 {
		if pairs == nil {
			pairs = p.pairBatch(j.outArrow, j.outCols, p.pairL, p.pairR)
		} else {
			pairs = rebatch(j.outArrow, pairs)
		}
		p.pending = append(p.pending, pairs)
	} else if pairs != nil {
		pairs.Release()
	}
	return ctx.Err()
}

func allColumns(n int) []int {
	c := make([]int, n)
	for i := range c {
		c[i] = i
	}
	return c
}

// pairBatch gathers the rows of pairs (probe row l[k], build row r[k]; -1
// or a nil l or r for NULL) into a batch of s, whose columns are cols of
// the combined row (left columns, then right ones). A probe side kept
// whole and in order is passed on without a copy.
func (p *prober) pairBatch(s *arrow.Schema, cols []int, l, r []int32) arrow.RecordBatch {
	j := p.j
	n := len(l)
	if l == nil {
		n = len(r)
	}
	arrs := make([]arrow.Array, 0, len(cols))
	// nil l or r: every row NULL on that side.
	nullsOf := func(x []int32) []int32 {
		if x != nil {
			return x
		}
		x = make([]int32, n)
		for k := range x {
			x[k] = -1
		}
		return x
	}
	whole := p.probe != nil && l != nil && n == int(p.probe.NumRows())
	for k := 0; whole && k < n; k++ {
		whole = l[k] == int32(k)
	}
	for i, c := range cols {
		typ := s.Field(i).Type
		if c == j.nLeft+j.nRight && j.groups != nil {
			arrs = append(arrs, j.gidColumn(r, n))
			continue
		}
		if c < j.nLeft {
			if whole {
				a := p.probe.Column(c)
				a.Retain()
				arrs = append(arrs, a)
				continue
			}
			l = nullsOf(l)
			var src arrow.Array
			if p.probe != nil {
				src = p.probe.Column(c)
			}
			arrs = append(arrs, gatherIndexed(j.env.Mem, typ, src, l))
			continue
		}
		r = nullsOf(r)
		var src arrow.Array
		if j.bcols != nil {
			src = j.bcols[c-j.nLeft]
		}
		arrs = append(arrs, gatherIndexed(j.env.Mem, typ, src, r))
	}
	return newBatchOwning(s, arrs, int64(n))
}

// endProbe emits what a finished probe batch adds besides its pairs and
// lets it go.
func (p *prober) endProbe() error {
	j := p.j
	var rows []int32
	n := int(p.probe.NumRows())
	switch j.kind {
	case LeftJoin, FullJoin, AntiJoin, SemiJoin:
		keepMatched := j.kind == SemiJoin
		if !j.pairsNeeded() {
			for i := 0; i < n; i++ {
				p.matchedL[i] = p.firstCandidate(i) >= 0
			}
		}
		for i := 0; i < n; i++ {
			if p.matchedL[i] == keepMatched {
				rows = append(rows, int32(i))
			}
		}
	case NullAwareAntiJoin:
		if j.nBuild == 0 {
			rows = allRows(n)
			break
		}
		key := p.probe.Column(j.leftKeys[0])
		for i := 0; i < n; i++ {
			if key.IsValid(i) && p.first[i] < 0 {
				rows = append(rows, int32(i))
			}
		}
	}
	for start := 0; start < len(rows); start += BatchRows {
		end := min(start+BatchRows, len(rows))
		p.pending = append(p.pending, p.pairBatch(j.outArrow, j.outCols, rows[start:end], nil))
	}
	p.probe.Release()
	p.probe = nil
	return nil
}

func allRows(n int) []int32 {
	r := make([]int32, n)
	for i := range r {
		r[i] = int32(i)
	}
	return r
}

// finish emits, for Right and Full, the build rows no pair kept, a batch
// of at most BatchRows at a time.
func (j *hashJoin) finish() error {
	if j.matchedR == nil {
		j.done = true
		return nil
	}
	var rows []int32
	for j.rightRow < j.nBuild && len(rows) < BatchRows {
		if !j.matchedR[j.rightRow] {
			rows = append(rows, int32(j.rightRow))
		}
		j.rightRow++
	}
	if len(rows) > 0 {
		j.ps.pending = append(j.ps.pending, j.ps.pairBatch(j.outArrow, j.outCols, nil, rows))
	}
	if j.rightRow == j.nBuild {
		j.done = true
	}
	return nil
}

// release lets go of what the prober holds.
func (p *prober) release() {
	for _, b := range p.pending {
		b.Release()
	}
	p.pending = nil
	if p.probe != nil {
		p.probe.Release()
		p.probe = nil
	}
}

func (j *hashJoin) Close() {
	j.stopParallel()
	j.ps.release()
	for _, b := range j.build {
		b.Release()
	}
	j.build = nil
	for _, c := range j.bcols {
		c.Release()
	}
	j.bcols, j.table, j.matchedR = nil, nil, nil
	j.env.Budget.Shrink(j.charged)
	j.charged = 0
	j.done = true
	j.left.Close()
	j.right.Close()
}
