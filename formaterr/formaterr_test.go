package formaterr

import (
	"errors"
	"fmt"
	"io"
	"testing"
)

func TestMessageAndOffset(t *testing.T) {
	err := fmt.Errorf("reading: %w", Wrap("xorb", 42, io.ErrUnexpectedEOF, "chunk %d truncated", 3))
	if got, want := err.Error(), "reading: xorb: chunk 3 truncated at byte offset 42: unexpected EOF"; got != want {
		t.Fatalf("got %q want %q", got, want)
	}
	if off, ok := Offset(err); !ok || off != 42 {
		t.Fatalf("Offset = %d, %v", off, ok)
	}
	if !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Fatal("the cause must stay reachable")
	}
	if _, ok := Offset(io.EOF); ok {
		t.Fatal("a plain error has no offset")
	}
}
