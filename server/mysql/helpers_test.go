package mysql

import (
	"io"
	"log"

	gomysql "github.com/go-sql-driver/mysql"
)

// The driver logs every connection the tests break on purpose.
func init() { _ = gomysql.SetLogger(log.New(io.Discard, "", 0)) }

func newLogger(w io.Writer) *log.Logger { return log.New(w, "", 0) }
