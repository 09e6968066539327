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
// and NaN equals NaN. A single key of an integer, DATE or DATETIME type
// takes a faster path.
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
// and Full, the unmatched right rows in right input order.
//
// A refused description is ErrInvalidArgument (ErrNotSupported for what
// the operator does not do) and leaves closing the inputs to the caller;
// once built, the join owns its inputs and Close closes them.
func NewHashJoin(env *Env, left, right Operator, kind JoinKind, leftKeys, rightKeys []int, residual Expr) (Operator, error) {
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
	var out Schema
	switch kind {
	case SemiJoin, AntiJoin, NullAwareAntiJoin:
		out = append(out, ls...)
	default:
		out = append(out, combined...)
		for i := range out {
			if i < len(ls) && (kind == RightJoin || kind == FullJoin) ||
				i >= len(ls) && (kind == LeftJoin || kind == FullJoin) {
				out[i].Nullable = true
			}
		}
	}
	j := &hashJoin{
		env: env, left: left, right: right, kind: kind, leftKeys: leftKeys, rightKeys: rightKeys,
		residual: residual, schema: out, outArrow: out.Arrow(), combined: combined.Arrow(),
		nLeft: len(ls), nRight: len(rs), nested: len(leftKeys) == 0,
	}
	if !j.nested {
		if len(leftKeys) == 1 && int64KeyType(ls[leftKeys[0]].Type.Arrow()) {
			j.intKeys = true
		} else {
			j.buildEnc = newKeyEncoder(rightKeys, false)
			j.probeEnc = newKeyEncoder(leftKeys, false)
		}
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

	built   bool
	done    bool
	err     error
	charged int64

	// The build side: its batches, and per build row (in input order) where
	// it lies and the next row with its key.
	build     []arrow.RecordBatch
	buildCols [][]arrow.Array // [column][batch]
	refs      []rowRef
	next      []int32
	// Per distinct key: its first and last build row.
	head, tail []int32
	intKeys    bool // the fast path: ints, not bytesT
	ints       *int64Table
	bytesT     *bytesTable
	buildEnc   *keyEncoder
	probeEnc   *keyEncoder
	keyBuf     []int64
	// anyNullKey: some build row has a NULL key (NullAwareAnti keeps nothing).
	anyNullKey bool
	// matchedR marks the build rows some pair kept (Right, Full).
	matchedR []bool

	// The probe batch in hand: its rows' key ids (-1: none), the row being
	// paired and its next candidate (-1: start the row afresh).
	probe    arrow.RecordBatch
	probeID  []int32
	row      int
	cand     int32
	matchedL []bool
	pairL    []int32
	pairR    []int32

	// After the probe side: the next build row to consider for Right/Full.
	rightRow int
	pending  []arrow.RecordBatch
}

func (j *hashJoin) Schema() Schema { return j.schema }

func (j *hashJoin) Next(ctx context.Context) (arrow.RecordBatch, error) {
	for {
		if len(j.pending) > 0 {
			b := j.pending[0]
			j.pending[0] = nil
			j.pending = j.pending[1:]
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
		if len(j.refs) == 0 && (j.kind == InnerJoin || j.kind == CrossJoin || j.kind == SemiJoin || j.kind == RightJoin) ||
			j.kind == NullAwareAntiJoin && j.anyNullKey {
			j.done = true
		}
		return nil
	}
	if j.probe == nil {
		b, err := j.left.Next(ctx)
		if err != nil {
			return err
		}
		if b == nil {
			return j.finish()
		}
		j.startProbe(b)
		return nil
	}
	if j.row < int(j.probe.NumRows()) && j.pairsNeeded() {
		return j.pairChunk(ctx)
	}
	return j.endProbe()
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
	n += int64(cap(j.refs))*8 + int64(cap(j.next))*4 + int64(cap(j.head)+cap(j.tail))*4 + int64(cap(j.matchedR))
	if j.ints != nil {
		n += j.ints.bytes()
	}
	if j.bytesT != nil {
		n += j.bytesT.bytes()
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
	j.buildCols = make([][]arrow.Array, j.nRight)
	for {
		b, err := j.right.Next(ctx)
		if err != nil {
			return err
		}
		if b == nil {
			break
		}
		bi := int32(len(j.build))
		j.build = append(j.build, b)
		for c := range j.buildCols {
			j.buildCols[c] = append(j.buildCols[c], b.Column(c))
		}
		if len(j.refs)+int(b.NumRows()) > math.MaxInt32 {
			return rowttl.Errorf(rowttl.ErrNotSupported, "HashJoin: a build side of more than %d rows", math.MaxInt32)
		}
		for i := 0; i < int(b.NumRows()); i++ {
			j.refs = append(j.refs, rowRef{batch: bi, row: int32(i)})
		}
		if err := j.grow(); err != nil {
			return err
		}
	}
	// The table is built once the build side's size is known, so that it
	// never grows. Charging its estimate first keeps a table too big for
	// the Budget from being made at all.
	if !j.nested {
		n := len(j.refs)
		est := int64(tableSize(n))*16 + int64(n)*12
		if err := j.env.Budget.Grow("HashJoin", est); err != nil {
			return err
		}
		j.env.Budget.Shrink(est)
		j.next = make([]int32, n)
		if j.intKeys {
			j.ints = newInt64Table(n)
		} else {
			j.bytesT = newBytesTable(n)
		}
		base := int32(0)
		for _, b := range j.build {
			if err := ctx.Err(); err != nil {
				return err
			}
			j.linkBatch(b, base)
			base += int32(b.NumRows())
			if err := j.grow(); err != nil {
				return err
			}
		}
	}
	if j.kind == RightJoin || j.kind == FullJoin {
		j.matchedR = make([]bool, len(j.refs))
	}
	return j.grow()
}

// linkBatch enters the keys of build batch b, whose first row is build
// row base, into the table.
func (j *hashJoin) linkBatch(b arrow.RecordBatch, base int32) {
	if j.intKeys {
		a := b.Column(j.rightKeys[0])
		j.keyBuf = int64Keys(j.keyBuf[:0], a)
		nulls := a.NullN() > 0
		for i, k := range j.keyBuf {
			if nulls && a.IsNull(i) {
				j.link(base+int32(i), -1)
				continue
			}
			id, _ := j.ints.insert(k)
			j.link(base+int32(i), id)
		}
		return
	}
	j.buildEnc.encode(b)
	for i := 0; i < int(b.NumRows()); i++ {
		if j.buildEnc.isNull(i) {
			j.link(base+int32(i), -1)
			continue
		}
		id, _ := j.bytesT.insert(j.buildEnc.key(i))
		j.link(base+int32(i), id)
	}
}

// link appends build row r to the rows of key id (-1: a NULL key).
func (j *hashJoin) link(r, id int32) {
	j.next[r] = -1
	if id < 0 {
		j.anyNullKey = true
		return
	}
	if int(id) == len(j.head) {
		j.head = append(j.head, r)
		j.tail = append(j.tail, r)
		return
	}
	j.next[j.tail[id]] = r
	j.tail[id] = r
}

func (j *hashJoin) startProbe(b arrow.RecordBatch) {
	j.probe = b
	j.row, j.cand = 0, -1
	n := int(b.NumRows())
	j.matchedL = append(j.matchedL[:0], make([]bool, n)...)
	j.probeID = j.probeID[:0]
	switch {
	case j.nested:
	case j.intKeys:
		a := b.Column(j.leftKeys[0])
		j.keyBuf = int64Keys(j.keyBuf[:0], a)
		nulls := a.NullN() > 0
		for i, k := range j.keyBuf {
			id := int32(-1)
			if !nulls || a.IsValid(i) {
				id = j.ints.find(k)
			}
			j.probeID = append(j.probeID, id)
		}
	default:
		j.probeEnc.encode(b)
		for i := 0; i < n; i++ {
			id := int32(-1)
			if !j.probeEnc.isNull(i) {
				id = j.bytesT.find(j.probeEnc.key(i))
			}
			j.probeID = append(j.probeID, id)
		}
	}
}

// firstCandidate returns the first build row that may pair with probe
// row i, or -1.
func (j *hashJoin) firstCandidate(i int) int32 {
	if j.nested {
		if len(j.refs) == 0 {
			return -1
		}
		return 0
	}
	if id := j.probeID[i]; id >= 0 {
		return j.head[id]
	}
	return -1
}

func (j *hashJoin) nextCandidate(c int32) int32 {
	if j.nested {
		if int(c)+1 < len(j.refs) {
			return c + 1
		}
		return -1
	}
	return j.next[c]
}

// pairChunk pairs probe rows with their candidates, up to BatchRows pairs,
// keeps those the residual passes, and queues them for output.
func (j *hashJoin) pairChunk(ctx context.Context) error {
	j.pairL, j.pairR = j.pairL[:0], j.pairR[:0]
	n := int(j.probe.NumRows())
	for j.row < n && len(j.pairL) < BatchRows {
		if j.cand < 0 {
			j.cand = j.firstCandidate(j.row)
		}
		for j.cand >= 0 && len(j.pairL) < BatchRows {
			j.pairL = append(j.pairL, int32(j.row))
			j.pairR = append(j.pairR, j.cand)
			j.cand = j.nextCandidate(j.cand)
		}
		if j.cand >= 0 {
			break
		}
		j.row++
	}
	if len(j.pairL) == 0 {
		return nil
	}
	emit := j.kind != SemiJoin && j.kind != AntiJoin
	var pairs arrow.RecordBatch
	if j.residual != nil || emit {
		pairs = j.pairBatch(j.combined, j.pairL, j.pairR, true)
	}
	if j.residual != nil {
		res, err := j.residual.Eval(j.env, pairs)
		if err != nil {
			pairs.Release()
			return fmt.Errorf("HashJoin residual %s: %w", j.residual, err)
		}
		keep := res.(*array.Boolean)
		var keptAt []rowRef // positions in pairs of the kept pairs
		w := 0
		for k := range j.pairL {
			if keep.IsValid(k) && keep.Value(k) {
				j.pairL[w], j.pairR[w] = j.pairL[k], j.pairR[k]
				keptAt = append(keptAt, rowRef{batch: 0, row: int32(k)})
				w++
			}
		}
		res.Release()
		if emit && w < len(j.pairL) {
			var kept arrow.RecordBatch
			if w > 0 {
				kept = gatherBatch(j.env.Mem, j.combined, []arrow.RecordBatch{pairs}, allColumns(j.nLeft+j.nRight), keptAt)
			}
			pairs.Release()
			pairs = kept
		}
		j.pairL, j.pairR = j.pairL[:w], j.pairR[:w]
	}
	for k, l := range j.pairL {
		j.matchedL[l] = true
		if j.matchedR != nil {
			j.matchedR[j.pairR[k]] = true
		}
	}
	if pairs != nil {
		if emit && pairs.NumRows() > 0 {
			j.pending = append(j.pending, rebatch(j.outArrow, pairs))
		} else {
			pairs.Release()
		}
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
// for NULL) into a batch of s: left columns, then right columns when
// withRight.
func (j *hashJoin) pairBatch(s *arrow.Schema, l, r []int32, withRight bool) arrow.RecordBatch {
	n := len(l)
	if l == nil {
		n = len(r)
	}
	arrs := make([]arrow.Array, 0, s.NumFields())
	refs := make([]rowRef, n)
	for k := range refs {
		if l == nil || l[k] < 0 {
			refs[k] = nullRef
		} else {
			refs[k] = rowRef{batch: 0, row: l[k]}
		}
	}
	for c := 0; c < j.nLeft; c++ {
		var src []arrow.Array
		if j.probe != nil {
			src = []arrow.Array{j.probe.Column(c)}
		}
		arrs = append(arrs, gatherColumn(j.env.Mem, s.Field(c).Type, src, refs))
	}
	if withRight {
		for k := range refs {
			if r == nil || r[k] < 0 {
				refs[k] = nullRef
			} else {
				refs[k] = j.refs[r[k]]
			}
		}
		for c := 0; c < j.nRight; c++ {
			arrs = append(arrs, gatherColumn(j.env.Mem, s.Field(j.nLeft+c).Type, j.buildCols[c], refs))
		}
	}
	return newBatchOwning(s, arrs, int64(n))
}

// endProbe emits what a finished probe batch adds besides its pairs and
// lets it go.
func (j *hashJoin) endProbe() error {
	var rows []int32
	n := int(j.probe.NumRows())
	switch j.kind {
	case LeftJoin, FullJoin, AntiJoin, SemiJoin:
		keepMatched := j.kind == SemiJoin
		if !j.pairsNeeded() {
			for i := 0; i < n; i++ {
				j.matchedL[i] = j.firstCandidate(i) >= 0
			}
		}
		for i := 0; i < n; i++ {
			if j.matchedL[i] == keepMatched {
				rows = append(rows, int32(i))
			}
		}
	case NullAwareAntiJoin:
		if len(j.refs) == 0 {
			rows = allRows(n)
			break
		}
		key := j.probe.Column(j.leftKeys[0])
		for i := 0; i < n; i++ {
			if key.IsValid(i) && j.probeID[i] < 0 {
				rows = append(rows, int32(i))
			}
		}
	}
	if len(rows) > 0 {
		withRight := j.kind == LeftJoin || j.kind == FullJoin
		for start := 0; start < len(rows); start += BatchRows {
			end := min(start+BatchRows, len(rows))
			if !withRight && start == 0 && end == n && rows[n-1] == int32(n-1) {
				// Every row is kept: pass the batch on as it is.
				j.probe.Retain()
				j.pending = append(j.pending, rebatch(j.outArrow, j.probe))
				break
			}
			j.pending = append(j.pending, j.pairBatch(j.outArrow, rows[start:end], nil, withRight))
		}
	}
	j.probe.Release()
	j.probe = nil
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
	for j.rightRow < len(j.refs) && len(rows) < BatchRows {
		if !j.matchedR[j.rightRow] {
			rows = append(rows, int32(j.rightRow))
		}
		j.rightRow++
	}
	if len(rows) > 0 {
		j.pending = append(j.pending, j.pairBatch(j.outArrow, nil, rows, true))
	}
	if j.rightRow == len(j.refs) {
		j.done = true
	}
	return nil
}

func (j *hashJoin) Close() {
	for _, b := range j.pending {
		b.Release()
	}
	j.pending = nil
	if j.probe != nil {
		j.probe.Release()
		j.probe = nil
	}
	for _, b := range j.build {
		b.Release()
	}
	j.build, j.buildCols, j.refs, j.next, j.head, j.tail, j.matchedR = nil, nil, nil, nil, nil, nil, nil
	j.ints, j.bytesT = nil, nil
	j.env.Budget.Shrink(j.charged)
	j.charged = 0
	j.done = true
	j.left.Close()
	j.right.Close()
}
