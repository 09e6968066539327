package load

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"sync/atomic"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/rowttl/rowttl"
	"github.com/rowttl/rowttl/schema"
	"github.com/rowttl/rowttl/sql"
	"github.com/rowttl/rowttl/table"
)

// Status values of a Result, as Stream Load answers them.
const (
	StatusSuccess     = "Success"
	StatusLabelExists = "Label Already Exists"
	StatusFail        = "Fail"
)

// Result is the answer to a load, shaped (and marshalled) as Stream
// Load's JSON. NumberTotalRows and NumberFilteredRows are what the load
// counted even when it failed; NumberLoadedRows is 0 unless it succeeded,
// since a load that did not succeed wrote nothing.
type Result struct {
	// TxnID is the version the load published (0 unless Success).
	TxnID          int64  `json:"TxnId"`
	Label          string `json:"Label"`
	Comment        string `json:"Comment"`
	TwoPhaseCommit string `json:"TwoPhaseCommit"`
	Status         string `json:"Status"`
	// ExistingJobStatus is FINISHED when the label was already used.
	ExistingJobStatus    string `json:"ExistingJobStatus,omitempty"`
	Message              string `json:"Message"`
	NumberTotalRows      int64  `json:"NumberTotalRows"`
	NumberLoadedRows     int64  `json:"NumberLoadedRows"`
	NumberFilteredRows   int64  `json:"NumberFilteredRows"`
	NumberUnselectedRows int64  `json:"NumberUnselectedRows"`
	LoadBytes            int64  `json:"LoadBytes"`
	LoadTimeMs           int64  `json:"LoadTimeMs"`
	// CommitAndPublishTimeMs is the time spent publishing the version.
	CommitAndPublishTimeMs int64 `json:"CommitAndPublishTimeMs"`
	// FirstErrorMsg and ErrorRows say why rows were filtered: the first
	// reason, and up to maxErrorRows of them with their line numbers.
	FirstErrorMsg string   `json:"FirstErrorMsg,omitempty"`
	ErrorRows     []string `json:"ErrorRows,omitempty"`

	// Err is the error behind a Fail or a Label Already Exists (nil on
	// Success); errors.Is finds its sentinel.
	Err error `json:"-"`
}

// OK reports a successful load.
func (r *Result) OK() bool { return r.Status == StatusSuccess }

// maxErrorRows bounds the reasons a Result keeps.
const maxErrorRows = 10

// Progress is updated by a running load; any goroutine may read it.
type Progress struct {
	rows  atomic.Int64
	bytes atomic.Int64
}

// Rows returns the rows read so far.
func (p *Progress) Rows() int64 { return p.rows.Load() }

// Bytes returns the bytes read so far.
func (p *Progress) Bytes() int64 { return p.bytes.Load() }

// Default batch bounds.
const (
	DefaultBatchRows  = 64 << 10
	DefaultBatchBytes = 32 << 20
)

