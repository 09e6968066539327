package parser

import (
	"strings"

	"github.com/rowttl/rowttl"
	"github.com/rowttl/rowttl/schema"
)

// Stmt is a parsed statement: one of the *Xxx statement types below.
type Stmt interface{ stmtNode() }

// Expr is a parsed expression: one of the expression node types below.
// Expressions are trees of pointers; the parser never shares a node between
// two parents.
type Expr interface{ exprNode() }

// TableName names a table, optionally qualified by its database.
type TableName struct {
	DB   string // empty when unqualified
	Name string
}

func (t TableName) String() string {
	if t.DB == "" {
		return t.Name
	}
	return t.DB + "." + t.Name
}

// Property is one "key" = "value" pair of a PROPERTIES (...) or SET (...)
// list. Values are kept as text, whatever literal they were written as.
type Property struct {
	Key, Value string
}

// Properties is an ordered property list. The parser rejects duplicate keys
// (compared case-insensitively).
type Properties []Property

// Get returns the value of key, compared case-insensitively.
func (ps Properties) Get(key string) (string, bool) {
	for _, p := range ps {
		if strings.EqualFold(p.Key, key) {
			return p.Value, true
		}
	}
	return "", false
}

// ---------------------------------------------------------------------------
// Databases

// CreateDatabase is CREATE DATABASE [IF NOT EXISTS] name [PROPERTIES (...)].
type CreateDatabase struct {
	Name        string
	IfNotExists bool
	Properties  Properties
}

// DropDatabase is DROP DATABASE [IF EXISTS] name [FORCE].
type DropDatabase struct {
	Name     string
	IfExists bool
	Force    bool
}

// Use is USE db.
type Use struct {
	DB string
}

// ShowDatabases is SHOW DATABASES.
type ShowDatabases struct{}

// ---------------------------------------------------------------------------
// Tables

// KeysType is the data model of a table.
type KeysType uint8

// The data models. NoKeys means the statement gave no key clause.
const (
	NoKeys KeysType = iota
	DupKeys
	UniqueKeys
	AggKeys
)

func (k KeysType) String() string {
	switch k {
	case DupKeys:
		return "DUPLICATE KEY"
	case UniqueKeys:
		return "UNIQUE KEY"
	case AggKeys:
		return "AGGREGATE KEY"
	}
	return "NONE"
}

// Nullability is what a column definition says about NULL.
type Nullability uint8

// NullUnspecified means the definition said neither NULL nor NOT NULL; the
// executor applies the dialect's default.
const (
	NullUnspecified Nullability = iota
	Nullable
	NotNullable
)

func (n Nullability) String() string {
	switch n {
	case Nullable:
		return "NULL"
	case NotNullable:
		return "NOT NULL"
	}
	return "UNSPECIFIED"
}

// ColumnDef is one column definition, in Doris order:
//
//	name type [KEY] [SUM|MIN|MAX|REPLACE|REPLACE_IF_NOT_NULL] [NULL|NOT NULL]
//	  [AUTO_INCREMENT[(start)]] [DEFAULT literal|NULL|CURRENT_TIMESTAMP[(p)]]
//	  [ON UPDATE CURRENT_TIMESTAMP[(p)]] [COMMENT 'x']
//	name type [GENERATED ALWAYS] AS (expr) [NULL|NOT NULL] [COMMENT 'x']
//
// The attributes after the type are accepted in any order, each once.
type ColumnDef struct {
	Name string
	Type schema.Type
	// Key is the KEY marker after the type.
	Key bool
	// Agg is the upper-case aggregation of an AGGREGATE KEY value column:
	// SUM, MIN, MAX, REPLACE or REPLACE_IF_NOT_NULL; empty when none.
	Agg  string
	Null Nullability
	// AutoIncrement is AUTO_INCREMENT[(start)]; AutoIncrementStart is its
	// start value: 1 unless given, 0 without AUTO_INCREMENT.
	AutoIncrement      bool
	AutoIncrementStart int64
	// DefaultKind and Default describe the DEFAULT clause as schema.Column
	// does: Default is the literal's text (a string's decoded value, a
	// number as written with its sign, "true"/"false"). DefaultPrecision
	// is p of DEFAULT CURRENT_TIMESTAMP(p).
	DefaultKind      schema.DefaultKind
	Default          string
	DefaultPrecision int
	// OnUpdateCurrentTimestamp is ON UPDATE CURRENT_TIMESTAMP[(p)].
	OnUpdateCurrentTimestamp bool
	Comment                  string
	// Generated marks a generated column; GeneratedExpr is its expression.
	Generated     bool
	GeneratedExpr Expr
}

// Distribution is DISTRIBUTED BY HASH(cols) | RANDOM [BUCKETS n|AUTO].
type Distribution struct {
	Random  bool     // RANDOM rather than HASH
	Columns []string // the HASH columns
	// Buckets is n of BUCKETS n; 0 when BUCKETS was AUTO or not given.
	Buckets     int
	AutoBuckets bool
}

