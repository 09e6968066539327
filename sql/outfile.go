package sql

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/rowttl/rowttl/fileformat"
	"github.com/rowttl/rowttl/schema"
	"github.com/rowttl/rowttl/sql/parser"
	"github.com/rowttl/rowttl/vfs"
)

// This file is Doris's SELECT ... INTO OUTFILE: the rows of a query
// written to local Parquet or CSV files by package fileformat.

// outfileColumns are the columns of the answer of INTO OUTFILE, as Doris
// names them.
var outfileColumns = []string{"FileNumber", "TotalRows", "FileSize", "URL"}

// Outfile properties rowttl reads; the others (broker and S3 settings)
// are refused, since ignoring them would write somewhere else.
const (
	propColumnSeparator = "column_separator"
	propLineDelimiter   = "line_delimiter"
	propMaxFileSize     = "max_file_size"
	propSuccessFileName = "success_file_name"
	propCompression     = "compression"
)

// Doris's bounds on max_file_size.
const (
	minOutfileSize     = 5 << 20
	maxOutfileSize     = 2 << 30
	defaultOutfileSize = 1 << 30
)

// outfileSpec is a checked INTO OUTFILE clause.
type outfileSpec struct {
	dir, prefix string
	format      fileformat.Format
	ext         string
	opts        fileformat.WriterOptions
	maxSize     int64
	success     string
}

func parseOutfile(st *parser.SelectInto) (*outfileSpec, error) {
	o := &outfileSpec{maxSize: defaultOutfileSize}
	const scheme = "file://"
	if !strings.HasPrefix(st.Path, scheme) {
		return nil, unsupportedf("OUTFILE %q: only local paths (file:///dir/prefix) are supported", st.Path)
	}
	path := strings.TrimPrefix(st.Path, scheme)
	if !filepath.IsAbs(path) {
		return nil, invalidf("OUTFILE %q: the path must be absolute (file:///dir/prefix)", st.Path)
	}
	o.dir, o.prefix = filepath.Dir(path), filepath.Base(path)
	if strings.HasSuffix(path, "/") {
		o.dir, o.prefix = filepath.Clean(path), ""
	}
	if fi, err := os.Stat(o.dir); err != nil || !fi.IsDir() {
		return nil, invalidf("OUTFILE %q: the directory %s does not exist", st.Path, o.dir)
	}
	switch st.Format {
	case "PARQUET":
		o.format, o.ext = fileformat.Parquet, ".parquet"
	case "CSV":
		o.format, o.ext = fileformat.CSV, ".csv"
	case "CSV_WITH_NAMES":
		o.format, o.ext = fileformat.CSVWithNames, ".csv"
	default:
		return nil, unsupportedf("OUTFILE format %s: only PARQUET, CSV and CSV_WITH_NAMES are supported", st.Format)
	}
	for _, pr := range st.Properties {
		var err error
		switch strings.ToLower(pr.Key) {
		case propColumnSeparator:
			o.opts.CSV.ColumnSeparator, err = unescapeSeparator(pr.Value)
		case propLineDelimiter:
			o.opts.CSV.LineDelimiter, err = unescapeSeparator(pr.Value)
		case propCompression:
			o.opts.Parquet.Compression = pr.Value
			_, err = fileformat.ParseCompression(pr.Value)
		case propSuccessFileName:
			if pr.Value == "" || strings.ContainsRune(pr.Value, '/') {
				err = invalidf("success_file_name %q must be a file name", pr.Value)
			}
			o.success = pr.Value
		case propMaxFileSize:
			n, perr := parseByteSize(pr.Value)
			if perr != nil || n < minOutfileSize || n > maxOutfileSize {
				err = invalidf("max_file_size %q must be from 5MB to 2GB", pr.Value)
			}
			o.maxSize = n
		default:
			err = unsupportedf("OUTFILE property %q is not supported", pr.Key)
		}
		if err != nil {
			return nil, err
		}
	}
	return o, nil
}

