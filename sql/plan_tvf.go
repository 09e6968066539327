package sql

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/rowttl/rowttl"
	"github.com/rowttl/rowttl/exec"
	"github.com/rowttl/rowttl/fileformat"
	"github.com/rowttl/rowttl/schema"
	"github.com/rowttl/rowttl/sql/parser"
)

// The table-valued function local(), as Doris spells it:
//
//	SELECT ... FROM local("file_path" = "x.parquet", "format" = "parquet")
//
// reads a Parquet or CSV file as a relation, planned as a source operator
// streaming the file's batches (so INSERT INTO t SELECT ... FROM local(...)
// loads a file through SQL). Doris reads the file on one BE, relative to
// its user_files_secure_path; here the session's policy says where files
// may be read (Session.RestrictLocalFiles).

// localProps are the properties local() takes: Doris's, those about
// backends accepted and meaningless on one node.
var localProps = map[string]bool{
	"file_path": true, "format": true, "column_separator": true, "line_delimiter": true,
	"backend_id": true, "shared_storage": true,
}

// RestrictLocalFiles limits what local() reads to the files under dir:
// file_path is relative to it, as Doris's is to user_files_secure_path,
// and may not leave it. With dir empty local() is refused. A session that
// never calls it reads any file its process may (the shell: paths relative
// to the working directory).
func (s *Session) RestrictLocalFiles(dir string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.localRestricted, s.localRoot = true, dir
}

// localPath resolves a file_path under the session's policy (s.mu held).
func (s *Session) localPath(path string) (string, error) {
	if path == "" {
		return "", invalidf("local(): \"file_path\" is empty")
	}
	if !s.localRestricted {
		return path, nil
	}
	if s.localRoot == "" {
		return "", unsupportedf("local() is not allowed on this server (rowttl serve --local-files DIR allows those under DIR)")
	}
	for _, part := range strings.FieldsFunc(path, func(r rune) bool { return r == '/' || r == filepath.Separator }) {
		if part == ".." {
			return "", unsupportedf("local(): file_path '%s' may not contain '..'", path)
		}
	}
	root, err := filepath.Abs(s.localRoot)
	if err != nil {
		return "", err
	}
	if real, err := filepath.EvalSymlinks(root); err == nil {
		root = real
	}
	full := path
	if !filepath.IsAbs(full) {
		full = filepath.Join(root, full)
	}
	real, err := filepath.EvalSymlinks(full)
	if err != nil {
		real = filepath.Clean(full) // a missing file is reported when opened
	}
	if rel, err := filepath.Rel(root, real); err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return "", unsupportedf("local(): file_path '%s' is outside the directory local() may read (%s)", path, root)
	}
	return full, nil
}

// localPlan is a planned local(): the file, its format and its columns.
type localPlan struct {
	// name is file_path as written (messages and EXPLAIN), path the file
	// it names.
	name, path, format string
	sep, delim         string
	cols               exec.Schema
	// types are the file's columns' types where the batches must be
	// converted (a Parquet type read as another rowttl type), else nil.
	convert []bool
	rows    int64
}

// planTableFunc plans a table function of FROM.
func (p *relPlanner) planTableFunc(f *parser.TableFunc) (*localPlan, error) {
	if f.Name != "local" {
		return nil, unsupportedf("unknown table function %s(): only local() is supported", f.Name)
	}
	for _, pr := range f.Props {
		if !localProps[strings.ToLower(pr.Key)] {
			return nil, unsupportedf("local(): unknown property \"%s\"", pr.Key)
		}
	}
	path, ok := f.Props.Get("file_path")
	if !ok {
		return nil, invalidf("local(): the property \"file_path\" is required")
	}
	format, ok := f.Props.Get("format")
	if !ok {
		return nil, invalidf("local(): the property \"format\" is required")
	}
	lp := &localPlan{name: path, format: strings.ToLower(format), sep: "\t", delim: "\n"}
	for _, sp := range []struct {
		key string
		dst *string
	}{{"column_separator", &lp.sep}, {"line_delimiter", &lp.delim}} {
		if v, ok := f.Props.Get(sp.key); ok {
			b, err := unescapeSeparator(v)
			if err != nil {
				return nil, rowttl.Errorf(rowttl.ErrInvalidArgument, "local(): %s: %w", sp.key, err)
			}
			*sp.dst = string(b)
		}
	}
	var err error
	lp.path, err = p.s.localPath(path) // s.mu is held while a statement runs
	if err != nil {
		return nil, err
	}
	switch lp.format {
	case "parquet":
		err = lp.planParquet()
	case "csv", "csv_with_names":
		err = lp.planCSV()
	default:
		return nil, unsupportedf("local(): format '%s' is not supported: parquet, csv or csv_with_names", format)
	}
	if err != nil {
		return nil, err
	}
	return lp, nil
}

