package mysql

import (
	"context"
	"errors"
	"strings"

	"github.com/rowttl/rowttl"
	"github.com/rowttl/rowttl/sql/parser"
	"vitess.io/vitess/go/mysql/sqlerror"
)

// sqlError is err as an ERR packet: the MySQL code and SQLSTATE closest to
// its kind (Doris's 1105 where none is closer) and the engine's message as
// it is.
func sqlError(err error) *sqlerror.SQLError {
	var se *sqlerror.SQLError
	if errors.As(err, &se) {
		return se
	}
	code, state := errorCode(err)
	msg := strings.ReplaceAll(err.Error(), "\n", " ")
	return sqlerror.NewSQLError(code, state, msg)
}

func errorCode(err error) (sqlerror.ErrorCode, string) {
	msg := err.Error()
	var pe *parser.ParseError
	switch {
	case errors.As(err, &pe):
		return sqlerror.ERParseError, sqlerror.SSClientError
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		return sqlerror.ERQueryInterrupted, sqlerror.SSQueryInterrupted
	case errors.Is(err, rowttl.ErrNotFound):
		switch {
		case strings.Contains(msg, "Unknown database"):
			return sqlerror.ERBadDb, sqlerror.SSClientError
		case strings.Contains(msg, "Unknown table"), strings.Contains(msg, "does not exist"):
			return sqlerror.ERNoSuchTable, sqlerror.SSUnknownTable
		case strings.Contains(strings.ToLower(msg), "unknown column"):
			return sqlerror.ERBadFieldError, sqlerror.SSBadFieldError
		}
	case errors.Is(err, rowttl.ErrExists):
		if strings.Contains(strings.ToLower(msg), "database") {
			return sqlerror.ERDbCreateExists, sqlerror.SSUnknownSQLState
		}
		return sqlerror.ERTableExists, sqlerror.SSUnknownTable
	case errors.Is(err, rowttl.ErrInvalidArgument) && strings.HasPrefix(msg, "Unknown system variable"):
		return sqlerror.ERUnknownSystemVariable, sqlerror.SSUnknownSQLState
	case errors.Is(err, rowttl.ErrNotSupported):
		return sqlerror.ERNotSupportedYet, sqlerror.SSClientError
	}
	return sqlerror.ERUnknownError, sqlerror.SSUnknownSQLState
}