// CreateTable is CREATE TABLE [IF NOT EXISTS] [db.]t (columns) followed by
// its optional clauses (accepted in any order, each once).
type CreateTable struct {
	Table       TableName
	IfNotExists bool
	Columns     []*ColumnDef
	// Engine is the upper-case name of ENGINE = x, empty when not given.
	Engine string
	// Keys and KeyColumns are the DUPLICATE|UNIQUE|AGGREGATE KEY(cols)
	// clause; NoKeys when absent.
	Keys       KeysType
	KeyColumns []string
	Comment    string
	// Distribution is nil when no DISTRIBUTED BY clause was given.
	Distribution *Distribution
	Properties   Properties
	// Ignored holds the source text of clauses that are parsed and ignored:
	// PARTITION BY ..., ROLLUP (...), INDEX definitions.
	Ignored []string
}

// CreateTableLike is CREATE TABLE [IF NOT EXISTS] t2 LIKE t1.
type CreateTableLike struct {
	Table       TableName
	IfNotExists bool
	Like        TableName
}

// DropTable is DROP TABLE [IF EXISTS] [db.]t [FORCE].
type DropTable struct {
	Table    TableName
	IfExists bool
	Force    bool
}

// TruncateTable is TRUNCATE TABLE t.
type TruncateTable struct {
	Table TableName
}

// AlterTable is ALTER TABLE t op [, op ...].
type AlterTable struct {
	Table TableName
	Ops   []AlterOp
}

// AlterOp is one operation of an ALTER TABLE: one of the Alter* types below.
type AlterOp interface{ alterOp() }

// AlterSetProperties is SET ("k" = "v", ...).
type AlterSetProperties struct {
	Properties Properties
}

// AlterAddColumns is ADD COLUMN coldef [AFTER c | FIRST] or
// ADD COLUMN (coldef, ...).
type AlterAddColumns struct {
	Columns []*ColumnDef
	After   string // AFTER c; empty when not given
	First   bool
}

// AlterDropColumn is DROP COLUMN c.
type AlterDropColumn struct {
	Name string
}

// AlterRenameColumn is RENAME COLUMN old new (also RENAME COLUMN old TO new).
type AlterRenameColumn struct {
	Old, New string
}

// AlterModifyColumn is MODIFY COLUMN coldef [AFTER c | FIRST].
type AlterModifyColumn struct {
	Column *ColumnDef
	After  string
	First  bool
}

// AlterRenameTable is RENAME new_name (also RENAME TO new_name).
type AlterRenameTable struct {
	NewName string
}

// AlterEnableFeature is ENABLE FEATURE "name" [WITH PROPERTIES (...)], as
// Doris uses to add a sequence column to an existing table.
type AlterEnableFeature struct {
	Feature    string
	Properties Properties
}

// ---------------------------------------------------------------------------
// Data

// Insert is INSERT INTO [db.]t [WITH LABEL l] [(cols)] VALUES (...), ... or
// INSERT INTO [db.]t [WITH LABEL l] [(cols)] query, where the query may
// start with WITH (WITH ... INSERT INTO t SELECT ... is the same
// statement).
type Insert struct {
	Table   TableName
	Label   string
	Columns []string // nil when no column list was given
	// Rows are the VALUES rows (nil for INSERT ... SELECT). An item is a
	// *DefaultExpr for DEFAULT. A row may be empty: VALUES ().
	Rows [][]Expr
	// Select is the source query when it is one query block (WITH
	// included); SetOp is the source when it is a set operation. At most
	// one of them is set.
	Select *Select
	SetOp  *SetOp
}

// Query returns the source query of INSERT ... SELECT, nil for VALUES.
func (s *Insert) Query() QueryExpr {
	switch {
	case s.Select != nil:
		return s.Select
	case s.SetOp != nil:
		return s.SetOp
	}
	return nil
}

// QueryExpr is a query: a *Select (one query block) or a *SetOp (a set
// operation over two queries). Either is also a statement.
type QueryExpr interface {
	Stmt
	queryNode()
}

// Select is one SELECT query block:
//
//	[WITH cte, ...] SELECT [DISTINCT] items [FROM refs] [WHERE e]
//	  [GROUP BY e, ...] [HAVING e] [WINDOW w AS (spec), ...]
//	  [ORDER BY ...] [LIMIT ...]
//
// The plain single-table query names a table in From and leaves With and
// Windows empty; IsSimple reports that shape. OrderBy and Limit of a query
// block that is an operand of a set operation belong to the block (it was
// parenthesised); those written after the last operand belong to the
// SetOp.
type Select struct {
	Distinct bool
	Items    []*SelectItem
	From     *TableRef // nil without FROM (and for FROM DUAL)
	Where    Expr      // nil when absent
	GroupBy  []Expr
	Having   Expr
	OrderBy  []*OrderItem
	Limit    *Limit // nil when absent
	// With holds the common table expressions of a WITH in front of the
	// block; nil when there is none.
	With []*CTE
	// Windows are the named windows of the WINDOW clause, in order.
	Windows []*NamedWindow
}

// IsSimple reports whether s is the plain query block: no WITH, no named
// windows, FROM absent or naming one table, and no subquery or window
// function in any expression. Joins, derived tables, subqueries and window
// functions make a query that only the planner runs.
func (s *Select) IsSimple() bool {
	if len(s.With) > 0 || len(s.Windows) > 0 || s.From != nil && !s.From.IsTable() {
		return false
	}
	simple := true
	s.WalkExprs(func(e Expr) {
		if ContainsSubquery(e) || ContainsWindow(e) {
			simple = false
		}
	})
	return simple
}