// openLocal opens the file of a local().
func openLocal(path, name string) (*os.File, int64, error) {
	f, err := os.Open(path)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, 0, notFoundf("local(): file_path '%s': no such file", name)
		}
		return nil, 0, rowttl.Errorf(rowttl.ErrInvalidArgument, "local(): %w", err)
	}
	st, err := f.Stat()
	if err == nil && !st.Mode().IsRegular() {
		err = invalidf("local(): file_path '%s' is not a regular file", name)
	}
	if err != nil {
		f.Close()
		return nil, 0, err
	}
	return f, st.Size(), nil
}

func (lp *localPlan) planParquet() error {
	f, size, err := openLocal(lp.path, lp.name)
	if err != nil {
		return err
	}
	defer f.Close()
	pr, err := fileformat.OpenParquet(lp.name, f, size, memory.DefaultAllocator)
	if err != nil {
		return err
	}
	defer pr.Close()
	lp.rows = pr.NumRows()
	for _, fl := range pr.Schema().Fields() {
		t, err := fileformat.FileType(fl)
		if err != nil {
			return err
		}
		lp.cols = append(lp.cols, exec.Column{Name: fl.Name, Type: t, Nullable: true})
		lp.convert = append(lp.convert, !arrow.TypeEqual(fl.Type, t.Arrow()))
	}
	return nil
}

// planCSV reads the first line: its fields name the columns (c1, c2, ...
// as Doris names them, or the line itself with csv_with_names), all
// STRING.
func (lp *localPlan) planCSV() error {
	f, _, err := openLocal(lp.path, lp.name)
	if err != nil {
		return err
	}
	defer f.Close()
	sc := newLineScanner(f, lp.delim)
	var first []string
	if sc.Scan() {
		first = strings.Split(sc.Text(), lp.sep)
	}
	if err := sc.Err(); err != nil {
		return rowttl.Errorf(rowttl.ErrInvalidArgument, "local(): %s: %w", lp.name, err)
	}
	if first == nil {
		return invalidf("local(): %s is empty: a CSV file's first line gives its columns", lp.name)
	}
	for i, name := range first {
		if lp.format == "csv" {
			name = fmt.Sprintf("c%d", i+1)
		}
		lp.cols = append(lp.cols, exec.Column{Name: name, Type: stringType, Nullable: true})
	}
	lp.rows = 1000 // unknown until read
	return nil
}

func newLineScanner(r io.Reader, delim string) *bufio.Scanner {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 64<<20)
	d := []byte(delim)
	sc.Split(func(data []byte, atEOF bool) (int, []byte, error) {
		if i := bytes.Index(data, d); i >= 0 {
			return i + len(d), data[:i], nil
		}
		if atEOF && len(data) > 0 {
			return len(data), data, nil
		}
		return 0, nil, nil
	})
	return sc
}

func (lp *localPlan) outCols() exec.Schema { return lp.cols }

func (lp *localPlan) estRows() int64 { return lp.rows }

func (lp *localPlan) explainTree(add explainFunc, d int) {
	add(d, "Local: %s (%s)", lp.name, lp.format)
}

func (lp *localPlan) build(env *exec.Env) (exec.Operator, error) {
	f, size, err := openLocal(lp.path, lp.name)
	if err != nil {
		return nil, err
	}
	op := &localOp{lp: lp, mem: env.Mem, f: f, sc: lp.cols.Arrow()}
	if lp.format == "parquet" {
		op.pr, err = fileformat.OpenParquet(lp.name, f, size, env.Mem)
		if err != nil {
			f.Close()
			return nil, err
		}
		op.pr.SetBatchRows(localParquetBatchRows)
	} else {
		op.lines = newLineScanner(f, lp.delim)
		op.line = 0
		if lp.format == "csv_with_names" {
			op.lines.Scan()
			op.line = 1
		}
	}
	return op, nil
}

// localOp streams a file's batches: a Parquet file's as it reads them
// (converted where its types are not rowttl's own), a CSV file's
// localBatchRows lines at a time.
type localOp struct {
	lp  *localPlan
	mem memory.Allocator
	f   *os.File
	sc  *arrow.Schema

	pr    *fileformat.ParquetReader
	rr    array.RecordReader
	lines *bufio.Scanner
	line  int
	done  bool
}

const localBatchRows = 64 << 10

// localParquetBatchRows is the rows of each batch local() reads from a
// Parquet file (tests lower it to count batches in memory).
var localParquetBatchRows = fileformat.DefaultBatchRows

// localReadAhead is how many Parquet batches a local() decodes ahead of
// its consumer.
const localReadAhead = 2

func (o *localOp) Schema() exec.Schema { return o.lp.cols }

