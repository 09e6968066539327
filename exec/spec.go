package exec

// The descriptions below are what the planner hands to the blocking
// operators. They name input columns by index (see the package doc).

// AggFunc is an aggregate function.
type AggFunc uint8

const (
	// CountStar counts rows; it has no argument.
	CountStar AggFunc = iota + 1
	// Count counts non-NULL values of its argument.
	Count
	// Sum adds non-NULL values: integers into BIGINT (an error when the
	// total leaves BIGINT, never when a running sum does), DECIMAL(p,s)
	// exactly into DECIMAL(38,s), FLOAT and DOUBLE into DOUBLE. NULL when no
	// value was added.
	Sum
	// Min and Max keep the smallest and largest non-NULL value, in the
	// argument's type; NULL when there was none.
	Min
	Max
	// Avg is the mean of non-NULL values: DOUBLE for integers and floats,
	// DECIMAL(38, max(s,4)) for DECIMAL(p,s) (computed exactly, rounded
	// half away from zero); NULL when there was none.
	Avg
	// VarPop, VarSamp, StddevPop and StddevSamp are the population and
	// sample variance and standard deviation of the non-NULL values of a
	// FLOAT or DOUBLE argument, as DOUBLE, by Welford's update (no
	// cancellation when the mean is large beside the spread); NULL when
	// there was no value, and for the sample forms when there was one.
	VarPop
	VarSamp
	StddevPop
	StddevSamp
	// GroupConcat joins the non-NULL values of a string argument with
	// Aggregate.Sep, in input order, into STRING; NULL when there was none.
	GroupConcat
	// MaxBy and MinBy are the value of the argument at the row whose
	// Aggregate.By value is the largest or smallest (the first such row in
	// input order on a tie), in the argument's type, NULL when that value
	// is; rows whose By value is NULL are skipped, and the result is NULL
	// when every row is.
	MaxBy
	MinBy
)

var aggFuncNames = [...]string{CountStar: "count(*)", Count: "count", Sum: "sum", Min: "min", Max: "max", Avg: "avg",
	VarPop: "var_pop", VarSamp: "var_samp", StddevPop: "stddev_pop", StddevSamp: "stddev_samp", GroupConcat: "group_concat",
	MaxBy: "max_by", MinBy: "min_by"}

func (f AggFunc) String() string {
	if int(f) < len(aggFuncNames) && aggFuncNames[f] != "" {
		return aggFuncNames[f]
	}
	return "agg?"
}

// Aggregate is one aggregate of a hash aggregation.
type Aggregate struct {
	Func AggFunc
	// Arg is the input column aggregated; ignored for CountStar.
	Arg int
	// Distinct aggregates each distinct non-NULL value once
	// (count(DISTINCT x), sum(DISTINCT x), avg(DISTINCT x)); it changes no
	// min or max.
	Distinct bool
	// Sep is GroupConcat's separator.
	Sep string
	// By is the input column MaxBy and MinBy order by.
	By int
	// Name is the output column's name.
	Name string
}

// SortKey is one key of a sort, a top-N or a window's ORDER BY.
type SortKey struct {
	// Column is the input column sorted on.
	Column int
	Desc   bool
	// NullsFirst places NULLs before every value. SQL's default, which
	// the planner resolves, is NULLs first ascending and last descending.
	NullsFirst bool
}

// JoinKind is the kind of a join.
type JoinKind uint8

const (
	InnerJoin JoinKind = iota + 1
	LeftJoin
	RightJoin
	FullJoin
	CrossJoin
	// SemiJoin keeps the left rows that have a match (IN, EXISTS); AntiJoin
	// those that have none (NOT EXISTS). Their output is the left columns.
	SemiJoin
	AntiJoin
	// NullAwareAntiJoin is NOT IN: a left row is kept when it matches no
	// right row and neither its key nor any right key is NULL (three-valued
	// NOT IN: a NULL on either side makes the predicate NULL, not TRUE).
	NullAwareAntiJoin
)

var joinKindNames = [...]string{InnerJoin: "INNER", LeftJoin: "LEFT OUTER", RightJoin: "RIGHT OUTER",
	FullJoin: "FULL OUTER", CrossJoin: "CROSS", SemiJoin: "LEFT SEMI", AntiJoin: "LEFT ANTI",
	NullAwareAntiJoin: "NULL AWARE LEFT ANTI"}

func (k JoinKind) String() string {
	if int(k) < len(joinKindNames) && joinKindNames[k] != "" {
		return joinKindNames[k]
	}
	return "JOIN?"
}

// SetOp is a set operation between two inputs of the same column types.
type SetOp uint8

const (
	UnionAll SetOp = iota + 1
	UnionDistinct
	Intersect
	Except
)

var setOpNames = [...]string{UnionAll: "UNION ALL", UnionDistinct: "UNION", Intersect: "INTERSECT", Except: "EXCEPT"}

func (o SetOp) String() string {
	if int(o) < len(setOpNames) && setOpNames[o] != "" {
		return setOpNames[o]
	}
	return "SETOP?"
}
