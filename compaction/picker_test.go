package compaction

import (
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/cockroachdb/datadriven"
	"github.com/rowttl/rowttl/rowset"
	"github.com/rowttl/rowttl/schema"
	"github.com/rowttl/rowttl/ttlcol"
)

// TestPicker runs the picker goldens of testdata/picker. Times are spans
// since the epoch in time.ParseDuration's form ("30h", "90m").
//
//	define model=dup|mow|mor [retention=24h|direct] [deadline=12h]
//	<one line per rowset, base first:>
//	v=LO[-HI] rows=N bytes=N [ttl=MIN-MAX] [nulls=N] [hist=T:N,T:N] [deleted=N]
//	----
//
//	pick now=T [manual=cumulative|base|full|ttl_drop]
//	----
//	<the plan: kind, trigger, inputs by version range, one reason each>
//
// Stored __TTL__ values are given, not expirations: in source mode a row
// expires retention after its value. hist buckets are an hour wide.
func TestPicker(t *testing.T) {
	datadriven.Walk(t, "testdata/picker", func(t *testing.T, path string) {
		var v View
		datadriven.RunTest(t, path, func(t *testing.T, d *datadriven.TestData) string {
			switch d.Cmd {
			case "define":
				var err error
				v, err = parseView(d)
				if err != nil {
					d.Fatalf(t, "%v", err)
				}
				return fmt.Sprintf("%d rowsets\n", len(v.Rowsets))
			case "pick":
				var now, manual string
				d.ScanArgs(t, "now", &now)
				if d.HasArg("manual") {
					d.ScanArgs(t, "manual", &manual)
				}
				nowUs, err := parseMicros(now)
				if err != nil {
					d.Fatalf(t, "%v", err)
				}
				var p Plan
				var ok bool
				if manual != "" {
					p, ok = PickManual(Kind(manual), v, nowUs)
				} else {
					p, ok = PickAuto(v, nowUs)
				}
				if !ok {
					return "nothing to do\n"
				}
				return formatPlan(v, p)
			}
			d.Fatalf(t, "unknown command %q", d.Cmd)
			return ""
		})
	})
}

func formatPlan(v View, p Plan) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s trigger=%s", p.Kind, p.Trigger)
	switch {
	case p.DropOnly:
		b.WriteString(" drop-only")
	case DropsExpired(v.Model, p.FromBase):
		b.WriteString(" drops-expired")
	default:
		b.WriteString(" keeps-expired")
	}
	if p.FromBase {
		b.WriteString(" from-base")
	}
	b.WriteString("\n")
	if len(p.Reasons) != len(p.Inputs) {
		fmt.Fprintf(&b, "%d reasons for %d inputs\n", len(p.Reasons), len(p.Inputs))
	}
	for i, x := range p.Inputs {
		m := v.Rowsets[x].Meta
		reason := ""
		if i < len(p.Reasons) {
			reason = p.Reasons[i]
		}
		fmt.Fprintf(&b, "  v%d-%d: %s\n", m.Lo, m.Hi, reason)
	}
	return b.String()
}

func parseView(d *datadriven.TestData) (View, error) {
	var v View
	model := "dup"
	for _, a := range d.CmdArgs {
		if len(a.Vals) != 1 {
			return v, fmt.Errorf("%s: want one value", a.Key)
		}
		val := a.Vals[0]
		switch a.Key {
		case "model":
			model = val
		case "retention":
			if val == "direct" {
				v.Policy = ttlcol.Policy{Mode: ttlcol.DirectMode}
				continue
			}
			r, err := time.ParseDuration(val)
			if err != nil {
				return v, err
			}
			v.Policy = ttlcol.Policy{Mode: ttlcol.SourceMode, SourceColumn: "ts", Retention: int64(r / time.Second)}
		case "deadline":
			us, err := parseMicros(val)
			if err != nil {
				return v, err
			}
			v.Deadline = us
		default:
			return v, fmt.Errorf("unknown argument %q", a.Key)
		}
	}
	switch model {
	case "dup":
		v.Model = schema.Duplicate
	case "mow":
		v.Model = schema.UniqueMOW
	case "mor":
		v.Model = schema.UniqueMOR
	default:
		return v, fmt.Errorf("unknown model %q", model)
	}
	for _, line := range strings.Split(d.Input, "\n") {
		if strings.TrimSpace(line) == "" {
			continue
		}
		r, err := parseRowset(line)
		if err != nil {
			return v, fmt.Errorf("%q: %w", line, err)
		}
		r.Meta.ID = uint64(len(v.Rowsets) + 1)
		v.Rowsets = append(v.Rowsets, r)
	}
	return v, nil
}

