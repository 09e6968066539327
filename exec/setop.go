package exec

import (
	"context"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/rowttl/rowttl"
	"github.com/rowttl/rowttl/schema"
)

// NewSetOp returns op applied to the rows of left and right.
//
// Inputs. Both have the same number of columns and, column by column,
// identical Arrow types (schema.Type.Arrow): the planner casts first.
// Output columns take left's names; a column is nullable when either
// input's is; its type is left's, except that two different string types
// give STRING and two DATETIME (or TIMESTAMPTZ) precisions the larger.
//
// Semantics. UnionAll streams every left row, then every right row,
// holding nothing. The others are set operations: rows are equal when
// every column is, NULL equal to NULL (as SQL set operations treat it,
// unlike joins), FLOAT and DOUBLE -0 equal to 0 and NaN to NaN; each
// distinct row comes out once. UnionDistinct streams left then right and
// emits each row the first time it is seen; Intersect and Except first
// read right to its end, then stream left and emit each distinct left row
// that right has (Intersect) or has not (Except), at its first occurrence.
// The distinct rows held are charged to env.Budget as "SetOp".
//
// A refused description is ErrInvalidArgument and leaves closing the
// inputs to the caller; once built, the operator owns its inputs and Close
// closes them.
func NewSetOp(env *Env, op SetOp, left, right Operator) (Operator, error) {
	ls, rs := left.Schema(), right.Schema()
	if op < UnionAll || op > Except {
		return nil, rowttl.Errorf(rowttl.ErrInvalidArgument, "SetOp: unknown set operation %d", op)
	}
	if len(ls) != len(rs) {
		return nil, rowttl.Errorf(rowttl.ErrInvalidArgument,
			"SetOp: %s of %d columns and %d columns", op, len(ls), len(rs))
	}
	cols := allColumns(len(ls))
	if op == UnionAll {
		for i := range ls {
			if !arrow.TypeEqual(ls[i].Type.Arrow(), rs[i].Type.Arrow()) {
				return nil, rowttl.Errorf(rowttl.ErrInvalidArgument,
					"SetOp: column %d of %s is %s on the left and %s on the right; cast one to the other",
					i+1, op, ls[i].Type, rs[i].Type)
			}
		}
	} else if err := checkSameTypes("SetOp: "+op.String(), ls, rs, cols, cols); err != nil {
		return nil, err
	}
	out := make(Schema, len(ls))
	for i := range ls {
		out[i] = Column{Name: ls[i].Name, Type: unionType(ls[i].Type, rs[i].Type), Nullable: ls[i].Nullable || rs[i].Nullable}
	}
	s := &setOp{env: env, op: op, left: left, right: right, schema: out, arrow: out.Arrow(), cols: cols}
	if op != UnionAll {
		types := make([]schema.Type, len(ls))
		for i := range ls {
			types[i] = ls[i].Type
		}
		form := keyFormOf(types)
		s.table = newGroupMap(form)
		s.keys = rowKeys{form: form}
	}
	return s, nil
}

// unionType is the type of a column that holds values of a and b, two
// types of one Arrow type.
func unionType(a, b schema.Type) schema.Type {
	switch {
	case a == b:
		return a
	case a.IsString():
		return schema.StringType
	case a.Kind == b.Kind && (a.Kind == schema.Datetime || a.Kind == schema.TimestampTZ):
		a.Precision = max(a.Precision, b.Precision)
		return a
	}
	return a
}

type setOp struct {
	env         *Env
	op          SetOp
	left, right Operator
	schema      Schema
	arrow       *arrow.Schema
	cols        []int

	table *groupMap
	keys  rowKeys
	gids  []uint32
	ids   []int32
	// state of each distinct row of table: fromRight (Intersect, Except:
	// right has it), emitted (it has been output).
	state   []uint8
	charged int64

	err       error
	built     bool
	leftDone  bool
	rightDone bool
	pending   []arrow.RecordBatch
}

const (
	fromRight uint8 = 1 << iota
	emitted
)

func (s *setOp) Schema() Schema { return s.schema }

func (s *setOp) grow() error {
	n := s.table.bytes() + int64(cap(s.state))
	if n > s.charged {
		if err := s.env.Budget.Grow("SetOp", n-s.charged); err != nil {
			return err
		}
		s.charged = n
	}
	return nil
}

