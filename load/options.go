package load

import (
	"crypto/rand"
	"encoding/hex"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/rowttl/rowttl"
)

// Options describe one load; the zero value loads a tab-separated file
// with a generated label, in UTC, refusing any bad row.
type Options struct {
	// Label makes the load idempotent: a label the table has applied
	// answers StatusLabelExists and writes nothing. Empty: one is generated.
	Label string
	// ColumnSeparator and LineDelimiter, in the notation of Stream Load
	// headers: the text itself, with \t \n \r \\ and \xHH escapes (\x01).
	// Defaults "\t" and "\n".
	ColumnSeparator string
	LineDelimiter   string
	// Enclose and Escape are single bytes (empty: none); see Format.
	Enclose string
	Escape  string
	// Columns is the Stream Load column list (see sql.CompileLoadColumns).
	Columns string
	// TimeZone reads DATE and DATETIME values derived into __TTL__, zone-less
	// TIMESTAMPTZ texts, CURRENT_TIMESTAMP defaults and NOW(): UTC, ±HH:MM,
	// or an IANA name. Default UTC.
	TimeZone string
	// MaxFilterRatio is the share of rows that may be filtered (bad rows)
	// before the whole load fails; 0 means none may.
	MaxFilterRatio float64
	// StrictMode false makes a field that does not convert to its column's
	// type NULL instead of filtering its row (Doris's non-strict mode); the
	// default (nil or true) filters it.
	StrictMode *bool
	// SkipLines skips leading records (csv_with_names has one).
	SkipLines int
	// Partial asks for a partial-column update, which row TTL tables refuse.
	Partial bool
	// Format is "csv" (the default) or "parquet". A Parquet input binds
	// the column list to the file's columns by name; the CSV options
	// above do not apply to it.
	Format string
	// TempDir holds the copy of a Parquet input that is not a regular
	// file (a pipe, an HTTP body); default os.TempDir().
	TempDir string

	// Now is the load's now (CURRENT_TIMESTAMP defaults, NOW()); zero
	// means the table's clock.
	Now time.Time
	// BatchRows and BatchBytes bound the rows converted before they are
	// handed to the table; defaults 65536 and 32 MiB.
	BatchRows  int
	BatchBytes int
	// Progress, when set, is kept up to date while the load runs.
	Progress *Progress
	// Workers, when set, is the pool whose slots the load's converting
	// and encoding goroutines hold while they compute; nil bounds nothing.
	Workers *Workers
}

// strict reports whether bad fields filter their rows.
func (o *Options) strict() bool { return o.StrictMode == nil || *o.StrictMode }

// maxLabelLen is Doris's bound on labels.
const maxLabelLen = 128

// checkLabel applies Doris's label rule: 1 to 128 of [-_A-Za-z0-9:].
func checkLabel(l string) error {
	if l == "" || len(l) > maxLabelLen {
		return rowttl.Errorf(rowttl.ErrInvalidArgument, "label %q must be 1 to %d characters", l, maxLabelLen)
	}
	for i := 0; i < len(l); i++ {
		c := l[i]
		if !(c == '-' || c == '_' || c == ':' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z') {
			return rowttl.Errorf(rowttl.ErrInvalidArgument, "label %q may only hold letters, digits, '-', '_' and ':'", l)
		}
	}
	return nil
}

// NewLabel generates a label: rowttl_<UTC time>_<random hex>.
func NewLabel() string {
	var b [6]byte
	rand.Read(b[:])
	return "rowttl_" + time.Now().UTC().Format("20060102_150405") + "_" + hex.EncodeToString(b[:])
}

// Unescape decodes the separator notation of Stream Load headers (\t,
// \n, \r, \\ and \xHH); what names the option in errors.
func Unescape(what, s string) ([]byte, error) { return unescape(what, s) }

// unescape decodes the separator notation of Stream Load headers.
func unescape(what, s string) ([]byte, error) {
	var out []byte
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c != '\\' || i+1 == len(s) {
			out = append(out, c)
			continue
		}
		i++
		switch s[i] {
		case 't':
			out = append(out, '\t')
		case 'n':
			out = append(out, '\n')
		case 'r':
			out = append(out, '\r')
		case '\\':
			out = append(out, '\\')
		case 'x', 'X':
			if i+2 >= len(s) {
				return nil, rowttl.Errorf(rowttl.ErrInvalidArgument, "%s %q: \\x needs two hex digits", what, s)
			}
			b, err := hex.DecodeString(s[i+1 : i+3])
			if err != nil {
				return nil, rowttl.Errorf(rowttl.ErrInvalidArgument, "%s %q: bad \\x escape", what, s)
			}
			out = append(out, b[0])
			i += 2
		default:
			out = append(out, '\\', s[i])
		}
	}
	return out, nil
}