// WalkExprs calls fn with every top-level expression of the block itself:
// the select items, join conditions of FROM, WHERE, GROUP BY, HAVING, the
// named windows' expressions and ORDER BY. It does not enter subqueries,
// derived tables or CTEs (each is a block of its own).
func (s *Select) WalkExprs(fn func(Expr)) {
	for _, it := range s.Items {
		if it.Expr != nil {
			fn(it.Expr)
		}
	}
	var from func(r *TableRef)
	from = func(r *TableRef) {
		if r == nil || r.Join == nil {
			return
		}
		from(r.Join.Left)
		from(r.Join.Right)
		if r.Join.On != nil {
			fn(r.Join.On)
		}
	}
	from(s.From)
	if s.Where != nil {
		fn(s.Where)
	}
	for _, e := range s.GroupBy {
		fn(e)
	}
	if s.Having != nil {
		fn(s.Having)
	}
	for _, w := range s.Windows {
		for _, e := range w.Spec.PartitionBy {
			fn(e)
		}
		for _, o := range w.Spec.OrderBy {
			fn(o.Expr)
		}
	}
	for _, o := range s.OrderBy {
		fn(o.Expr)
	}
}

// ResolveWindow returns the window w stands for in s: w itself when it
// names no window, else the named window it refers to (resolved in turn)
// with w's own ORDER BY and frame added. As in standard SQL, a window built
// on a named one may not repeat its PARTITION BY, may add an ORDER BY only
// when the named one has none, and may not be built on one with a frame
// (OVER w alone may).
func (s *Select) ResolveWindow(w *WindowSpec) (*WindowSpec, error) {
	return s.resolveWindow(w, len(s.Windows))
}

// resolveWindow resolves w against the first n named windows, so that a
// named window may refer only to those before it (no cycles).
func (s *Select) resolveWindow(w *WindowSpec, n int) (*WindowSpec, error) {
	if w.Ref == "" {
		return w, nil
	}
	var base *WindowSpec
	for i, nw := range s.Windows[:n] {
		if strings.EqualFold(nw.Name, w.Ref) {
			b, err := s.resolveWindow(nw.Spec, i)
			if err != nil {
				return nil, err
			}
			base = b
			break
		}
	}
	if base == nil {
		return nil, rowttl.Errorf(rowttl.ErrInvalidArgument, "window %s is not defined", w.Ref)
	}
	if w.PartitionBy == nil && w.OrderBy == nil && w.Frame == nil {
		return base, nil
	}
	if w.PartitionBy != nil {
		return nil, rowttl.Errorf(rowttl.ErrInvalidArgument, "a window built on window %s cannot have its own PARTITION BY", w.Ref)
	}
	if w.OrderBy != nil && base.OrderBy != nil {
		return nil, rowttl.Errorf(rowttl.ErrInvalidArgument, "window %s already has an ORDER BY", w.Ref)
	}
	if base.Frame != nil {
		return nil, rowttl.Errorf(rowttl.ErrInvalidArgument, "window %s has a frame: write OVER %s", w.Ref, w.Ref)
	}
	out := &WindowSpec{PartitionBy: base.PartitionBy, OrderBy: base.OrderBy, Frame: w.Frame}
	if w.OrderBy != nil {
		out.OrderBy = w.OrderBy
	}
	return out, nil
}

// CTE is one common table expression of a WITH: name [(cols)] AS (query).
// WITH is not recursive: a CTE sees the CTEs before it, not itself.
type CTE struct {
	Name    string
	Columns []string // nil without a column list
	Query   QueryExpr
}

// SetOpKind is the operator of a SetOp.
type SetOpKind uint8

// The set operators. INTERSECT binds tighter than UNION and EXCEPT; all
// three associate to the left.
const (
	SetUnion SetOpKind = iota + 1
	SetIntersect
	SetExcept
)

func (k SetOpKind) String() string {
	switch k {
	case SetUnion:
		return "UNION"
	case SetIntersect:
		return "INTERSECT"
	case SetExcept:
		return "EXCEPT"
	}
	return "?"
}

// SetOp is L UNION [ALL|DISTINCT] R, L INTERSECT [DISTINCT] R or L EXCEPT
// [DISTINCT] R (Doris has no INTERSECT ALL or EXCEPT ALL), with the WITH,
// ORDER BY and LIMIT that apply to the whole operation. ORDER BY items name
// output columns by position or name.
type SetOp struct {
	Op SetOpKind
	// All is UNION ALL: duplicates kept. Without it the result is
	// distinct (UNION DISTINCT is UNION).
	All     bool
	L, R    QueryExpr
	OrderBy []*OrderItem
	Limit   *Limit
	With    []*CTE
}

// JoinKind is the kind of a Join.
type JoinKind uint8

