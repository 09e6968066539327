package sql

import (
	"errors"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/rowttl/rowttl"
	"github.com/rowttl/rowttl/exec"
	"github.com/rowttl/rowttl/query"
	"github.com/rowttl/rowttl/schema"
	"github.com/rowttl/rowttl/sql/parser"
)

// evalScope has one column of each kind the tests use.
func evalScope() (*scope, []schema.Value) {
	sc := &scope{tableName: "t", qualifiers: []string{"t"}, cols: []column{
		{name: "i", typ: schema.IntType},
		{name: "d", typ: schema.DoubleType},
		{name: "s", typ: schema.StringType},
		{name: "dt", typ: schema.DatetimeType(3)},
		{name: "day", typ: schema.DateType},
		{name: "n", typ: schema.BigIntType},
		{name: "dec", typ: schema.Type{Kind: schema.Decimal, Precision: 10, Scale: 2}},
		{name: "__TTL__", typ: schema.BigIntType, ttl: true},
	}}
	dt, _ := schema.ParseDatetime("2024-02-29 10:20:30.456")
	day, _ := schema.ParseDate("2024-03-01")
	row := []schema.Value{
		schema.IntVal(7), schema.FloatVal(2.5), schema.BytesVal([]byte("hello")),
		schema.IntVal(dt), schema.IntVal(int64(day)), schema.Null, schema.DecimalVal(decimal128.FromI64(1234)), schema.IntVal(99),
	}
	return sc, row
}

func TestEval(t *testing.T) {
	env := &stmtEnv{now: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC), loc: time.FixedZone("+08:00", 8*3600)}
	tests := []struct {
		expr, want string
	}{
		{"i + 1", "8"},
		{"i * d", "17.5"},
		{"i / 2", "3.5"},
		{"i DIV 2", "3"},
		{"i % 4", "3"},
		{"i / 0", "NULL"},
		{"-i", "-7"},
		{"n + 1", "NULL"},
		{"n IS NULL", "true"},
		{"n = n", "NULL"},
		{"n <=> n", "true"},
		{"i <=> n", "false"},
		{"i > 5 AND n > 1", "NULL"},
		{"i > 10 AND n > 1", "false"},
		{"i > 5 OR n > 1", "true"},
		{"NOT (n > 1)", "NULL"},
		{"i IN (1, 7)", "true"},
		{"i IN (1, n)", "NULL"},
		{"i NOT IN (1, 2)", "true"},
		{"i BETWEEN 7 AND 8", "true"},
		{"d BETWEEN 3 AND 4", "false"},
		{"s LIKE 'h%o'", "true"},
		{"s LIKE 'h_llo'", "true"},
		{"s LIKE 'H%'", "false"},
		{"s NOT LIKE '%z%'", "true"},
		{"CASE WHEN i > 5 THEN 'big' ELSE 'small' END", "big"},
		{"CASE i WHEN 1 THEN 1.5 WHEN 7 THEN 2 END", "2.0"},
		{"CASE WHEN n THEN 1 END", "NULL"},
		{"dt", "2024-02-29 10:20:30.456"},
		{"dt + INTERVAL 1 DAY", "2024-03-01 10:20:30.456"},
		{"dt - INTERVAL 1 YEAR", "2023-02-28 10:20:30.456"},
		{"dt + INTERVAL 1 MICROSECOND", "2024-02-29 10:20:30.456001"},
		{"day - INTERVAL 1 DAY", "2024-02-29"},
		{"day + INTERVAL 90 MINUTE", "2024-03-01 01:30:00"},
		{"dt > '2024-02-29'", "true"},
		{"dt < '2024-02-29 10:20:30.457'", "true"},
		{"day = '2024-03-01'", "true"},
		{"day < dt", "false"},
		{"NOW()", "2026-01-01 08:00:00"},
		{"NOW(6) - INTERVAL 2 DAY", "2025-12-30 08:00:00.000000"},
		{"CURRENT_TIMESTAMP", "2026-01-01 08:00:00"},
		{"curdate()", "2026-01-01"},
		{"CAST(dt AS DATE)", "2024-02-29"},
		{"CAST(dt AS TIMESTAMPTZ)", "2024-02-29 10:20:30+08:00"},
		{"CAST(dt AS STRING)", "2024-02-29 10:20:30.456"},
		{"CAST('2024-01-01 00:00:00+00:00' AS TIMESTAMPTZ(0))", "2024-01-01 08:00:00+08:00"},
		{"CAST(d AS INT)", "2"},
		{"CAST(i AS DOUBLE) / 4", "1.75"},
		{"CAST('  42 ' AS BIGINT)", "42"},
		{"CAST(day AS INT)", "20240301"},
		{"dec", "12.34"},
		{"dec * 2", "24.68"},
		{"dec > 12", "true"},
		{"CAST(dec AS DECIMAL(10,3))", "12.340"},
		{"-dec", "-12.34"},
		{"1e16", "1e+16"},
		{"0.000001", "0.000001"},
		{"1.0/3", "0.33333"},
		{"1.0e0/3", "0.3333333333333333"},
		{"0.1 + 0.2", "0.3"},
		{"0.1 + 0.2 = 0.3", "true"},
		{"1.50 * 2", "3.00"},
		{"dec + 0.001", "12.341"},
		{"dec * 1.5e0", "18.509999999999998"},
		{"dec / 3", "4.113333"},
		{"dec DIV 5", "2"},
		{"dec % 5", "2.34"},
		{"dec = 12.340", "true"},
		{"dec < 12.3400001", "true"},
		{"dec = '12.340'", "true"},
		{"dec < '12.3400001'", "true"},
		{"'1.234e1' = dec", "true"},
		{"dec IN ('12.34', 1)", "true"},
		{"12345678901234567890123456789.123456789 + 1", "12345678901234567890123456790.123456789"},
		{"99999999999999999999999999999999999999 * 1", "99999999999999999999999999999999999999"},
		{"round(dec, 1)", "12.3"},
		{"round(-2.5)", "-3"},
		{"floor(-2.5)", "-3"},
		{"ceil(2.01)", "3"},
		{"truncate(2.789, 2)", "2.78"},
		{"abs(-0.50)", "0.50"},
		{"CAST(1.005 AS DECIMAL(3,2))", "1.01"},
		{"CAST('1.005' AS DECIMAL(3,2))", "1.01"},
		{"CAST(1.005e0 AS DECIMAL(3,2))", "1.01"},
		{"CAST(-2.5 AS INT)", "-2"},
		{"COALESCE(n, i)", "7"},
		{"IF(i > 1, s, 'no')", "hello"},
		{"CONCAT(s, '-', i)", "hello-7"},
		{"SUBSTRING(s, 2)", "ello"},
		{"i = '7'", "true"},
		{"s = 'hello'", "true"},
		{"TRUE + 1", "2"},
	}
	for _, tc := range tests {
		sc, row := evalScope()
		e, err := parser.ParseExpr(tc.expr)
		if err != nil {
			t.Errorf("%s: parse: %v", tc.expr, err)
			continue
		}
		c := newCompiler(env, sc)
		x, err := c.compile(e)
		if err != nil {
			t.Errorf("%s: compile: %v", tc.expr, err)
			continue
		}
		v, err := x.eval(row)
		if err != nil {
			t.Errorf("%s: eval: %v", tc.expr, err)
			continue
		}
		if got := renderValue(v, x.t, env.loc); got != tc.want {
			t.Errorf("%s = %s (%s), want %s", tc.expr, got, x.t, tc.want)
		}
	}
}