// unescapeSeparator reads \t, \n and \xHH in a separator property.
func unescapeSeparator(s string) ([]byte, error) {
	r := strings.NewReplacer(`\t`, "\t", `\n`, "\n", `\r`, "\r", `\\`, `\`)
	out := r.Replace(s)
	for {
		i := strings.Index(out, `\x`)
		if i < 0 || i+4 > len(out) {
			break
		}
		b, err := hex.DecodeString(out[i+2 : i+4])
		if err != nil {
			return nil, invalidf("bad \\x escape in %q", s)
		}
		out = out[:i] + string(b) + out[i+4:]
	}
	if out == "" {
		return nil, invalidf("a separator must not be empty")
	}
	return []byte(out), nil
}

// parseByteSize reads 1024, 100KB, 5MB or 1GB (powers of 1024).
func parseByteSize(s string) (int64, error) {
	u := strings.ToUpper(strings.TrimSpace(s))
	mult := int64(1)
	for _, suf := range []struct {
		s string
		m int64
	}{{"KB", 1 << 10}, {"MB", 1 << 20}, {"GB", 1 << 30}, {"B", 1}} {
		if strings.HasSuffix(u, suf.s) {
			u, mult = strings.TrimSpace(strings.TrimSuffix(u, suf.s)), suf.m
			break
		}
	}
	n, err := strconv.ParseInt(u, 10, 64)
	if err != nil || n < 0 {
		return 0, fmt.Errorf("bad size %q", s)
	}
	return n * mult, nil
}

// selectInto runs the query and streams its rows into files named as
// Doris names them: prefix, an id of the statement, _N and the format's
// extension. A file is written under a temporary name and renamed when
// complete; a failed statement removes the files it completed.
func (s *Session) selectInto(ctx context.Context, env *stmtEnv, st *parser.SelectInto) (*Result, error) {
	spec, err := parseOutfile(st)
	if err != nil {
		return nil, err
	}
	sel, ok := st.Query.(*parser.Select)
	if !ok {
		return nil, refuseQuery(st.Query)
	}
	rr, err := s.queryLocked(ctx, env, sel)
	if err != nil {
		return nil, err
	}
	defer rr.Release()
	sc := outfileSchema(rr.Schema())
	var id [16]byte
	rand.Read(id[:])
	base := spec.prefix + hex.EncodeToString(id[:8]) + "-" + hex.EncodeToString(id[8:]) + "_"
	var (
		done  []string
		out   *fileformat.AtomicFile
		w     fileformat.Writer
		rows  int64
		bytes int64
	)
	fail := func(err error) (*Result, error) {
		if out != nil {
			out.Abort()
		}
		for _, p := range done {
			os.Remove(p)
		}
		return nil, err
	}
	finish := func() error {
		if err := w.Close(); err != nil {
			return err
		}
		if err := out.Commit(); err != nil {
			return err
		}
		done = append(done, out.Path())
		bytes += out.Size()
		out, w = nil, nil
		return nil
	}
	create := func() error {
		path := filepath.Join(spec.dir, base+strconv.Itoa(len(done))+spec.ext)
		var err error
		if out, err = fileformat.CreateAtomic(vfs.Default, path); err != nil {
			return err
		}
		w, err = fileformat.NewWriter(spec.format, out, sc, spec.opts, s.mem)
		return err
	}
	for rr.Next() {
		if out == nil {
			if err := create(); err != nil {
				return fail(err)
			}
		}
		rec := rr.RecordBatch()
		b := array.NewRecordBatch(sc, rec.Columns(), rec.NumRows())
		err := w.Write(b)
		b.Release()
		if err != nil {
			return fail(err)
		}
		rows += rec.NumRows()
		if out.Size() >= spec.maxSize {
			if err := finish(); err != nil {
				return fail(err)
			}
		}
	}
	if err := rr.Err(); err != nil {
		return fail(err)
	}
	if out == nil && len(done) == 0 {
		// A query without rows still writes its (empty) file.
		if err := create(); err != nil {
			return fail(err)
		}
	}
	if out != nil {
		if err := finish(); err != nil {
			return fail(err)
		}
	}
	if spec.success != "" {
		if err := vfs.WriteFileAtomic(vfs.Default, filepath.Join(spec.dir, spec.success), nil); err != nil {
			return fail(err)
		}
	}
	url := "file://" + filepath.Join(spec.dir, base)
	return &Result{Columns: outfileColumns, Rows: [][]string{{
		strconv.Itoa(len(done)), strconv.FormatInt(rows, 10), strconv.FormatInt(bytes, 10), url,
	}}}, nil
}

// outfileSchema is the file schema of a result: each column's rowttl type
// in the metadata fileformat reads.
func outfileSchema(rs *arrow.Schema) *arrow.Schema {
	fs := make([]arrow.Field, rs.NumFields())
	for i, f := range rs.Fields() {
		fs[i] = arrow.Field{Name: f.Name, Type: f.Type, Nullable: true}
		if t := FieldType(f); t.Kind != schema.Invalid && arrow.TypeEqual(t.Arrow(), f.Type) {
			fs[i].Metadata = arrow.NewMetadata([]string{fileformat.TypeKey}, []string{t.String()})
		}
	}
	return arrow.NewSchema(fs, nil)
}