// The joins. JoinComma is the comma of FROM a, b: a cross join that binds
// more loosely than every JOIN keyword (FROM a, b JOIN c ON ... joins b
// and c first), kept apart from CROSS JOIN so that a query formats back as
// written.
const (
	JoinInner JoinKind = iota + 1
	JoinLeft
	JoinRight
	JoinFull
	JoinCross
	JoinComma
)

func (k JoinKind) String() string {
	switch k {
	case JoinInner:
		return "JOIN"
	case JoinLeft:
		return "LEFT JOIN"
	case JoinRight:
		return "RIGHT JOIN"
	case JoinFull:
		return "FULL JOIN"
	case JoinCross:
		return "CROSS JOIN"
	case JoinComma:
		return "COMMA"
	}
	return "?"
}

// IsOuter reports LEFT, RIGHT and FULL joins.
func (k JoinKind) IsOuter() bool { return k == JoinLeft || k == JoinRight || k == JoinFull }

// Join is Left kind Right [ON On | USING (Using)]. Joins associate to the
// left and an ON belongs to the nearest JOIN before it: a JOIN b ON x JOIN
// c ON y is (a JOIN b ON x) JOIN c ON y. An inner JOIN without ON or USING
// is a cross join; outer joins need one; CROSS JOIN and commas take none.
type Join struct {
	Kind        JoinKind
	Left, Right *TableRef
	On          Expr     // nil when absent
	Using       []string // nil when absent
}

// SelectItem is one item of a select list: *, t.* or expr [[AS] alias].
type SelectItem struct {
	Star      bool   // * or t.*
	StarTable string // t of t.*
	Expr      Expr   // nil for stars
	Alias     string
	// Text is the item's source text as written (trimmed, alias excluded):
	// the result column header when there is no alias.
	Text string
}

// TableRef is one table reference of FROM: a named table with its
// optional alias (the plain shape), a derived table (Subquery with its
// required alias) or a join of two references (Join; Table and Alias are
// empty). Parentheses around a reference leave no trace.
type TableRef struct {
	Table TableName
	Alias string
	// Subquery is the query of FROM (query) [AS] alias.
	Subquery QueryExpr
	// Join is set when the reference is a join.
	Join *Join
	// Func is set when the reference is a table function, name(props).
	Func *TableFunc
}

// TableFunc is a table-valued function in FROM, as Doris writes it:
// local("file_path" = "...", "format" = "parquet", ...).
type TableFunc struct {
	Name  string // lower case
	Props Properties
}

// IsTable reports whether r names a table (the plain shape).
func (r *TableRef) IsTable() bool { return r.Subquery == nil && r.Join == nil && r.Func == nil }

// IsSubquery reports whether r is a derived table.
func (r *TableRef) IsSubquery() bool { return r.Subquery != nil }

// IsJoin reports whether r is a join.
func (r *TableRef) IsJoin() bool { return r.Join != nil }

// NullsOrder is the NULLS FIRST|LAST of an ORDER BY item.
type NullsOrder uint8

// NullsDefault means neither was written.
const (
	NullsDefault NullsOrder = iota
	NullsFirst
	NullsLast
)

func (n NullsOrder) String() string {
	switch n {
	case NullsFirst:
		return "NULLS FIRST"
	case NullsLast:
		return "NULLS LAST"
	}
	return "DEFAULT"
}

// OrderItem is one ORDER BY item.
type OrderItem struct {
	Expr  Expr
	Desc  bool
	Nulls NullsOrder
}

// Limit is LIMIT n [OFFSET m] or LIMIT m, n.
type Limit struct {
	Count, Offset int64
}

// Explain is EXPLAIN <query>: it prints the plan instead of running it.
// Stmt is the query: a *Select or a *SetOp.
type Explain struct {
	Stmt Stmt
}

// Update is UPDATE [db.]t [[AS] alias] SET col = expr, ... [WHERE e].
type Update struct {
	Table TableName
	Alias string
	Set   []*Assignment
	Where Expr
}

// Assignment is col = expr of an UPDATE; Value is a *DefaultExpr for
// DEFAULT.
type Assignment struct {
	Column *ColumnRef
	Value  Expr
}

// Delete is DELETE FROM [db.]t [[AS] alias] [WHERE e].
type Delete struct {
	Table TableName
	Alias string
	Where Expr
}

// ---------------------------------------------------------------------------
// Inspection and session

// ShowCreateTable is SHOW CREATE TABLE t.
type ShowCreateTable struct {
	Table TableName
}

// ShowTables is SHOW [FULL] TABLES [FROM|IN db] [LIKE 'pattern'].
type ShowTables struct {
	DB   string
	Full bool
	Like string
}

// ShowColumns is SHOW [FULL] COLUMNS FROM t [FROM db].
type ShowColumns struct {
	Table TableName
	Full  bool
}

// Describe is DESC t or DESCRIBE t [ALL].
type Describe struct {
	Table TableName
	All   bool
}

// ShowTableStats is SHOW TABLE STATS t.
type ShowTableStats struct {
	Table TableName
}

// ShowRowsets is SHOW ROWSETS FROM t.
type ShowRowsets struct {
	Table TableName
}

// ShowVariables is SHOW [SESSION|GLOBAL|LOCAL] VARIABLES [LIKE 'pattern'
// | WHERE cond]; the condition sees the columns Variable_name and Value.
type ShowVariables struct {
	Like  string
	Where Expr
}

