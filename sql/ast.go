package sql

import (
	"strings"

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
// INSERT INTO [db.]t [WITH LABEL l] [(cols)] SELECT ....
type Insert struct {
	Table   TableName
	Label   string
	Columns []string // nil when no column list was given
	// Rows are the VALUES rows (nil for INSERT ... SELECT). An item is a
	// *DefaultExpr for DEFAULT. A row may be empty: VALUES ().
	Rows   [][]Expr
	Select *Select
}

// Select is one SELECT query block.
type Select struct {
	Distinct bool
	Items    []*SelectItem
	From     *TableRef // nil without FROM (and for FROM DUAL)
	Where    Expr      // nil when absent
	GroupBy  []Expr
	Having   Expr
	OrderBy  []*OrderItem
	Limit    *Limit // nil when absent
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

// TableRef is the FROM table with its optional alias.
type TableRef struct {
	Table TableName
	Alias string
}

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

// Explain is EXPLAIN <select>: it prints the plan instead of running it.
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
func (*Update) stmtNode()          {}
func (*Delete) stmtNode()          {}
func (*ShowCreateTable) stmtNode() {}
func (*ShowTables) stmtNode()      {}
func (*ShowColumns) stmtNode()     {}
func (*Describe) stmtNode()        {}
func (*ShowTableStats) stmtNode()  {}
func (*ShowRowsets) stmtNode()     {}
func (*Set) stmtNode()             {}
func (*AdminCompact) stmtNode()    {}

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
)

func (o UnaryOp) String() string {
	switch o {
	case OpNeg:
		return "-"
	case OpNot:
		return "NOT"
	}
	return "?"
}

// UnaryExpr is -X or NOT X.
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
)

var binaryOpText = [...]string{
	OpAdd: "+", OpSub: "-", OpMul: "*", OpDiv: "/", OpMod: "%", OpIntDiv: "DIV",
	OpEq: "=", OpNe: "<>", OpLt: "<", OpLe: "<=", OpGt: ">", OpGe: ">=",
	OpNullSafeEq: "<=>", OpAnd: "AND", OpOr: "OR",
}

func (o BinaryOp) String() string {
	if int(o) < len(binaryOpText) && binaryOpText[o] != "" {
		return binaryOpText[o]
	}
	return "?"
}

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
)

var unitNames = [...]string{
	UnitMicrosecond: "MICROSECOND", UnitSecond: "SECOND", UnitMinute: "MINUTE",
	UnitHour: "HOUR", UnitDay: "DAY", UnitWeek: "WEEK", UnitMonth: "MONTH",
	UnitYear: "YEAR",
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

func (*NullLit) exprNode()     {}
func (*BoolLit) exprNode()     {}
func (*IntLit) exprNode()      {}
func (*DecimalLit) exprNode()  {}
func (*FloatLit) exprNode()    {}
func (*StringLit) exprNode()   {}
func (*DefaultExpr) exprNode() {}
func (*ColumnRef) exprNode()   {}
func (*UnaryExpr) exprNode()   {}
func (*BinaryExpr) exprNode()  {}
func (*IsExpr) exprNode()      {}
func (*InExpr) exprNode()      {}
func (*BetweenExpr) exprNode() {}
func (*LikeExpr) exprNode()    {}
func (*FuncCall) exprNode()    {}
func (*CastExpr) exprNode()    {}
func (*CaseExpr) exprNode()    {}
func (*DateArith) exprNode()   {}

// Walk visits e depth-first in source order: it calls fn(e) and, when fn
// returns true, walks e's children. A nil e is not visited.
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
	}
}

// IsAggregate reports whether name (any case) is an aggregate function of
// the dialect: count, sum, min, max, avg.
func IsAggregate(name string) bool {
	switch strings.ToLower(name) {
	case "count", "sum", "min", "max", "avg":
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