func TestEvalErrors(t *testing.T) {
	env := &stmtEnv{now: time.Unix(0, 0), loc: time.UTC}
	tests := []struct {
		expr     string
		sentinel error
	}{
		{"nope + 1", rowttl.ErrNotFound},
		{"__TTL__", rowttl.ErrNotFound},
		{"__DORIS_TTL_COL__", rowttl.ErrNotFound},
		{"x.i", rowttl.ErrNotFound},
		{"9223372036854775807 + i", rowttl.ErrInvalidArgument},
		{"dt + 1", rowttl.ErrInvalidArgument},
		{"dt = 1", rowttl.ErrInvalidArgument},
		{"CAST('x' AS INT)", rowttl.ErrInvalidArgument},
		{"CAST(1000 AS TINYINT)", rowttl.ErrInvalidArgument},
		{"count(*)", rowttl.ErrInvalidArgument},
		{"nosuch(1)", rowttl.ErrNotSupported},
		{"DATETIME '9999-12-31 00:00:00' + INTERVAL 1 DAY", rowttl.ErrInvalidArgument},
		{"s + 1", rowttl.ErrInvalidArgument},
		{"99999999999999999999999999999999999999 + 1", rowttl.ErrInvalidArgument},
		{"99999999999999999999999999999999999999 * 10", rowttl.ErrInvalidArgument},
		{"CAST(1000 AS DECIMAL(3,0))", rowttl.ErrInvalidArgument},
		{"CAST(999.995 AS DECIMAL(5,2))", rowttl.ErrInvalidArgument},
		{"CAST('1x' AS DECIMAL(5,2))", rowttl.ErrInvalidArgument},
		{"CAST(dec AS DECIMAL(3,2))", rowttl.ErrInvalidArgument},
	}
	for _, tc := range tests {
		sc, row := evalScope()
		e, err := parser.ParseExpr(tc.expr)
		if err != nil {
			t.Errorf("%s: parse: %v", tc.expr, err)
			continue
		}
		x, err := newCompiler(env, sc).compile(e)
		if err == nil {
			_, err = x.eval(row)
		}
		if !errors.Is(err, tc.sentinel) {
			t.Errorf("%s: err = %v, want %v", tc.expr, err, tc.sentinel)
		}
	}
	// With hidden columns shown, both names reach __TTL__.
	sc, row := evalScope()
	sc.showHidden = true
	for _, name := range []string{"__TTL__", "__doris_ttl_col__"} {
		e, _ := parser.ParseExpr(name)
		x, err := newCompiler(env, sc).compile(e)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if v, _ := x.eval(row); v.Int != 99 {
			t.Fatalf("%s = %v", name, v)
		}
	}
}