// ShowProcesslist is SHOW [FULL] PROCESSLIST.
type ShowProcesslist struct {
	Full bool
}

// ShowData is SHOW DATA [FROM db].
type ShowData struct {
	DB string
}

// Set is SET [SESSION|GLOBAL] name = value [, ...].
type Set struct {
	Vars []*SetVar
}

// SetVar is one assignment of a SET statement.
type SetVar struct {
	// Scope is "SESSION", "GLOBAL" or "" (LOCAL is SESSION).
	Scope string
	// Name is the lower-case variable name.
	Name string
	// Value is an expression: usually a *StringLit, *IntLit, *DecimalLit or
	// *BoolLit. A bare word (SET x = ON) is a *StringLit holding the word;
	// DEFAULT is a *DefaultExpr.
	Value Expr
}

// AdminCompact is ADMIN COMPACT TABLE t WHERE type = 'cumulative'|'base'|'full'.
type AdminCompact struct {
	Table TableName
	// Type is the lower-case compaction type as written; the executor
	// checks it.
	Type string
}

func (*CreateDatabase) stmtNode()  {}
func (*Explain) stmtNode()         {}
func (*DropDatabase) stmtNode()    {}
func (*Use) stmtNode()             {}
func (*ShowDatabases) stmtNode()   {}
func (*CreateTable) stmtNode()     {}
func (*CreateTableLike) stmtNode() {}
func (*DropTable) stmtNode()       {}
func (*TruncateTable) stmtNode()   {}
func (*AlterTable) stmtNode()      {}
func (*Insert) stmtNode()          {}
func (*Select) stmtNode()          {}
func (*SetOp) stmtNode()           {}
func (*Update) stmtNode()          {}
func (*Delete) stmtNode()          {}
func (*ShowCreateTable) stmtNode() {}
func (*ShowTables) stmtNode()      {}
func (*ShowColumns) stmtNode()     {}
func (*Describe) stmtNode()        {}
func (*ShowTableStats) stmtNode()  {}
func (*ShowRowsets) stmtNode()     {}
func (*ShowVariables) stmtNode()   {}
func (*ShowProcesslist) stmtNode() {}
func (*ShowData) stmtNode()        {}
func (*Set) stmtNode()             {}
func (*AdminCompact) stmtNode()    {}

func (*Select) queryNode() {}
func (*SetOp) queryNode()  {}

func (*AlterSetProperties) alterOp() {}
func (*AlterAddColumns) alterOp()    {}
func (*AlterDropColumn) alterOp()    {}
func (*AlterRenameColumn) alterOp()  {}
func (*AlterModifyColumn) alterOp()  {}
func (*AlterRenameTable) alterOp()   {}
func (*AlterEnableFeature) alterOp() {}

// ---------------------------------------------------------------------------
// Expressions

// NullLit is NULL.
type NullLit struct{}

// BoolLit is TRUE or FALSE.
type BoolLit struct {
	Val bool
}

// IntLit is an integer literal that fits int64. A minus sign in front of a
// numeric literal is folded into it: -5 is IntLit{-5}.
type IntLit struct {
	Val int64
}

// DecimalLit is an exact numeric literal that is not an int64: one with a
// fraction (1.50) or an integer too large for int64. Text is the literal as
// written (with a folded sign); Val approximates it.
type DecimalLit struct {
	Text string
	Val  float64
}

// FloatLit is a literal with an exponent (1e3, 2.5E-3): a DOUBLE.
type FloatLit struct {
	Text string
	Val  float64
}

// StringLit is a string literal; Val is decoded (quotes and escapes
// resolved).
type StringLit struct {
	Val string
}

// DefaultExpr is the DEFAULT keyword written as a value in INSERT VALUES,
// UPDATE SET or SET var = DEFAULT. The parser accepts it nowhere else.
type DefaultExpr struct{}

// ColumnRef names a column: c, t.c or db.t.c. Names keep the case they were
// written in.
type ColumnRef struct {
	DB, Table string
	Name      string
}

// UnaryOp is the operator of a UnaryExpr.
type UnaryOp uint8

// The unary operators. Unary plus is dropped by the parser; `!x` is NOT x.
const (
	OpNeg UnaryOp = iota + 1
	OpNot
	OpBitNot // ~
)

func (o UnaryOp) String() string {
	switch o {
	case OpNeg:
		return "-"
	case OpNot:
		return "NOT"
	case OpBitNot:
		return "~"
	}
	return "?"
}

// UnaryExpr is -X, NOT X or ~X.
type UnaryExpr struct {
	Op UnaryOp
	X  Expr
}

// BinaryOp is the operator of a BinaryExpr.
type BinaryOp uint8

// The binary operators. != is OpNe, && is OpAnd and || is OpOr.
const (
	OpAdd BinaryOp = iota + 1
	OpSub
	OpMul
	OpDiv    // /
	OpMod    // %
	OpIntDiv // DIV
	OpEq
	OpNe
	OpLt
	OpLe
	OpGt
	OpGe
	OpNullSafeEq // <=>
	OpAnd
	OpOr
	OpBitAnd // &
	OpBitOr  // |
	OpBitXor // ^
	OpShl    // <<
	OpShr    // >>
)

