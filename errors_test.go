package rowttl

import (
	"errors"
	"fmt"
	"testing"
)

func TestErrorfAndMessage(t *testing.T) {
	inner := fmt.Errorf("open x: %w", ErrCorruption)
	for _, c := range []struct {
		err     error
		is      error
		message string
	}{
		{Errorf(ErrInvalidProperty, "row ttl duration must not be negative"), ErrInvalidProperty, "row ttl duration must not be negative"},
		{Errorf(ErrInvalidArgument, "row %d: %w", 3, inner), ErrCorruption, "row 3: open x"},
		{fmt.Errorf("Unknown table 't': %w", ErrNotFound), ErrNotFound, "Unknown table 't'"},
		{errors.New("plain"), nil, "plain"},
	} {
		if c.is != nil && !errors.Is(c.err, c.is) {
			t.Errorf("%v does not wrap %v", c.err, c.is)
		}
		if got := Message(c.err); got != c.message {
			t.Errorf("Message(%q) = %q, want %q", c.err, got, c.message)
		}
	}
}