// Run loads the CSV stream r into tbl as one version and returns the
// Stream Load answer. The stream is read once, in batches, whatever its
// size. Rows that do not parse or convert (a wrong field count, a bad
// number or date, NULL into a NOT NULL column, a value longer than its
// VARCHAR) are filtered: skipped and counted. The load fails as a whole,
// writing nothing, when the filtered rows exceed MaxFilterRatio of the
// rows read, when the input cannot be read, or when the table refuses the
// rows; it answers StatusLabelExists, writing nothing and reading nothing,
// when the label was already applied. Rows that are already expired are
// loaded (and invisible), not filtered.
func Run(ctx context.Context, tbl *table.Table, r io.Reader, o Options, mem memory.Allocator) *Result {
	start := time.Now()
	res := &Result{Label: o.Label, TwoPhaseCommit: "false", Status: StatusFail}
	if res.Label == "" {
		res.Label = NewLabel()
	}
	fail := func(err error) *Result {
		res.Status, res.Message, res.Err = StatusFail, err.Error(), err
		res.NumberLoadedRows = 0
		res.LoadTimeMs = time.Since(start).Milliseconds()
		return res
	}
	if err := checkLabel(res.Label); err != nil {
		return fail(err)
	}
	if mem == nil {
		mem = memory.DefaultAllocator
	}
	loc := time.UTC
	if o.TimeZone != "" {
		l, err := sql.LoadZone(o.TimeZone)
		if err != nil {
			return fail(fmt.Errorf("timezone: %w", err))
		}
		loc = l
	}
	format, err := o.format()
	if err != nil {
		return fail(err)
	}
	parquet, err := o.isParquet()
	if err != nil {
		return fail(err)
	}
	if !validRatio(o.MaxFilterRatio) {
		return fail(rowttl.Errorf(rowttl.ErrInvalidArgument, "max_filter_ratio %v must be from 0 to 1", o.MaxFilterRatio))
	}
	now := o.Now
	if now.IsZero() {
		now = time.Now()
	}
	labelExists := func(err error) *Result {
		res.Status, res.ExistingJobStatus, res.Err = StatusLabelExists, "FINISHED", err
		res.Message = fmt.Sprintf("Label [%s] has already been used.", res.Label)
		res.NumberLoadedRows = 0
		res.LoadTimeMs = time.Since(start).Milliseconds()
		return res
	}
	lw, err := tbl.NewLoadWriter(ctx, table.WriteOptions{Now: now, TimeZone: loc, Label: res.Label, Partial: o.Partial})
	if errors.Is(err, rowttl.ErrLabelExists) {
		return labelExists(err)
	}
	if err != nil {
		return fail(err)
	}
	l := &loader{o: o, res: res, lw: lw, mem: mem}
	l.slot = slot{w: o.Workers, ctx: ctx}
	l.wslot = slot{w: o.Workers, ctx: ctx}
	defer l.abort()
	// The column list is compiled for the definition the load writer
	// encodes for; an ALTER before the load publishes fails the load.
	def, pol := lw.Definition(), lw.Policy()
	if parquet {
		pf, err := openParquetInput(ctx, r, o, mem)
		if err != nil {
			return fail(err)
		}
		defer pf.close()
		res.LoadBytes = pf.size
		spec, err := pf.columnList(o.Columns, def, pol)
		if err != nil {
			return fail(err)
		}
		cols, err := sql.CompileLoadColumnsTyped(spec, def, pol, loc, now, pf.varType)
		if err != nil {
			return fail(err)
		}
		if err := l.init(cols, loc); err != nil {
			return fail(err)
		}
		if err := l.bindParquet(pf, loc); err != nil {
			return fail(err)
		}
		l.startWriter()
		if err := l.slot.take(); err != nil {
			return fail(err)
		}
		err = l.readParquet(ctx, pf)
		l.slot.drop()
		res.NumberLoadedRows = res.NumberTotalRows - res.NumberFilteredRows
		if err != nil {
			return fail(err)
		}
	} else {
		cols, err := sql.CompileLoadColumns(o.Columns, def, pol, loc, now)
		if err != nil {
			return fail(err)
		}
		if err := l.init(cols, loc); err != nil {
			return fail(err)
		}
		rd := NewReader(&slotReader{r: r, s: &l.slot}, format)
		l.startWriter()
		if err := l.slot.take(); err != nil {
			return fail(err)
		}
		err = l.read(ctx, rd)
		l.slot.drop()
		res.LoadBytes = rd.BytesRead()
		res.NumberLoadedRows = res.NumberTotalRows - res.NumberFilteredRows
		if err != nil {
			return fail(err)
		}
	}
	if f := res.NumberFilteredRows; f > 0 && float64(f) > o.MaxFilterRatio*float64(res.NumberTotalRows) {
		return fail(rowttl.Errorf(rowttl.ErrInvalidArgument, "[DATA_QUALITY_ERROR]too many filtered rows: %d of %d, more than max_filter_ratio %v allows; first error: %s", f, res.NumberTotalRows, o.MaxFilterRatio, res.FirstErrorMsg))
	}
	commitStart := time.Now()
	// Finishing the files is computing too (a UNIQUE load sorts and
	// merges its runs there): the commit holds a slot, the wait for the
	// writer lock included.
	if err := l.slot.take(); err != nil {
		return fail(err)
	}
	lw, l.lw = l.lw, nil
	err = lw.Commit()
	l.slot.drop()
	if err != nil {
		if errors.Is(err, rowttl.ErrLabelExists) {
			// A load of the same label, running beside this one, published
			// first.
			return labelExists(err)
		}
		return fail(err)
	}
	res.CommitAndPublishTimeMs = time.Since(commitStart).Milliseconds()
	res.TxnID = lw.Version()
	res.Status, res.Message, res.Err = StatusSuccess, "OK", nil
	res.LoadTimeMs = time.Since(start).Milliseconds()
	return res
}

// validRatio reports a max_filter_ratio from 0 to 1; NaN, which compares
// false with everything, would otherwise switch the filter check off.
func validRatio(r float64) bool { return r >= 0 && r <= 1 }