var binaryOpText = [...]string{
	OpAdd: "+", OpSub: "-", OpMul: "*", OpDiv: "/", OpMod: "%", OpIntDiv: "DIV",
	OpEq: "=", OpNe: "<>", OpLt: "<", OpLe: "<=", OpGt: ">", OpGe: ">=",
	OpNullSafeEq: "<=>", OpAnd: "AND", OpOr: "OR",
	OpBitAnd: "&", OpBitOr: "|", OpBitXor: "^", OpShl: "<<", OpShr: ">>",
}

func (o BinaryOp) String() string {
	if int(o) < len(binaryOpText) && binaryOpText[o] != "" {
		return binaryOpText[o]
	}
	return "?"
}

// IsBit reports & | ^ << >>.
func (o BinaryOp) IsBit() bool { return o >= OpBitAnd && o <= OpShr }

// IsComparison reports = <> < <= > >= <=>.
func (o BinaryOp) IsComparison() bool { return o >= OpEq && o <= OpNullSafeEq }

// BinaryExpr is L op R.
type BinaryExpr struct {
	Op   BinaryOp
	L, R Expr
}

// IsTest is what an IsExpr tests.
type IsTest uint8

// The IS tests. IS UNKNOWN is IS NULL.
const (
	IsNull IsTest = iota + 1
	IsTrue
	IsFalse
)

func (t IsTest) String() string {
	switch t {
	case IsNull:
		return "NULL"
	case IsTrue:
		return "TRUE"
	case IsFalse:
		return "FALSE"
	}
	return "?"
}

// IsExpr is X IS [NOT] NULL|TRUE|FALSE.
type IsExpr struct {
	X    Expr
	Not  bool
	Test IsTest
}

// InExpr is X [NOT] IN (list).
type InExpr struct {
	X    Expr
	Not  bool
	List []Expr
}

// BetweenExpr is X [NOT] BETWEEN Lo AND Hi.
type BetweenExpr struct {
	X, Lo, Hi Expr
	Not       bool
}

// LikeExpr is X [NOT] LIKE Pattern [ESCAPE Escape].
type LikeExpr struct {
	X, Pattern Expr
	Escape     Expr // nil when absent
	Not        bool
}

// FuncCall is name(args). Name is lower case. count(*) has Star set and no
// Args; count(DISTINCT x) has Distinct set. CURRENT_TIMESTAMP, CURRENT_DATE,
// CURRENT_TIME, LOCALTIME and LOCALTIMESTAMP written without parentheses
// are calls with no arguments. DATE_ADD, DATE_SUB, ADDDATE, SUBDATE and the
// Doris xxx_add/xxx_sub functions (days_add, hours_sub, ...) become
// *DateArith instead.
type FuncCall struct {
	Name     string
	Args     []Expr
	Star     bool
	Distinct bool
}

// SysVar is @@name, @@session.name or @@local.name: the value of a session
// variable, as SHOW VARIABLES shows it (Name is lower case, without the
// scope).
type SysVar struct {
	Name string
}

// CastExpr is CAST(X AS type); also DATE 'str', DATETIME 'str' and
// TIMESTAMP 'str'. CAST AS SIGNED/UNSIGNED [INTEGER] is BIGINT, AS CHAR
// without a length is STRING.
type CastExpr struct {
	X    Expr
	Type schema.Type
}

// When is one WHEN Cond THEN Result arm of a CASE.
type When struct {
	Cond, Result Expr
}

// CaseExpr is CASE [Operand] WHEN ... THEN ... [ELSE Else] END. Operand is
// nil for the searched form; Else is nil when absent.
type CaseExpr struct {
	Operand Expr
	Whens   []*When
	Else    Expr
}

// IntervalUnit is the unit of an INTERVAL.
type IntervalUnit uint8

// The interval units (singular or plural in the source).
const (
	UnitMicrosecond IntervalUnit = iota + 1
	UnitSecond
	UnitMinute
	UnitHour
	UnitDay
	UnitWeek
	UnitMonth
	UnitYear
	UnitQuarter // three months
)

var unitNames = [...]string{
	UnitMicrosecond: "MICROSECOND", UnitSecond: "SECOND", UnitMinute: "MINUTE",
	UnitHour: "HOUR", UnitDay: "DAY", UnitWeek: "WEEK", UnitMonth: "MONTH",
	UnitYear: "YEAR", UnitQuarter: "QUARTER",
}

func (u IntervalUnit) String() string {
	if int(u) < len(unitNames) && unitNames[u] != "" {
		return unitNames[u]
	}
	return "?"
}

// parseUnit maps a unit word (singular or plural, any case) to its unit.
func parseUnit(w string) (IntervalUnit, bool) {
	u := strings.ToUpper(w)
	for i, n := range unitNames {
		if n != "" && (u == n || u == n+"S") {
			return IntervalUnit(i), true
		}
	}
	return 0, false
}

