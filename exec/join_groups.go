package exec

import (
	"fmt"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/bitutil"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/rowttl/rowttl"
	"github.com/rowttl/rowttl/schema"
)

// GroupDict groups a hash join's build rows by some of their columns, as
// GROUP BY would (NULL a group, -0 equal to 0, NaN to NaN): a dense id per
// group, and per group its values. A join built with it (NewHashJoinGrouped)
// outputs a pair's group id where an aggregate above would otherwise have
// the build columns gathered and hashed row by row; GroupValue then maps
// the aggregate's few groups back to the values. The values outlive the
// join, which its consumer may close before reading them: Release, at the
// end of the query, gives them back.
type GroupDict struct {
	cols    []int
	values  []arrow.Array
	budget  *Budget
	charged int64
}

// NewGroupDict returns the grouping of the build side by its columns
// cols.
func NewGroupDict(cols []int) *GroupDict { return &GroupDict{cols: cols} }

// Columns are the build columns the groups are of.
func (d *GroupDict) Columns() []int { return d.cols }

// Release gives back the groups' values.
func (d *GroupDict) Release() {
	for _, v := range d.values {
		v.Release()
	}
	d.values = nil
	d.budget.Shrink(d.charged)
	d.charged = 0
}

// groupBuild numbers the build rows by the dictionary's columns and keeps
// each group's values from its first row.
func (j *hashJoin) groupBuild() error {
	d := j.groups
	d.Release()
	types := make([]schema.Type, len(d.cols))
	rs := j.right.Schema()
	for i, c := range d.cols {
		types[i] = rs[c].Type
	}
	form := keyFormOf(types)
	m := newGroupMap(form)
	keys := rowKeys{form: form}
	j.gid = resize(j.gid, j.nBuild)
	var first []rowRef
	gids := make([]uint32, 0, joinChunk)
	cols := make([]arrow.Array, len(d.cols))
	for start := 0; start < j.nBuild; start += joinChunk {
		end := min(j.nBuild, start+joinChunk)
		for i, c := range d.cols {
			cols[i] = array.NewSlice(j.bcols[c], int64(start), int64(end))
		}
		keys.fill(cols)
		gids = resize(gids, end-start)
		m.find(&keys, allRows(end-start), gids)
		for i, g := range gids {
			j.gid[start+i] = int32(g)
			if int(g) == len(first) {
				first = append(first, rowRef{batch: 0, row: int32(start + i)})
			}
		}
		releaseCols(cols)
	}
	var n int64
	for _, c := range d.cols {
		var src []arrow.Array
		if j.bcols != nil {
			src = []arrow.Array{j.bcols[c]}
		}
		v := gatherColumn(j.env.Mem, rs[c].Type.Arrow(), src, first)
		d.values = append(d.values, v)
		n += dataBytes(v.Data())
	}
	if err := j.env.Budget.Grow("HashJoin groups", n); err != nil {
		d.Release()
		return err
	}
	d.budget, d.charged = j.env.Budget, n
	// A row no build row extends has NULL build columns: it belongs to the
	// group whose values are all NULL, if there is one.
	j.nullGid = -1
	for g := range first {
		all := true
		for _, v := range d.values {
			all = all && v.IsNull(g)
		}
		if all {
			j.nullGid = int32(g)
			break
		}
	}
	return nil
}

// gidColumn is the group ids of build rows r (-1 or nil: none, the NULL
// group's id or NULL), n of them.
func (j *hashJoin) gidColumn(r []int32, n int) arrow.Array {
	vals := memory.NewResizableBuffer(j.env.Mem)
	vals.Resize(n * 4)
	ids := arrow.Int32Traits.CastFromBytes(vals.Bytes())
	var valid *memory.Buffer
	nulls := 0
	for k := range n {
		switch {
		case r != nil && r[k] >= 0:
			ids[k] = j.gid[r[k]]
		case j.nullGid >= 0:
			ids[k] = j.nullGid
		default:
			nulls++
			ids[k] = 0
		}
	}
	if nulls > 0 {
		valid = memory.NewResizableBuffer(j.env.Mem)
		valid.Resize(int(bitutil.BytesForBits(int64(n))))
		bits := valid.Bytes()
		clear(bits)
		for k := range n {
			if r != nil && r[k] >= 0 {
				bitutil.SetBit(bits, k)
			}
		}
	}
	return makeArray(arrow.PrimitiveTypes.Int32, n, valid, nulls, vals)
}

// GroupValue is column Col of a GroupDict's columns for the group ids X
// gives (NULL for a NULL id), of type Typ, the build column's.
type GroupValue struct {
	Dict *GroupDict
	Col  int
	X    Expr
	Typ  schema.Type
	Name string
}

// Type implements Expr.
func (g *GroupValue) Type() schema.Type { return g.Typ }

func (g *GroupValue) String() string { return fmt.Sprintf("group_value(%s, %s)", g.X, g.Name) }

// Eval implements Expr.
func (g *GroupValue) Eval(env *Env, b arrow.RecordBatch) (arrow.Array, error) {
	if g.Col >= len(g.Dict.values) {
		return nil, rowttl.Errorf(rowttl.ErrInvalidArgument, "exec: %s read before its join was built", g)
	}
	x, err := g.X.Eval(env, b)
	if err != nil {
		return nil, err
	}
	defer x.Release()
	ids, ok := x.(*array.Int32)
	if !ok {
		return nil, rowttl.Errorf(rowttl.ErrInvalidArgument, "exec: %s of %s ids", g, x.DataType())
	}
	src := g.Dict.values[g.Col]
	refs := make([]rowRef, ids.Len())
	for i := range refs {
		id := ids.Value(i)
		if ids.IsNull(i) {
			refs[i] = nullRef
			continue
		}
		if id < 0 || int(id) >= src.Len() {
			return nil, rowttl.Errorf(rowttl.ErrInvalidArgument, "exec: %s: group id %d of %d", g, id, src.Len())
		}
		refs[i] = rowRef{batch: 0, row: id}
	}
	return gatherColumn(env.Mem, g.Typ.Arrow(), []arrow.Array{src}, refs), nil
}