func parseRowset(line string) (Rowset, error) {
	m := &rowset.Meta{}
	r := Rowset{Meta: m}
	for _, f := range strings.Fields(line) {
		key, val, ok := strings.Cut(f, "=")
		if !ok {
			return r, fmt.Errorf("%q is not key=value", f)
		}
		var err error
		switch key {
		case "v":
			lo, hi, found := strings.Cut(val, "-")
			if !found {
				hi = lo
			}
			if m.Lo, err = strconv.ParseInt(lo, 10, 64); err == nil {
				m.Hi, err = strconv.ParseInt(hi, 10, 64)
			}
		case "rows":
			m.Rows, err = strconv.ParseInt(val, 10, 64)
		case "bytes":
			m.Bytes, err = parseBytes(val)
		case "nulls":
			m.TTL.Nulls, err = strconv.ParseInt(val, 10, 64)
		case "deleted":
			r.Deleted, err = strconv.ParseInt(val, 10, 64)
		case "ttl":
			lo, hi, _ := strings.Cut(val, "-")
			m.TTL.HasMinMax = true
			if m.TTL.Min, err = parseMicros(lo); err == nil {
				m.TTL.Max, err = parseMicros(hi)
			}
		case "hist":
			m.Hist = ttlcol.NewHistogram(3600e6)
			for _, e := range strings.Split(val, ",") {
				at, n, _ := strings.Cut(e, ":")
				var us, cnt int64
				if us, err = parseMicros(at); err != nil {
					break
				}
				if cnt, err = strconv.ParseInt(n, 10, 64); err != nil {
					break
				}
				for range cnt {
					m.Hist.Add(us)
				}
			}
		default:
			err = fmt.Errorf("unknown field %q", key)
		}
		if err != nil {
			return r, err
		}
	}
	return r, nil
}

func parseMicros(s string) (int64, error) {
	d, err := time.ParseDuration(s)
	return d.Microseconds(), err
}

// parseBytes reads N, NK or NM.
func parseBytes(s string) (int64, error) {
	mul := int64(1)
	switch {
	case strings.HasSuffix(s, "K"):
		mul, s = 1<<10, strings.TrimSuffix(s, "K")
	case strings.HasSuffix(s, "M"):
		mul, s = 1<<20, strings.TrimSuffix(s, "M")
	}
	n, err := strconv.ParseInt(s, 10, 64)
	return n * mul, err
}