// DateArith is X + INTERVAL N Unit (Sub false) or X - INTERVAL N Unit (Sub
// true). INTERVAL N Unit + X, DATE_ADD(X, INTERVAL N Unit), DATE_ADD(X, N)
// (days), DATE_SUB, ADDDATE, SUBDATE and days_add(X, N) style calls all
// parse to it. N is any expression, usually an integer or a string.
type DateArith struct {
	X    Expr
	Sub  bool
	N    Expr
	Unit IntervalUnit
}

// SubqueryExpr is a scalar subquery: (query), one column, at most one row.
type SubqueryExpr struct {
	Query QueryExpr
}

// InSubquery is X [NOT] IN (query). X IN ((query)) with a parenthesised
// subquery is an *InExpr whose list holds a *SubqueryExpr.
type InSubquery struct {
	X     Expr
	Not   bool
	Query QueryExpr
}

// RowExpr is a row constructor (a, b, ...) of two or more values: the
// left side of IN, or an item of its list. Anywhere else it is refused
// when compiled ("Operand should contain 1 column(s)").
type RowExpr struct {
	Items []Expr
}

// QuantifiedCmp is X op ANY (query) or X op ALL (query), op a comparison
// other than <=>; SOME is ANY.
type QuantifiedCmp struct {
	X     Expr
	Op    BinaryOp
	All   bool
	Query QueryExpr
}

// ExistsExpr is EXISTS (query); NOT EXISTS is NOT applied to it.
type ExistsExpr struct {
	Query QueryExpr
}

// RegexpExpr is X [NOT] REGEXP Pattern; RLIKE is REGEXP.
type RegexpExpr struct {
	X, Pattern Expr
	Not        bool
}

// TimestampDiff is TIMESTAMPDIFF(Unit, From, To): the whole units from From
// to To. (TIMESTAMPADD(unit, n, x) is a *DateArith.)
type TimestampDiff struct {
	Unit     IntervalUnit
	From, To Expr
}

// ExtractExpr is EXTRACT(Unit FROM X).
type ExtractExpr struct {
	Unit IntervalUnit
	X    Expr
}

// WindowFunc is a window function call: name(args) OVER window. Name is
// lower case: row_number, rank, dense_rank, ntile, lag, lead, first_value,
// last_value or an aggregate (count, sum, min, max, avg); count(*) has Star
// set. The parser checks the argument count of the non-aggregates and that
// the offset of lag and lead is a non-negative integer literal. An
// aggregate with OVER is a WindowFunc, not an aggregate of its query block:
// ContainsAggregate looks only at its arguments and window.
type WindowFunc struct {
	Name string
	Args []Expr
	Star bool
	Over *WindowSpec
}

// IsAggregate reports whether w is an aggregate (count, sum, min, max,
// avg) computed over its window rather than a ranking or offset function.
func (w *WindowFunc) IsAggregate() bool { return IsAggregate(w.Name) }

// WindowSpec is a window: OVER name, or OVER ([name] [PARTITION BY ...]
// [ORDER BY ...] [frame]). Ref names a window of the query block's WINDOW
// clause that this one builds on (Select.ResolveWindow merges them).
type WindowSpec struct {
	Ref         string
	PartitionBy []Expr
	OrderBy     []*OrderItem
	Frame       *Frame // nil: the SQL default frame
}

// NamedWindow is one name AS (spec) of a WINDOW clause.
type NamedWindow struct {
	Name string
	Spec *WindowSpec
}

// FrameUnit is ROWS or RANGE.
type FrameUnit uint8

// The frame units.
const (
	FrameRows FrameUnit = iota + 1
	FrameRange
)

func (u FrameUnit) String() string {
	switch u {
	case FrameRows:
		return "ROWS"
	case FrameRange:
		return "RANGE"
	}
	return "?"
}

// BoundKind is the kind of one end of a frame, in frame order.
type BoundKind uint8

// The frame bounds.
const (
	FrameUnboundedPreceding BoundKind = iota + 1
	FramePreceding                    // N PRECEDING
	FrameCurrentRow
	FrameFollowing // N FOLLOWING
	FrameUnboundedFollowing
)

func (k BoundKind) String() string {
	switch k {
	case FrameUnboundedPreceding:
		return "UNBOUNDED PRECEDING"
	case FramePreceding:
		return "PRECEDING"
	case FrameCurrentRow:
		return "CURRENT ROW"
	case FrameFollowing:
		return "FOLLOWING"
	case FrameUnboundedFollowing:
		return "UNBOUNDED FOLLOWING"
	}
	return "?"
}

// FrameBound is one end of a frame; N counts rows for FramePreceding and
// FrameFollowing.
type FrameBound struct {
	Kind BoundKind
	N    int64
}

// Frame is ROWS|RANGE BETWEEN Start AND End. The short form ROWS start is
// BETWEEN start AND CURRENT ROW. The parser guarantees that Start comes no
// later than End in frame order, that Start is not UNBOUNDED FOLLOWING nor
// End UNBOUNDED PRECEDING, and that a RANGE frame has no N PRECEDING or N
// FOLLOWING bound (Doris takes none).
type Frame struct {
	Unit       FrameUnit
	Start, End FrameBound
}

