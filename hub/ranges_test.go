package hub

import "testing"

func TestParseRanges(t *testing.T) {
	for _, c := range []struct {
		in   string
		size int64
		want []byteRange
		bad  bool
	}{
		{"bytes=0-9", 100, []byteRange{{0, 9}}, false},
		{"bytes=90-200", 100, []byteRange{{90, 99}}, false},
		{"bytes=90-", 100, []byteRange{{90, 99}}, false},
		{"bytes=-10", 100, []byteRange{{90, 99}}, false},
		{"bytes=-1000", 100, []byteRange{{0, 99}}, false},
		{"bytes=0-1, 5-6", 100, []byteRange{{0, 1}, {5, 6}}, false},
		{"bytes=100-", 100, nil, true},
		{"bytes=5-4", 100, nil, true},
		{"bytes=a-4", 100, nil, true},
		{"items=0-1", 100, nil, true},
		{"bytes=-0", 100, nil, true},
		{"bytes=0-1", 0, nil, true},
	} {
		got, err := parseRanges(c.in, c.size)
		if (err != nil) != c.bad || len(got) != len(c.want) {
			t.Errorf("%q: %v %v", c.in, got, err)
			continue
		}
		for i := range got {
			if got[i] != c.want[i] {
				t.Errorf("%q: %v, want %v", c.in, got, c.want)
			}
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