func (s *setOp) Next(ctx context.Context) (arrow.RecordBatch, error) {
	if s.err != nil {
		return nil, s.err
	}
	b, err := s.next(ctx)
	if err != nil {
		// A batch half filtered cannot be resumed: every later call fails
		// the same way.
		s.err = err
	}
	return b, err
}

func (s *setOp) next(ctx context.Context) (arrow.RecordBatch, error) {
	for {
		if len(s.pending) > 0 {
			b := s.pending[0]
			s.pending[0] = nil
			s.pending = s.pending[1:]
			return b, nil
		}
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		if (s.op == Intersect || s.op == Except) && !s.built {
			if err := s.buildRight(ctx); err != nil {
				return nil, err
			}
			s.built = true
			continue
		}
		var in Operator
		switch {
		case !s.leftDone:
			in = s.left
		case !s.rightDone && (s.op == UnionAll || s.op == UnionDistinct):
			in = s.right
		default:
			return nil, nil
		}
		b, err := in.Next(ctx)
		if err != nil {
			return nil, err
		}
		if b == nil {
			if in == s.left {
				s.leftDone = true
			} else {
				s.rightDone = true
			}
			continue
		}
		if s.op == UnionAll {
			return rebatch(s.arrow, b), nil
		}
		if err := s.filter(b); err != nil {
			return nil, err
		}
	}
}

// buildRight records every distinct right row.
func (s *setOp) buildRight(ctx context.Context) error {
	for {
		b, err := s.right.Next(ctx)
		if err != nil {
			return err
		}
		if b == nil {
			s.rightDone = true
			return nil
		}
		s.insert(b)
		for len(s.state) < s.table.len() {
			s.state = append(s.state, fromRight)
		}
		b.Release()
		if err := s.grow(); err != nil {
			return err
		}
	}
}

// filter queues the rows of b that the operation emits, and takes over b.
func (s *setOp) filter(b arrow.RecordBatch) error {
	defer b.Release()
	n := int(b.NumRows())
	if s.op == Intersect {
		s.keys.fill(s.keyCols(b))
		s.ids = resize(s.ids, n)
		s.table.lookup(&s.keys, s.ids)
	} else {
		// Except: right's rows are in the table already, so a left row
		// is new exactly when right lacks it and it was not emitted.
		s.insert(b)
		for len(s.state) < s.table.len() {
			s.state = append(s.state, 0)
		}
		s.ids = resize(s.ids, n)
		for i, g := range s.gids {
			s.ids[i] = int32(g)
		}
	}
	var keep []rowRef
	for i, g := range s.ids {
		want := uint8(0)
		if s.op == Intersect {
			want = fromRight
		}
		if g >= 0 && s.state[g] == want {
			s.state[g] |= emitted
			keep = append(keep, rowRef{batch: 0, row: int32(i)})
		}
	}
	if err := s.grow(); err != nil {
		return err
	}
	if len(keep) == n && n <= BatchRows {
		b.Retain()
		s.pending = append(s.pending, rebatch(s.arrow, b))
		return nil
	}
	for start := 0; start < len(keep); start += BatchRows {
		end := min(start+BatchRows, len(keep))
		s.pending = append(s.pending, gatherBatch(s.env.Mem, s.arrow, []arrow.RecordBatch{b}, s.cols, keep[start:end]))
	}
	return nil
}

func (s *setOp) keyCols(b arrow.RecordBatch) []arrow.Array {
	cols := make([]arrow.Array, len(s.cols))
	for i, c := range s.cols {
		cols[i] = b.Column(c)
	}
	return cols
}

// insert enters every row of b into the table, their groups in s.gids.
func (s *setOp) insert(b arrow.RecordBatch) {
	n := int(b.NumRows())
	s.keys.fill(s.keyCols(b))
	s.gids = resize(s.gids, n)
	s.table.find(&s.keys, allRows(n), s.gids)
}

func (s *setOp) Close() {
	for _, b := range s.pending {
		b.Release()
	}
	s.pending = nil
	s.table, s.state = nil, nil
	s.env.Budget.Shrink(s.charged)
	s.charged = 0
	s.leftDone, s.rightDone, s.built = true, true, true
	s.left.Close()
	s.right.Close()
}