func TestLikeMatch(t *testing.T) {
	tests := []struct {
		s, p string
		want bool
	}{
		{"", "", true}, {"", "%", true}, {"a", "", false}, {"abc", "a%c", true},
		{"abc", "%%c", true}, {"abc", "a_", false}, {"a%c", `a\%c`, true}, {"abc", `a\%c`, false},
		{"aXbXc", "a%b%c", true}, {"ab", "a%b%c", false}, {"héllo", "h_llo", true}, {"mississippi", "%iss%pi", true},
	}
	for _, tc := range tests {
		if got := exec.LikeMatch([]rune(tc.s), []rune(tc.p), '\\'); got != tc.want {
			t.Errorf("%q LIKE %q = %v", tc.s, tc.p, got)
		}
	}
}

func TestRenderAndParse(t *testing.T) {
	floats := map[float64]string{0: "0", 1.5: "1.5", -2: "-2", 1e15: "1000000000000000", 1e16: "1e+16", 1e-7: "1e-07", 123.456: "123.456"}
	for f, want := range floats {
		if got := formatFloat(f, 64); got != want {
			t.Errorf("formatFloat(%v) = %s, want %s", f, got, want)
		}
	}
	decs := []struct {
		in    string
		scale int
		want  string
		ok    bool
	}{{"1.25", 2, "1.25", true}, {"-1.255", 2, "-1.26", true}, {"3", 2, "3.00", true}, {".5", 1, "0.5", true},
		{"x", 2, "", false}, {"1e2", 0, "100", true}, {"1.005", 2, "1.01", true}}
	for _, d := range decs {
		typ := schema.DecimalType(18, d.scale)
		f, err := castFunc(stringType, typ, time.UTC)
		if err != nil {
			t.Fatal(err)
		}
		v, err := f(schema.BytesVal([]byte(d.in)))
		if (err == nil) != d.ok || (d.ok && renderValue(v, typ, time.UTC) != d.want) {
			t.Errorf("CAST(%q AS %s) = %s, %v, want %s", d.in, typ, renderValue(v, typ, time.UTC), err, d.want)
		}
	}
	if got := renderValue(schema.DecimalVal(decimal128.FromI64(-5)), schema.DecimalType(3, 2), time.UTC); got != "-0.05" {
		t.Errorf("render -5 at scale 2 = %s", got)
	}
	for _, z := range []string{"UTC", "+08:00", "-03:30", "Asia/Shanghai", "Europe/Paris", "Z"} {
		if _, err := loadZone(z); err != nil {
			t.Errorf("loadZone(%q): %v", z, err)
		}
	}
	for _, z := range []string{"", "+15:00", "Nowhere/City", "local", "8"} {
		if _, err := loadZone(z); err == nil {
			t.Errorf("loadZone(%q) accepted", z)
		}
	}
	us, err := parseInstant("2026-01-01 08:00:00+08:00", time.UTC)
	if err != nil || us != time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC).UnixMicro() {
		t.Errorf("parseInstant = %d, %v", us, err)
	}
}

// TestPushDecimalLiterals: a DECIMAL literal against a DOUBLE column still
// reaches the scan's filter (as the DOUBLE the row path compares with); a
// DECIMAL column is compared on the row path only, exactly.
func TestPushDecimalLiterals(t *testing.T) {
	env := &stmtEnv{now: time.Unix(0, 0), loc: time.UTC}
	sc, _ := evalScope()
	for _, c := range []struct {
		expr   string
		pushed bool
	}{
		{"d > 2.5", true},
		{"d <= -0.125", true},
		{"dec > 2.5", false},
		{"i > 2", true},
	} {
		e, err := parser.ParseExpr(c.expr)
		if err != nil {
			t.Fatal(err)
		}
		q := pushOne(env, sc, e)
		if (q != nil) != c.pushed {
			t.Errorf("%s: pushed %v, want %v", c.expr, q, c.pushed)
		}
		if cmp, ok := q.(query.Cmp); ok && c.expr == "d > 2.5" && cmp.Value.(schema.Value).Float != 2.5 {
			t.Errorf("%s: pushed value %v", c.expr, cmp.Value)
		}
	}
}
