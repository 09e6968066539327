package table

import (
	"errors"
	"testing"

	"github.com/rowttl/rowttl"
)

func TestRecordFraming(t *testing.T) {
	var data []byte
	for _, p := range []string{"a", "", "hello world"} {
		data = appendRecord(data, []byte(p))
	}
	ps, valid, err := readRecords("m", data)
	if err != nil || valid != len(data) || len(ps) != 3 || string(ps[2]) != "hello world" {
		t.Fatalf("ps=%q valid=%d err=%v", ps, valid, err)
	}
	// Every cut is a torn tail: the prefix of whole records survives.
	for cut := 0; cut < len(data); cut++ {
		ps, valid, err := readRecords("m", data[:cut])
		if err != nil {
			t.Fatalf("cut %d: %v", cut, err)
		}
		if valid > cut || len(ps) > 3 {
			t.Fatalf("cut %d: valid %d", cut, valid)
		}
	}
}

// FuzzManifest feeds arbitrary bytes to manifest replay: it must never
// panic, and anything it rejects must be marked as corruption.
func FuzzManifest(f *testing.F) {
	f.Add(appendRecord(nil, []byte(`{"format":1}`)))
	f.Add(appendRecord(appendRecord(nil, []byte(`{"format":1,"def":{"schema":{"columns":[{"id":1,"name":"a","type":{"kind":5},"nullable":false}],"key_count":1},"model":0}}`)), []byte(`{"last_version":1}`)))
	f.Add([]byte{})
	f.Add(make([]byte, 30))
	f.Fuzz(func(t *testing.T, data []byte) {
		_, valid, err := readRecords("fuzz", data)
		if err != nil {
			if !errors.Is(err, rowttl.ErrCorruption) {
				t.Fatalf("unmarked error %v", err)
			}
			return
		}
		if valid > len(data) {
			t.Fatalf("valid %d beyond %d", valid, len(data))
		}
	})
}
