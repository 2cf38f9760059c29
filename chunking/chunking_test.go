package chunking

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
)

// splitmix64 fills n bytes from the SplitMix64 generator, little-endian
// words: the input the reference implementation's own correctness tests use.
func splitmix64(n int, seed uint64) []byte {
	out := make([]byte, 0, n+8)
	s := seed
	for len(out) < n {
		s += 0x9E3779B97F4A7C15
		z := s
		z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9
		z = (z ^ (z >> 27)) * 0x94D049BB133111EB
		z ^= z >> 31
		out = binary.LittleEndian.AppendUint64(out, z)
	}
	return out[:n]
}

// Boundaries the reference implementation reports for 1,000,000 bytes of
// SplitMix64 output (seed 0) and for 1,000,000 bytes of the value 59.
func TestReferenceVectors(t *testing.T) {
	data := splitmix64(1_000_000, 0)
	if data[0] != 175 || data[127] != 132 || data[111111] != 118 {
		t.Fatalf("generator differs: %d %d %d", data[0], data[127], data[111111])
	}
	want := []int{84493, 134421, 144853, 243318, 271793, 336457, 467529, 494581, 582000, 596735,
		616815, 653164, 678202, 724510, 815591, 827760, 958832, 991092, 1000000}
	if got := Boundaries(data); !slices.Equal(got, want) {
		t.Fatalf("random data:\n got %v\nwant %v", got, want)
	}
	want = []int{131072, 262144, 393216, 524288, 655360, 786432, 917504, 1000000}
	if got := Boundaries(bytes.Repeat([]byte{59}, 1_000_000)); !slices.Equal(got, want) {
		t.Fatalf("constant data:\n got %v\nwant %v", got, want)
	}
}

// naiveBoundaries is the draft's pseudo-code (§5.3) as written: every byte
// hashed, the hash reset at each boundary, the mask tested from MinSize
// bytes on. The fast Finder, which skips bytes, must equal it.
func naiveBoundaries(data []byte) []int {
	var h uint64
	var ends []int
	start := 0
	for i, b := range data {
		h = h<<1 + gearTable[b]
		size := i - start + 1
		if size < MinSize {
			continue
		}
		if size >= MaxSize || h&Mask == 0 {
			ends = append(ends, i+1)
			start = i + 1
			h = 0
		}
	}
	if start < len(data) {
		ends = append(ends, len(data))
	}
	return ends
}

// corpus returns inputs that exercise every boundary rule: random data,
// constant runs (forced MaxSize cuts), short tiny files, and periodic data
// whose period makes boundaries fall inside the 8128..8191 window.
func corpus(t testing.TB) map[string][]byte {
	r := rand.New(rand.NewPCG(1, 2))
	random := func(n int) []byte {
		b := make([]byte, n)
		for i := range b {
			b[i] = byte(r.Uint32())
		}
		return b
	}
	c := map[string][]byte{
		"empty":    {},
		"one":      {7},
		"8127":     random(8127),
		"8128":     random(8128),
		"8192":     random(8192),
		"131072":   random(131072),
		"131073":   random(131073),
		"random4M": random(4 << 20),
		"zeros1M":  make([]byte, 1<<20),
		"text":     bytes.Repeat([]byte("the quick brown fox jumps over the lazy dog\n"), 50000),
	}
	// Periodic data with a period of at most 64 bytes: once the hash has
	// seen 64 bytes it repeats with the data, so a block with one phase that
	// hits the mask cuts every chunk within a period of MinSize, right where
	// the skipped bytes end. Such blocks are rare (about one in a thousand):
	// search for a few.
	for found := 0; found < 3; {
		block := random(40 + r.IntN(25))
		if hitsMask(block) {
			c[fmt.Sprintf("periodic%d", found)] = bytes.Repeat(block, (600<<10)/len(block))
			found++
		}
	}
	return c
}

// hitsMask reports whether repeating block makes the rolling hash hit the
// mask at some phase after its 64-byte window is full.
func hitsMask(block []byte) bool {
	var h uint64
	for i := 0; i < window+2*len(block); i++ {
		h = h<<1 + gearTable[block[i%len(block)]]
		if i >= window && h&Mask == 0 {
			return true
		}
	}
	return false
}