func (o *localOp) Next(ctx context.Context) (arrow.RecordBatch, error) {
	if o.done {
		return nil, nil
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	b, err := o.next(ctx)
	if b == nil || err != nil {
		o.Close()
	}
	return b, err
}

func (o *localOp) next(ctx context.Context) (arrow.RecordBatch, error) {
	if o.pr != nil {
		if o.rr == nil {
			rr, err := o.pr.Records(ctx, nil)
			if err != nil {
				return nil, err
			}
			// The file decodes while the consumer (an INSERT's table
			// writer, most often) works on the batch before.
			o.rr = fileformat.ReadAhead(rr, localReadAhead)
		}
		for o.rr.Next() {
			b := o.rr.RecordBatch()
			if b.NumRows() == 0 {
				continue
			}
			return o.parquetBatch(b)
		}
		return nil, o.rr.Err()
	}
	return o.csvBatch(ctx)
}

// parquetBatch is a file's batch with the operator's schema: its arrays
// as they are where their type is the column's, converted value by value
// where not.
func (o *localOp) parquetBatch(b arrow.RecordBatch) (arrow.RecordBatch, error) {
	n := int(b.NumRows())
	cols := make([]arrow.Array, len(o.lp.cols))
	release := func() {
		for _, c := range cols {
			if c != nil {
				c.Release()
			}
		}
	}
	for j, c := range o.lp.cols {
		arr := b.Column(j)
		if !o.lp.convert[j] {
			arr.Retain()
			cols[j] = arr
			continue
		}
		conv, err := fileformat.NewConversion(b.Schema().Field(j), c.Type, nil)
		if err != nil {
			release()
			return nil, err
		}
		val := conv.Bind(arr)
		bld := array.NewBuilder(o.mem, c.Type.Arrow())
		bld.Reserve(n)
		for i := 0; i < n; i++ {
			v, err := val(i)
			if err != nil {
				bld.Release()
				release()
				return nil, rowttl.Errorf(rowttl.ErrInvalidArgument, "local(): %s: column %s, row %d: %w", o.lp.name, c.Name, i+1, err)
			}
			schema.AppendValue(bld, v)
		}
		cols[j] = bld.NewArray()
		bld.Release()
	}
	out := array.NewRecordBatch(o.sc, cols, int64(n))
	release()
	return out, nil
}

// csvBatch reads the next lines of a CSV file: fields split at the
// separator, \N as NULL (Stream Load's CSV).
func (o *localOp) csvBatch(ctx context.Context) (arrow.RecordBatch, error) {
	nc := len(o.lp.cols)
	blds := make([]*array.StringBuilder, nc)
	for j := range blds {
		blds[j] = array.NewStringBuilder(o.mem)
	}
	defer func() {
		for _, b := range blds {
			b.Release()
		}
	}()
	sep := []byte(o.lp.sep)
	rows := 0
	for rows < localBatchRows && o.lines.Scan() {
		o.line++
		line := o.lines.Bytes()
		fields := bytes.Split(line, sep)
		if len(fields) != nc {
			return nil, invalidf("local(): %s: line %d has %d fields where the first line has %d", o.lp.name, o.line, len(fields), nc)
		}
		for j, f := range fields {
			if string(f) == `\N` {
				blds[j].AppendNull()
			} else {
				blds[j].BinaryBuilder.Append(f)
			}
		}
		rows++
		if rows%4096 == 0 {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
		}
	}
	if err := o.lines.Err(); err != nil {
		return nil, rowttl.Errorf(rowttl.ErrInvalidArgument, "local(): %s: %w", o.lp.name, err)
	}
	if rows == 0 {
		return nil, nil
	}
	cols := make([]arrow.Array, nc)
	for j, b := range blds {
		cols[j] = b.NewArray()
	}
	out := array.NewRecordBatch(o.sc, cols, int64(rows))
	for _, c := range cols {
		c.Release()
	}
	return out, nil
}

func (o *localOp) Close() {
	o.done = true
	if o.rr != nil {
		o.rr.Release()
		o.rr = nil
	}
	if o.pr != nil {
		_ = o.pr.Close()
		o.pr = nil
	}
	if o.f != nil {
		_ = o.f.Close()
		o.f = nil
	}
}

// tableFuncNode makes n the leaf of a table function: a derived table
// whose plan is the function's source.
func (p *relPlanner) tableFuncNode(n *relNode, ref *parser.TableRef) (*relNode, error) {
	lp, err := p.planTableFunc(ref.Func)
	if err != nil {
		return nil, err
	}
	alias := ref.Alias
	if alias == "" {
		alias = ref.Func.Name
	}
	n.sub, n.alias, n.est = lp, alias, lp.estRows()
	for _, c := range lp.outCols() {
		n.full = append(n.full, column{name: c.Name, typ: c.Type, quals: []string{alias}})
	}
	return n, nil
}