func (*NullLit) exprNode()       {}
func (*SysVar) exprNode()        {}
func (*BoolLit) exprNode()       {}
func (*IntLit) exprNode()        {}
func (*DecimalLit) exprNode()    {}
func (*FloatLit) exprNode()      {}
func (*StringLit) exprNode()     {}
func (*DefaultExpr) exprNode()   {}
func (*ColumnRef) exprNode()     {}
func (*UnaryExpr) exprNode()     {}
func (*BinaryExpr) exprNode()    {}
func (*IsExpr) exprNode()        {}
func (*InExpr) exprNode()        {}
func (*BetweenExpr) exprNode()   {}
func (*LikeExpr) exprNode()      {}
func (*FuncCall) exprNode()      {}
func (*CastExpr) exprNode()      {}
func (*CaseExpr) exprNode()      {}
func (*DateArith) exprNode()     {}
func (*SubqueryExpr) exprNode()  {}
func (*InSubquery) exprNode()    {}
func (*ExistsExpr) exprNode()    {}
func (*QuantifiedCmp) exprNode() {}
func (*RowExpr) exprNode()       {}
func (*RegexpExpr) exprNode()    {}
func (*TimestampDiff) exprNode() {}
func (*ExtractExpr) exprNode()   {}
func (*WindowFunc) exprNode()    {}

// Walk visits e depth-first in source order: it calls fn(e) and, when fn
// returns true, walks e's children. A nil e is not visited. Walk does not
// enter the query of a subquery (*SubqueryExpr, *InSubquery, *ExistsExpr,
// *QuantifiedCmp):
// it is a query block of its own, whose aggregates and columns are not e's.
// A *WindowFunc's children are its arguments, then its PARTITION BY and
// ORDER BY expressions.
func Walk(e Expr, fn func(Expr) bool) {
	if e == nil || !fn(e) {
		return
	}
	switch e := e.(type) {
	case *UnaryExpr:
		Walk(e.X, fn)
	case *BinaryExpr:
		Walk(e.L, fn)
		Walk(e.R, fn)
	case *IsExpr:
		Walk(e.X, fn)
	case *InExpr:
		Walk(e.X, fn)
		for _, x := range e.List {
			Walk(x, fn)
		}
	case *BetweenExpr:
		Walk(e.X, fn)
		Walk(e.Lo, fn)
		Walk(e.Hi, fn)
	case *LikeExpr:
		Walk(e.X, fn)
		Walk(e.Pattern, fn)
		Walk(e.Escape, fn)
	case *FuncCall:
		for _, x := range e.Args {
			Walk(x, fn)
		}
	case *CastExpr:
		Walk(e.X, fn)
	case *CaseExpr:
		Walk(e.Operand, fn)
		for _, w := range e.Whens {
			Walk(w.Cond, fn)
			Walk(w.Result, fn)
		}
		Walk(e.Else, fn)
	case *DateArith:
		Walk(e.X, fn)
		Walk(e.N, fn)
	case *InSubquery:
		Walk(e.X, fn)
	case *QuantifiedCmp:
		Walk(e.X, fn)
	case *RowExpr:
		for _, x := range e.Items {
			Walk(x, fn)
		}
	case *RegexpExpr:
		Walk(e.X, fn)
		Walk(e.Pattern, fn)
	case *TimestampDiff:
		Walk(e.From, fn)
		Walk(e.To, fn)
	case *ExtractExpr:
		Walk(e.X, fn)
	case *WindowFunc:
		for _, x := range e.Args {
			Walk(x, fn)
		}
		for _, x := range e.Over.PartitionBy {
			Walk(x, fn)
		}
		for _, o := range e.Over.OrderBy {
			Walk(o.Expr, fn)
		}
	}
}

// ContainsSubquery reports whether e holds a scalar subquery, an IN
// (subquery), an EXISTS or an ANY/ALL (subquery) outside any subquery of
// its own.
func ContainsSubquery(e Expr) bool {
	found := false
	Walk(e, func(x Expr) bool {
		switch x.(type) {
		case *SubqueryExpr, *InSubquery, *ExistsExpr, *QuantifiedCmp:
			found = true
		}
		return !found
	})
	return found
}

// ContainsWindow reports whether e calls a window function outside any
// subquery of its own.
func ContainsWindow(e Expr) bool {
	found := false
	Walk(e, func(x Expr) bool {
		if _, ok := x.(*WindowFunc); ok {
			found = true
		}
		return !found
	})
	return found
}

// IsAggregate reports whether name (any case) is an aggregate function of
// the dialect: count, sum, min, max, avg, the variances and standard
// deviations, group_concat, any_value, approx_count_distinct, ndv, max_by
// and min_by.
func IsAggregate(name string) bool {
	switch strings.ToLower(name) {
	case "count", "sum", "min", "max", "avg",
		"stddev", "std", "stddev_pop", "stddev_samp",
		"variance", "var_pop", "variance_pop", "var_samp", "variance_samp",
		"group_concat", "any_value", "approx_count_distinct", "ndv", "max_by", "min_by":
		return true
	}
	return false
}

// ContainsAggregate reports whether e calls an aggregate function.
func ContainsAggregate(e Expr) bool {
	found := false
	Walk(e, func(x Expr) bool {
		if f, ok := x.(*FuncCall); ok && IsAggregate(f.Name) {
			found = true
		}
		return !found
	})
	return found
}
