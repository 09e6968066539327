package load

import (
	"errors"
	"net/http"
	"testing"

	"github.com/rowttl/rowttl"
)

// TestMaxFilterRatioHeader: the header takes a number from 0 to 1 and
// refuses anything else, non-finite values included (NaN compares false
// with every bound and would switch the filter check off).
func TestMaxFilterRatioHeader(t *testing.T) {
	for _, c := range []struct {
		in   string
		want float64
		ok   bool
	}{
		{"0", 0, true}, {"0.25", 0.25, true}, {"1", 1, true}, {" 0.5 ", 0.5, true}, {"-0", 0, true},
		{"NaN", 0, false}, {"nan", 0, false}, {"Inf", 0, false}, {"+Inf", 0, false}, {"-Inf", 0, false},
		{"infinity", 0, false}, {"1.0000001", 0, false}, {"-0.1", 0, false}, {"1e309", 0, false}, {"x", 0, false},
	} {
		h := http.Header{}
		h.Set(HeaderMaxFilterRatio, c.in)
		o, err := OptionsFromHeader(h)
		switch {
		case c.ok && (err != nil || o.MaxFilterRatio != c.want):
			t.Errorf("%q: %v, %v; want %v", c.in, o.MaxFilterRatio, err, c.want)
		case !c.ok && !errors.Is(err, rowttl.ErrInvalidArgument):
			t.Errorf("%q: accepted as %v (err %v)", c.in, o.MaxFilterRatio, err)
		}
	}
}