// loader converts records into batches for one load.
type loader struct {
	o   Options
	res *Result
	lw  *table.LoadWriter // nil once the load is known to fail
	mem memory.Allocator

	fields  []sql.LoadField
	convs   []converter
	targets []sql.LoadTarget
	sc      *arrow.Schema
	b       *array.RecordBuilder
	appends []appender

	// pq binds the fields to the columns of a Parquet input, pqCols are
	// the file's columns read.
	pq     []parquetField
	pqCols []int

	row, vals  []schema.Value
	batchRows  int
	batchBytes int

	// The table side runs in its own goroutine, so that converting the
	// next batch overlaps encoding the last: batches go through ch (at
	// most one waits there), the writer's first error comes back on werr
	// and is also kept in failed to stop the reading early.
	ch     chan arrow.RecordBatch
	werr   chan error
	failed atomic.Pointer[error]

	// slot is the converting goroutine's hold on a Workers slot, wslot
	// the writer goroutine's.
	slot, wslot slot
}

// startWriter starts the goroutine handing batches to the load writer.
func (l *loader) startWriter() {
	ch, werr := make(chan arrow.RecordBatch, 1), make(chan error, 1)
	l.ch, l.werr = ch, werr
	lw, ws := l.lw, &l.wslot
	go func() {
		var err error
		for rec := range ch {
			if err == nil {
				if err = ws.take(); err == nil {
					err = writeSliced(lw, rec, ws)
					ws.drop()
				}
				if err != nil {
					l.failed.Store(&err)
				}
			}
			rec.Release()
		}
		werr <- err
	}()
}

// writeSlice is how many rows the writer goroutine encodes between
// yields of its slot (about a millisecond of work).
const writeSlice = 8192