func TestFinderEqualsModel(t *testing.T) {
	atMin := 0
	for name, data := range corpus(t) {
		got, want := Boundaries(data), naiveBoundaries(data)
		if !slices.Equal(got, want) {
			t.Fatalf("%s: fast %v\nmodel %v", name, got, want)
		}
		prev := 0
		for _, end := range got {
			n := end - prev
			if end != len(data) && (n < MinSize || n > MaxSize) {
				t.Fatalf("%s: chunk of %d bytes", name, n)
			}
			if n < MinSize+64 && end != len(data) {
				atMin++
			}
			prev = end
		}
	}
	// The corpus must reach boundaries within 64 bytes of the minimum, where
	// the hash has just filled its window after the skipped bytes, or this
	// test would not show the skip is harmless.
	if atMin == 0 {
		t.Fatal("corpus produced no boundary within 64 bytes of MinSize")
	}
	t.Logf("%d boundaries within 64 bytes of MinSize matched the model", atMin)
}

func TestSplitCoversInput(t *testing.T) {
	for name, data := range corpus(t) {
		var joined []byte
		for _, c := range Split(data) {
			if len(c) == 0 {
				t.Fatalf("%s: empty chunk", name)
			}
			joined = append(joined, c...)
		}
		if !bytes.Equal(joined, data) {
			t.Fatalf("%s: chunks do not rebuild the input", name)
		}
	}
}

// pushInPieces streams data through a Chunker in pieces cut by r and
// returns the end offset of every chunk, checking each chunk's bytes.
func pushInPieces(t testing.TB, data []byte, r *rand.Rand, maxPiece int) []int {
	c := NewChunker()
	var ends []int
	check := func(chunks []Chunk) {
		for _, ch := range chunks {
			end := ch.Offset + int64(len(ch.Data))
			if !bytes.Equal(ch.Data, data[ch.Offset:end]) {
				t.Fatalf("chunk at %d: bytes differ from the input", ch.Offset)
			}
			ends = append(ends, int(end))
		}
	}
	for off := 0; off < len(data); {
		n := min(r.IntN(maxPiece+1), len(data)-off) // pieces of 0 bytes too
		check(c.Push(data[off : off+n]))
		off += n
	}
	check(c.Finish())
	return ends
}

func TestStreamEqualsOneShot(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for name, data := range corpus(t) {
		want := Boundaries(data)
		for _, maxPiece := range []int{1, 7, 100, 8191, 65536, 300000} {
			if maxPiece == 1 && len(data) > 1<<20 {
				continue // one byte at a time over megabytes adds nothing but time
			}
			if got := pushInPieces(t, data, r, maxPiece); !slices.Equal(got, want) {
				t.Fatalf("%s, pieces ≤ %d: stream %v\none-shot %v", name, maxPiece, got, want)
			}
		}
	}
}

func TestChunkerReuse(t *testing.T) {
	data := splitmix64(500_000, 9)
	c := NewChunker()
	for round := 0; round < 2; round++ {
		var ends []int
		for _, ch := range append(slices.Clone(c.Push(data)), c.Finish()...) {
			ends = append(ends, int(ch.Offset)+len(ch.Data))
		}
		if !slices.Equal(ends, Boundaries(data)) {
			t.Fatalf("round %d: %v", round, ends)
		}
	}
}

// A Chunker reused stream after stream keeps its buffers: many small
// files cost no allocation each (once both buffers exist), and each
// stream still comes out whole.
func TestChunkerKeepsItsBuffers(t *testing.T) {
	small := splitmix64(20_000, 5) // one boundary or none: a chunk from the buffer
	c := NewChunker()
	stream := func() {
		var got []byte
		for _, ch := range c.Push(small[:7000]) {
			got = append(got, ch.Data...)
		}
		for _, ch := range c.Push(small[7000:]) {
			got = append(got, ch.Data...)
		}
		for _, ch := range c.Finish() {
			got = append(got, ch.Data...)
		}
		if !bytes.Equal(got, small) {
			t.Fatal("the chunks do not rebuild the stream")
		}
	}
	stream()
	stream()
	c.out = slices.Grow(c.out, 4)
	// The test's own appends allocate; the Chunker's share is what
	// matters, measured with a stream that keeps nothing.
	if n := testing.AllocsPerRun(20, func() { c.Push(small); c.Finish() }); n != 0 {
		t.Errorf("%v allocations per reused stream, want 0", n)
	}
}

func FuzzStreamEqualsOneShot(f *testing.F) {
	f.Add(splitmix64(300_000, 1), uint64(1))
	f.Add(bytes.Repeat([]byte{1, 2, 3}, 50000), uint64(2))
	f.Add([]byte{}, uint64(3))
	f.Fuzz(func(t *testing.T, data []byte, seed uint64) {
		r := rand.New(rand.NewPCG(seed, seed>>7))
		want := Boundaries(data)
		if !slices.Equal(want, naiveBoundaries(data)) {
			t.Fatal("fast finder differs from the model")
		}
		if got := pushInPieces(t, data, r, 1+r.IntN(20000)); !slices.Equal(got, want) {
			t.Fatalf("stream %v one-shot %v", got, want)
		}
	})
}