// FuzzPick draws views from the fuzzer's bytes and checks what every plan
// must satisfy whatever the rule that made it: inputs ascending, one reason
// each, contiguous but for a drop; drops only of wholly expired rowsets and
// never on merge-on-read tables; FromBase exactly when the base rowset is
// an input of a rewrite; a merge-on-read compaction dropping expired rows
// only from version 0.
func FuzzPick(f *testing.F) {
	f.Add([]byte{0, 1, 5, 3, 9, 2, 200, 7, 7, 1}, int64(30))
	f.Add([]byte{2, 0, 40, 10, 0, 90, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3}, int64(100))
	f.Add([]byte{1, 2, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1}, int64(5))
	f.Fuzz(func(t *testing.T, data []byte, nowH int64) {
		if len(data) < 2 {
			return
		}
		next := func() int64 {
			if len(data) == 0 {
				return 0
			}
			b := data[0]
			data = data[1:]
			return int64(b)
		}
		const hour = int64(3600e6)
		v := View{Model: []schema.Model{schema.Duplicate, schema.UniqueMOW, schema.UniqueMOR}[next()%3]}
		switch m := next(); m % 4 {
		case 1:
			v.Policy = ttlcol.Policy{Mode: ttlcol.SourceMode, SourceColumn: "ts", Retention: (m%48 + 1) * 3600}
		case 2:
			v.Policy = ttlcol.Policy{Mode: ttlcol.DirectMode}
		case 3:
			v.Policy = ttlcol.Policy{Mode: ttlcol.SourceMode, SourceColumn: "ts", Retention: 24 * 3600}
			v.Deadline = (m%8 + 1) * hour
		}
		var ver int64
		for len(data) >= 5 && len(v.Rowsets) < 40 {
			m := &rowset.Meta{ID: uint64(len(v.Rowsets) + 1), Lo: ver, Rows: next()*10 + 1}
			ver += next() % 4
			m.Hi = ver
			ver++
			m.Bytes = m.Rows * (1 + next()*1000)
			lo, span := next(), next()
			if v.Policy.Mode != ttlcol.NoTTL && lo%5 != 0 {
				m.TTL = rowset.TTLStats{HasMinMax: true, Min: lo * hour, Max: (lo + span%24) * hour, Nulls: m.Rows * (span % 3) / 4}
				m.Hist = ttlcol.NewHistogram(hour)
				m.Hist.AddNulls(m.TTL.Nulls)
				live := m.Rows - m.TTL.Nulls
				m.Hist.AddCounts(m.TTL.Min, live/2)
				m.Hist.AddCounts(m.TTL.Max, live-live/2)
			}
			r := Rowset{Meta: m}
			if v.Model.IsUnique() {
				r.Deleted = m.Rows * (next() % 5) / 4
			}
			v.Rowsets = append(v.Rowsets, r)
		}
		now := (nowH % 1000) * hour
		threshold := v.Policy.Threshold(now)
		check := func(p Plan) {
			if len(p.Reasons) != len(p.Inputs) || len(p.Inputs) == 0 {
				t.Fatalf("%+v: %d reasons for %d inputs", p, len(p.Reasons), len(p.Inputs))
			}
			for i, x := range p.Inputs {
				if x < 0 || x >= len(v.Rowsets) || (i > 0 && x <= p.Inputs[i-1]) {
					t.Fatalf("%+v: inputs out of order", p)
				}
				if !p.DropOnly && i > 0 && x != p.Inputs[i-1]+1 {
					t.Fatalf("%+v: a rewrite of rowsets that are not contiguous", p)
				}
			}
			if p.DropOnly {
				if v.Model == schema.UniqueMOR {
					t.Fatalf("%+v: a whole-rowset drop on a merge-on-read table", p)
				}
				for _, x := range p.Inputs {
					if !WhollyExpired(v.Rowsets[x].Meta, v.Policy, threshold) {
						t.Fatalf("%+v: drops rowset %d, which is not wholly expired", p, x)
					}
				}
				return
			}
			if p.FromBase != (p.Inputs[0] == 0) {
				t.Fatalf("%+v: FromBase %v with first input %d", p, p.FromBase, p.Inputs[0])
			}
			if v.Model == schema.UniqueMOR && DropsExpired(v.Model, p.FromBase) && p.Inputs[0] != 0 {
				t.Fatalf("%+v: a merge-on-read compaction above version 0 drops expired rows", p)
			}
		}
		if p, ok := PickAuto(v, now); ok {
			check(p)
		}
		for _, k := range []Kind{Cumulative, Base, Full, TTLDrop} {
			if p, ok := PickManual(k, v, now); ok {
				check(p)
			}
		}
	})
}