// writeSliced writes rec to lw a slice at a time, yielding the slot in
// between; with no pool it writes rec whole.
func writeSliced(lw *table.LoadWriter, rec arrow.RecordBatch, s *slot) error {
	n := rec.NumRows()
	if s.w == nil || n <= writeSlice {
		return lw.Write(rec)
	}
	for off := int64(0); off < n; off += writeSlice {
		part := rec.NewSlice(off, min(off+writeSlice, n))
		err := lw.Write(part)
		part.Release()
		if err == nil && off+writeSlice < n {
			err = s.yield()
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// send hands a batch to the writer goroutine, letting the converting
// goroutine's slot go while it waits: the writer may need that slot to
// take the batch.
func (l *loader) send(rec arrow.RecordBatch) error {
	l.slot.drop()
	l.ch <- rec
	return l.slot.take()
}

// stopWriter waits for the batches sent so far to be written and returns
// the writer's error. The converting goroutine's slot goes meanwhile.
func (l *loader) stopWriter() error {
	if l.ch == nil {
		return nil
	}
	l.slot.drop()
	close(l.ch)
	l.ch = nil
	return <-l.werr
}

func (l *loader) abort() {
	l.stopWriter()
	l.slot.drop()
	if l.lw != nil {
		l.lw.Abort()
		l.lw = nil
	}
	if l.b != nil {
		l.b.Release()
		l.b = nil
	}
}

func (l *loader) init(cols *sql.LoadColumns, loc *time.Location) error {
	l.fields, l.targets = cols.Fields, cols.Targets
	for _, f := range l.fields {
		c, err := converterFor(f, loc)
		if err != nil {
			if parquet, _ := l.o.isParquet(); !parquet {
				return fmt.Errorf("columns: field %s: %w", f.Name, err)
			}
			// A Parquet field is read as text only from a text column;
			// bindParquet refuses the pair then.
			c = nil
		}
		l.convs = append(l.convs, c)
	}
	fs := make([]arrow.Field, len(l.targets))
	for i, tg := range l.targets {
		if tg.IsTTL() {
			fs[i] = arrow.Field{Name: schema.TTLColumn, Type: arrow.PrimitiveTypes.Int64, Nullable: true}
		} else {
			fs[i] = arrow.Field{Name: tg.Column.Name, Type: tg.Column.Type.Arrow(), Nullable: true}
		}
	}
	l.sc = arrow.NewSchema(fs, nil)
	l.b = array.NewRecordBuilder(l.mem, l.sc)
	for i := range l.targets {
		l.appends = append(l.appends, appenderFor(l.b.Field(i)))
	}
	l.row = make([]schema.Value, len(l.fields))
	l.vals = make([]schema.Value, len(l.targets))
	if l.o.BatchRows <= 0 {
		l.o.BatchRows = DefaultBatchRows
	}
	if l.o.BatchBytes <= 0 {
		l.o.BatchBytes = DefaultBatchBytes
	}
	return nil
}

// filter counts a bad row and keeps its reason; where says which row
// ("line N" of a CSV input, "row N" of a Parquet file).
func (l *loader) filter(where, reason string) {
	l.res.NumberFilteredRows++
	msg := where + ": " + reason
	if l.res.FirstErrorMsg == "" {
		l.res.FirstErrorMsg = msg
	}
	if len(l.res.ErrorRows) < maxErrorRows {
		l.res.ErrorRows = append(l.res.ErrorRows, msg)
	}
	if l.o.MaxFilterRatio == 0 && l.lw != nil {
		// The load will fail: stop writing, free the table, and only
		// count the rest (a context that ends meanwhile stops the read).
		l.stopWriter()
		l.lw.Abort()
		l.lw = nil
		_ = l.slot.take()
	}
}

// read converts every record and hands full batches to the load writer.
func (l *loader) read(ctx context.Context, rd *Reader) error {
	skip := l.o.SkipLines
	var n int64
	for {
		fields, err := rd.Next()
		if err == io.EOF {
			break
		}
		if err != nil && !errors.Is(err, ErrMalformed) {
			return fmt.Errorf("read input: %w", err)
		}
		if fields == nil && err == nil {
			continue // an empty line
		}
		if skip > 0 {
			skip--
			continue
		}
		l.res.NumberTotalRows++
		if n++; n&4095 == 0 {
			if err := ctx.Err(); err != nil {
				return err
			}
			if err := l.slot.yield(); err != nil {
				return err
			}
			if p := l.o.Progress; p != nil {
				p.rows.Store(l.res.NumberTotalRows)
				p.bytes.Store(rd.BytesRead())
			}
		}
		if err != nil {
			l.filter(fmt.Sprintf("line %d", rd.Record()), err.Error())
			continue
		}
		if reason := l.convert(fields); reason != "" {
			l.filter(fmt.Sprintf("line %d", rd.Record()), reason)
			continue
		}
		n := 0
		for _, f := range fields {
			n += len(f)
		}
		if err := l.add(n); err != nil {
			return err
		}
	}
	if p := l.o.Progress; p != nil {
		p.rows.Store(l.res.NumberTotalRows)
		p.bytes.Store(rd.BytesRead())
	}
	if l.lw == nil {
		return nil
	}
	if err := l.flush(); err != nil {
		return err
	}
	return l.stopWriter()
}

// convert fills l.vals from a record's fields, or says why the row is
// filtered.
func (l *loader) convert(fields [][]byte) string {
	if len(fields) != len(l.fields) {
		return fmt.Sprintf("the row has %d fields, the column list %d (column separator %s)", len(fields), len(l.fields), l.o.sepText())
	}
	for i, text := range fields {
		if bytes.Equal(text, nullText) {
			l.row[i] = schema.Null
			continue
		}
		v, err := l.convs[i](text)
		if err != nil {
			if l.o.strict() || l.fields[i].Column == nil {
				return fmt.Sprintf("field %s: %s", l.fields[i].Name, err.Error())
			}
			v = schema.Null
		}
		l.row[i] = v
	}
	return l.targetValues()
}

// add appends the row of l.vals to the batch (unless the load is known to
// fail), handing the batch over once full; n is the row's input bytes.
func (l *loader) add(n int) error {
	if l.lw == nil {
		return nil
	}
	for i, v := range l.vals {
		l.appends[i](v)
	}
	l.batchRows++
	l.batchBytes += n
	if l.batchRows >= l.o.BatchRows || l.batchBytes >= l.o.BatchBytes {
		return l.flush()
	}
	return nil
}

// targetValues computes l.vals, the values of the written columns, from
// the field values of l.row, or says why the row is filtered.
func (l *loader) targetValues() string {
	for i := range l.targets {
		tg := &l.targets[i]
		var v schema.Value
		if tg.Field >= 0 {
			v = l.row[tg.Field]
		} else {
			var err error
			if v, err = tg.Eval(l.row); err != nil {
				return fmt.Sprintf("%s: %s", tg.Expr, err.Error())
			}
		}
		if c := tg.Column; c != nil {
			if v.IsNull() && !c.Nullable {
				return fmt.Sprintf("column %s is NOT NULL, the row gives NULL", c.Name)
			}
			if n := c.Type.Length; n > 0 && (c.Type.Kind == schema.Varchar || c.Type.Kind == schema.Char) && len(v.Bytes) > n {
				return fmt.Sprintf("value of column %s is %d bytes, longer than %s", c.Name, len(v.Bytes), c.Type)
			}
		}
		l.vals[i] = v
	}
	return ""
}

// sepText names the column separator in messages.
func (o *Options) sepText() string {
	if o.ColumnSeparator == "" {
		return `\t`
	}
	return o.ColumnSeparator
}

// flush hands the converted rows to the writer goroutine.
func (l *loader) flush() error {
	if p := l.failed.Load(); p != nil {
		return *p
	}
	if l.batchRows == 0 {
		return nil
	}
	rec := l.b.NewRecordBatch()
	l.batchRows, l.batchBytes = 0, 0
	return l.send(rec)
}
