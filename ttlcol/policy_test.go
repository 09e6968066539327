package ttlcol

import (
	"encoding/json"
	"errors"
	"math"
	"math/big"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/rowttl/rowttl"
)

func TestThreshold(t *testing.T) {
	src := func(r int64) Policy { return Policy{Mode: SourceMode, SourceColumn: "ts", Retention: r} }
	tests := []struct {
		name string
		p    Policy
		now  int64
		want int64
	}{
		{"direct", Policy{Mode: DirectMode}, 1234, 1234},
		{"direct ignores retention", Policy{Mode: DirectMode, Retention: 99}, 1234, 1234},
		{"source", src(86400), 100 * microsPerDay, 99 * microsPerDay},
		{"source zero retention", src(0), 42, 42},
		{"source before the epoch", src(1), 0, -microsPerSecond},
		{"saturates", src(1), math.MinInt64 + 5, math.MinInt64},
		{"saturates exactly at the edge", src(1), math.MinInt64 + microsPerSecond, math.MinInt64},
		{"max retention", src(MaxRetentionSeconds), 0, -MaxRetentionSeconds * microsPerSecond},
		{"max retention saturates", src(MaxRetentionSeconds), -1e13, math.MinInt64},
		{"overlong retention saturates", src(math.MaxInt64), 0, -math.MaxInt64},
		{"negative retention saturates up", src(-MaxRetentionSeconds), math.MaxInt64 - 1, math.MaxInt64},
		{"no ttl", Policy{}, 1234, math.MinInt64},
	}
	for _, tt := range tests {
		if got := tt.p.Threshold(tt.now); got != tt.want {
			t.Errorf("%s: Threshold(%d) = %d; want %d", tt.name, tt.now, got, tt.want)
		}
	}
}

func TestExpirationAndCheckStored(t *testing.T) {
	p := Policy{Mode: SourceMode, SourceColumn: "ts", Retention: 1}
	if exp, ok := p.Expiration(5); !ok || exp != 5+microsPerSecond {
		t.Errorf("Expiration(5) = %d, %t", exp, ok)
	}
	edge := int64(math.MaxInt64 - microsPerSecond)
	if exp, ok := p.Expiration(edge); !ok || exp != math.MaxInt64 {
		t.Errorf("Expiration(edge) = %d, %t", exp, ok)
	}
	if err := p.CheckStored(edge); err != nil {
		t.Errorf("CheckStored(edge) = %v", err)
	}
	if _, ok := p.Expiration(edge + 1); ok {
		t.Errorf("Expiration(edge+1) did not report the overflow")
	}
	err := p.CheckStored(edge + 1)
	if err == nil || !errors.Is(err, rowttl.ErrInvalidArgument) {
		t.Fatalf("CheckStored(edge+1) = %v; want ErrInvalidArgument", err)
	}
	if !strings.Contains(err.Error(), "9223372036853775808") {
		t.Errorf("CheckStored error %q does not name the value", err)
	}
	if err := p.CheckStored(math.MinInt64); err != nil {
		t.Errorf("CheckStored(MinInt64) = %v", err)
	}

	d := Policy{Mode: DirectMode}
	for _, v := range []int64{math.MinInt64, -1, 0, math.MaxInt64} {
		if exp, ok := d.Expiration(v); !ok || exp != v {
			t.Errorf("direct Expiration(%d) = %d, %t", v, exp, ok)
		}
		if err := d.CheckStored(v); err != nil {
			t.Errorf("direct CheckStored(%d) = %v", v, err)
		}
	}
	bad := Policy{Mode: SourceMode, SourceColumn: "ts", Retention: MaxRetentionSeconds + 1}
	if err := bad.CheckStored(0); !errors.Is(err, rowttl.ErrInvalidArgument) {
		t.Errorf("CheckStored with an overlong retention = %v", err)
	}
}

