package schema

import "testing"

// TestPersistedEnums pins the numbers manifests store for the schema's
// enums: a change here makes every existing table read as another type,
// model or default.
func TestPersistedEnums(t *testing.T) {
	kinds := []Kind{Invalid, Boolean, TinyInt, SmallInt, Int, BigInt, Float, Double, Decimal,
		String, Varchar, Char, Date, Datetime, TimestampTZ, TimestampNS}
	for want, k := range kinds {
		if int(k) != want {
			t.Errorf("kind %s is stored as %d, was %d: never renumber", k, k, want)
		}
	}
	for want, m := range []Model{Duplicate, UniqueMOW, UniqueMOR, Aggregate} {
		if int(m) != want {
			t.Errorf("model %s is stored as %d, was %d: never renumber", m, m, want)
		}
	}
	for want, d := range []DefaultKind{NoDefault, DefaultNull, DefaultLiteral, DefaultCurrentTimestamp} {
		if int(d) != want {
			t.Errorf("default kind %d was %d: never renumber", d, want)
		}
	}
}
