package ttlcol_test

import (
	"errors"
	"fmt"

	"github.com/rowttl/rowttl"
	"github.com/rowttl/rowttl/ttlcol"
)

func ExampleParseRetention() {
	for _, s := range []string{"86400", "1 day", "24h", "2 weeks", "1.5 days", "-1 day"} {
		secs, err := ttlcol.ParseRetention(s)
		if err != nil {
			fmt.Printf("%q: %v (invalid property: %t)\n", s, err, errors.Is(err, rowttl.ErrInvalidProperty))
			continue
		}
		fmt.Printf("%q: %d\n", s, secs)
	}
	// Output:
	// "86400": 86400
	// "1 day": 86400
	// "24h": 86400
	// "2 weeks": 1209600
	// "1.5 days": invalid or overflowing row ttl duration: 1.5 days (invalid property: true)
	// "-1 day": row ttl duration must not be negative (invalid property: true)
}

func ExamplePolicy_Threshold() {
	p := ttlcol.Policy{Mode: ttlcol.SourceMode, SourceColumn: "event_time", Retention: 3600}
	now := int64(10_000_000_000) // µs since the epoch
	th := p.Threshold(now)
	ttl := []int64{now - 3600_000_000, now - 3599_999_999, 0}
	validity := []byte{0b011} // the third row is NULL
	out := make([]byte, 1)
	live := ttlcol.LiveMask(ttl, validity, 0, th, out)
	fmt.Printf("threshold %d, live %d, mask %03b\n", th, live, out[0])
	// Output:
	// threshold 6400000000, live 2, mask 110
}