// TestThresholdAgreesWithExpiration checks that comparing a stored value with
// the threshold decides exactly as comparing its expiration with now, over
// the int64 edges, wherever the expiration exists.
func TestThresholdAgreesWithExpiration(t *testing.T) {
	const seed = 7
	r := rand.New(rand.NewPCG(seed, 2))
	for i := 0; i < 50000; i++ {
		var p Policy
		if r.IntN(4) == 0 {
			p = Policy{Mode: DirectMode}
		} else {
			ret := r.Int64N(MaxRetentionSeconds + 1)
			if r.IntN(2) == 0 {
				ret = r.Int64N(1000)
			}
			p = Policy{Mode: SourceMode, SourceColumn: "ts", Retention: ret}
		}
		ttl, now := randInstant(r), randInstant(r)
		if r.IntN(3) == 0 { // aim at the boundary
			if exp, ok := p.Expiration(ttl); ok {
				now = exp + r.Int64N(3) - 1
			}
		}
		exp, ok := p.Expiration(ttl)
		if !ok {
			continue // rejected at write time, never stored
		}
		// Exact truth in big arithmetic.
		eff := big.NewInt(0)
		if p.Mode == SourceMode {
			eff.Mul(big.NewInt(p.Retention), big.NewInt(microsPerSecond))
		}
		sum := new(big.Int).Add(big.NewInt(ttl), eff)
		truth := sum.Cmp(big.NewInt(now)) <= 0
		if (exp <= now) != truth {
			t.Fatalf("seed %d: Expiration disagrees with big arithmetic: %+v ttl %d now %d", seed, p, ttl, now)
		}
		th := p.Threshold(now)
		if (ttl <= th) != truth && !(ttl == math.MinInt64 && th == math.MinInt64) {
			t.Fatalf("seed %d: %+v ttl %d now %d: threshold %d says %t, truth %t", seed, p, ttl, now, th, ttl <= th, truth)
		}
	}
}

func TestPolicyJSON(t *testing.T) {
	for _, p := range []Policy{
		{},
		{Mode: DirectMode},
		{Mode: SourceMode, SourceColumn: "event_time", Retention: 86400, ZoneOffset: 8 * 3600},
		{Mode: SourceMode, SourceColumn: "ts", Retention: 0},
	} {
		b, err := json.Marshal(p)
		if err != nil {
			t.Fatal(err)
		}
		var q Policy
		if err := json.Unmarshal(b, &q); err != nil || q != p {
			t.Errorf("JSON round trip of %+v via %s gave %+v, %v", p, b, q, err)
		}
	}
	b, _ := json.Marshal(Policy{Mode: SourceMode, SourceColumn: "event_time", Retention: 86400, ZoneOffset: 28800})
	if want := `{"mode":1,"source_column":"event_time","retention":86400,"zone_offset":28800}`; string(b) != want {
		t.Errorf("JSON = %s; want %s", b, want)
	}
}

func TestPolicyValidate(t *testing.T) {
	good := []Policy{
		{},
		{Mode: DirectMode},
		{Mode: SourceMode, SourceColumn: "ts"},
		{Mode: SourceMode, SourceColumn: "ts", Retention: MaxRetentionSeconds, ZoneOffset: MinZoneOffset},
	}
	for _, p := range good {
		if err := p.Validate(); err != nil {
			t.Errorf("Validate(%+v) = %v", p, err)
		}
	}
	bad := []Policy{
		{Mode: 3},
		{Mode: DirectMode, Retention: 1},
		{Mode: DirectMode, ZoneOffset: 3600},
		{Mode: NoTTL, SourceColumn: "ts"},
		{Mode: SourceMode},
		{Mode: SourceMode, SourceColumn: "ts", Retention: -1},
		{Mode: SourceMode, SourceColumn: "ts", Retention: MaxRetentionSeconds + 1},
		{Mode: SourceMode, SourceColumn: "ts", ZoneOffset: MaxZoneOffset + 60},
		{Mode: SourceMode, SourceColumn: "ts", ZoneOffset: 1},
	}
	for _, p := range bad {
		if err := p.Validate(); !errors.Is(err, rowttl.ErrInvalidProperty) {
			t.Errorf("Validate(%+v) = %v; want ErrInvalidProperty", p, err)
		}
	}
}

func TestModeString(t *testing.T) {
	for m, want := range map[Mode]string{NoTTL: "none", SourceMode: "source", DirectMode: "direct", 9: "Mode(9)"} {
		if got := m.String(); got != want {
			t.Errorf("Mode(%d).String() = %q; want %q", m, got, want)
		}
	}
}

// TestPersistedModes pins the numbers manifests store for Mode: a change
// here makes every existing table read as another mode.
func TestPersistedModes(t *testing.T) {
	for m, want := range map[Mode]uint8{NoTTL: 0, SourceMode: 1, DirectMode: 2} {
		if uint8(m) != want {
			t.Errorf("mode %d is stored as %d: never renumber", want, m)
		}
	}
}

func TestPolicyHasRowTTL(t *testing.T) {
	for _, tc := range []struct {
		p    Policy
		want bool
	}{
		{Policy{}, false},
		{Policy{Mode: DirectMode}, true},
		{Policy{Mode: SourceMode, SourceColumn: "ts", Retention: 60}, true},
	} {
		if got := tc.p.HasRowTTL(); got != tc.want {
			t.Errorf("%+v: HasRowTTL %v, want %v", tc.p, got, tc.want)
		}
	}
}
