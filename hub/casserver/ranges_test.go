package casserver

import (
	"slices"
	"testing"
)

func TestParseRanges(t *testing.T) {
	for _, c := range []struct {
		in   string
		size int64
		want []byteRange // nil: refused
	}{
		{"bytes=0-9", 100, []byteRange{{Start: 0, End: 9}}},
		{"bytes=90-200", 100, []byteRange{{Start: 90, End: 99}}},
		{"bytes=90-", 100, []byteRange{{Start: 90, End: 99}}},
		{"bytes=-10", 100, []byteRange{{Start: 90, End: 99}}},
		{"bytes=-1000", 100, []byteRange{{Start: 0, End: 99}}},
		{"bytes=0-1, 5-6", 100, []byteRange{{Start: 0, End: 1}, {Start: 5, End: 6}}},
		{"bytes=100-", 100, nil},
		{"bytes=5-4", 100, nil},
		{"bytes=a-4", 100, nil},
		{"items=0-1", 100, nil},
		{"bytes=-0", 100, nil},
		{"bytes=0-1", 0, nil},
	} {
		got, err := parseRanges(c.in, c.size)
		if (err != nil) != (c.want == nil) || !slices.Equal(got, c.want) {
			t.Errorf("%q: %v %v, want %v", c.in, got, err, c.want)
		}
	}
}

func FuzzParseRanges(f *testing.F) {
	f.Add("bytes=0-9,20-", int64(100))
	f.Add("bytes=-5", int64(3))
	f.Fuzz(func(t *testing.T, s string, size int64) {
		if size < 0 {
			return
		}
		rs, err := parseRanges(s, size)
		if err != nil {
			return
		}
		for _, r := range rs {
			if r.Start < 0 || r.End < r.Start || r.End >= size {
				t.Fatalf("%q size %d: range %v outside the resource", s, size, r)
			}
		}
	})
}

func TestParseReconRangeSuffix(t *testing.T) {
	for _, c := range []struct {
		s    string
		size uint64
		a, b uint64
		ok   bool
	}{
		{"bytes=-100", 1000, 900, 999, true},
		{"bytes=-5000", 1000, 0, 999, true},
		{"bytes=-0", 1000, 1000, 1000, true}, // past the end: 416
		{"bytes=-x", 1000, 0, 0, false},
		{"bytes=10-19", 1000, 10, 19, true},
	} {
		a, b, ok := parseReconRange(c.s, c.size)
		if ok != c.ok || ok && (a != c.a || b != c.b) {
			t.Errorf("%q of %d: %d-%d %v, want %d-%d %v", c.s, c.size, a, b, ok, c.a, c.b, c.ok)
		}
	}
}

func FuzzParseReconRange(f *testing.F) {
	f.Add("bytes=0-9")
	f.Add("bytes=5-")
	f.Add("bytes=18446744073709551615-")
	f.Add("bytes=-100")
	f.Add("bytes=-0")
	f.Fuzz(func(t *testing.T, s string) {
		a, b, ok := parseReconRange(s, 1000)
		if ok && b < a {
			t.Fatalf("%q: end %d before start %d", s, b, a)
		}
	})
}