// format turns the options' notation into a Format.
func (o *Options) format() (Format, error) {
	var f Format
	var err error
	if o.ColumnSeparator != "" {
		if f.ColumnSeparator, err = unescape("column_separator", o.ColumnSeparator); err != nil {
			return f, err
		}
	}
	if o.LineDelimiter != "" {
		if f.LineDelimiter, err = unescape("line_delimiter", o.LineDelimiter); err != nil {
			return f, err
		}
	}
	one := func(what, s string) (byte, error) {
		if s == "" {
			return 0, nil
		}
		b, err := unescape(what, s)
		if err != nil {
			return 0, err
		}
		if len(b) != 1 {
			return 0, rowttl.Errorf(rowttl.ErrInvalidArgument, "%s %q must be one byte", what, s)
		}
		return b[0], nil
	}
	if f.Enclose, err = one("enclose", o.Enclose); err != nil {
		return f, err
	}
	if f.Escape, err = one("escape", o.Escape); err != nil {
		return f, err
	}
	return f, nil
}

// Header names of a Stream Load request, as Doris spells them.
const (
	HeaderLabel           = "label"
	HeaderColumnSeparator = "column_separator"
	HeaderLineDelimiter   = "line_delimiter"
	HeaderColumns         = "columns"
	HeaderTimeZone        = "timezone"
	HeaderMaxFilterRatio  = "max_filter_ratio"
	HeaderEnclose         = "enclose"
	HeaderEscape          = "escape"
	HeaderFormat          = "format"
	HeaderSkipLines       = "skip_lines"
	HeaderStrictMode      = "strict_mode"
	HeaderPartialColumns  = "partial_columns"
	HeaderWhere           = "where"
)

// OptionsFromHeader reads the options of a Stream Load request. Headers
// rowttl does not know are ignored, as Doris ignores them; `where` (row
// selection) and formats other than CSV are refused, since ignoring them
// would load rows the caller did not ask for.
func OptionsFromHeader(h http.Header) (Options, error) {
	var o Options
	get := func(k string) string { return strings.TrimSpace(h.Get(k)) }
	o.Label = get(HeaderLabel)
	// Separators are taken as sent: a space is a valid separator.
	o.ColumnSeparator = h.Get(HeaderColumnSeparator)
	o.LineDelimiter = h.Get(HeaderLineDelimiter)
	o.Columns = get(HeaderColumns)
	o.TimeZone = get(HeaderTimeZone)
	if o.TimeZone == "" {
		o.TimeZone = get("time_zone")
	}
	o.Enclose = h.Get(HeaderEnclose)
	o.Escape = h.Get(HeaderEscape)
	if s := get(HeaderMaxFilterRatio); s != "" {
		r, err := strconv.ParseFloat(s, 64)
		if err != nil || !validRatio(r) {
			return o, rowttl.Errorf(rowttl.ErrInvalidArgument, "max_filter_ratio %q must be a number from 0 to 1", s)
		}
		o.MaxFilterRatio = r
	}
	switch f := strings.ToLower(get(HeaderFormat)); f {
	case "", "csv":
	case "csv_with_names":
		o.SkipLines = 1
	case "csv_with_names_and_types":
		o.SkipLines = 2
	case FormatParquet:
		o.Format = FormatParquet
	default:
		return o, rowttl.Errorf(rowttl.ErrNotSupported, "format %q: only csv, csv_with_names, csv_with_names_and_types and parquet are supported", f)
	}
	if s := get(HeaderSkipLines); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 0 {
			return o, rowttl.Errorf(rowttl.ErrInvalidArgument, "skip_lines %q must be a non-negative integer", s)
		}
		o.SkipLines += n
	}
	if s := get(HeaderStrictMode); s != "" {
		b, err := strconv.ParseBool(s)
		if err != nil {
			return o, rowttl.Errorf(rowttl.ErrInvalidArgument, "strict_mode %q must be true or false", s)
		}
		o.StrictMode = &b
	}
	if s := get(HeaderPartialColumns); s != "" {
		b, err := strconv.ParseBool(s)
		if err != nil {
			return o, rowttl.Errorf(rowttl.ErrInvalidArgument, "partial_columns %q must be true or false", s)
		}
		o.Partial = b
	}
	if get(HeaderWhere) != "" {
		return o, rowttl.Errorf(rowttl.ErrNotSupported, "the where header (row selection) is not supported")
	}
	return o, nil
}
