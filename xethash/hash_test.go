package xethash_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/xetkit/xetkit/internal/testref"
	"github.com/xetkit/xetkit/xethash"
)

// Appendix C.1.
func TestChunkHashVector(t *testing.T) {
	h := xethash.Chunk([]byte("Hello World!"))
	raw, _ := xethash.FromRawHex("a29cfb08e608d4d8726dd8659a90b9134b3240d5d8e42d5fcb28e2a6e763a3e8")
	if h != raw {
		t.Fatalf("raw bytes: got %x", h[:])
	}
	if got, want := h.String(), "d8d408e608fb9ca213b9909a65d86d725f2de4d8d540324be8a363e7a6e228cb"; got != want {
		t.Fatalf("XET string: got %s want %s", got, want)
	}
}

// Appendix C.2, both directions.
func TestStringVector(t *testing.T) {
	var h xethash.Hash
	for i := range h {
		h[i] = byte(i)
	}
	const want = "07060504030201000f0e0d0c0b0a090817161514131211101f1e1d1c1b1a1918"
	if h.String() != want {
		t.Fatalf("got %s", h)
	}
	back, err := xethash.Parse(want)
	if err != nil || back != h {
		t.Fatalf("Parse: %x %v", back[:], err)
	}
	upper, err := xethash.Parse(strings.ToUpper(want))
	if err != nil || upper != h {
		t.Fatalf("Parse upper case: %v", err)
	}
}

// Appendix C.3: two children merge into one node, which is the root.
func TestInternalNodeVector(t *testing.T) {
	root := xethash.MerkleRoot([]xethash.Entry{
		{Hash: xethash.MustParse("c28f58387a60d4aa200c311cda7c7f77f686614864f5869eadebf765d0a14a69"), Size: 100},
		{Hash: xethash.MustParse("6e4e3263e073ce2c0e78cc770c361e2778db3b054b98ab65e277fc084fa70f22"), Size: 200},
	})
	if got, want := root.String(), "be64c7003ccd3cf4357364750e04c9592b3c36705dee76a71590c011766b6c14"; got != want {
		t.Fatalf("got %s want %s", got, want)
	}
}

// Appendix C.4.
func TestVerificationVector(t *testing.T) {
	a, _ := xethash.FromRawHex("aad4607a38588fc2777f7cda1c310c209e86f564486186f6694aa1d065f7ebad")
	b, _ := xethash.FromRawHex("2cce73e063324e6e271e360c77cc780e65ab984b053bdb78220fa74f08fc77e2")
	// The vector's raw bytes are the C.3 children: check the two forms agree.
	if a.String() != "c28f58387a60d4aa200c311cda7c7f77f686614864f5869eadebf765d0a14a69" {
		t.Fatalf("raw/string mismatch: %s", a)
	}
	got := xethash.Verification([]xethash.Hash{a, b})
	if want := "eb06a8ad81d588ac05d1d9a079232d9c1e7d0b07232fa58091caa7bf333a2768"; got.String() != want {
		t.Fatalf("got %s want %s", got, want)
	}
}

func TestParseErrors(t *testing.T) {
	for _, s := range []string{"", "00", strings.Repeat("0", 63) + "g", strings.Repeat("0", 65)} {
		if _, err := xethash.Parse(s); err == nil {
			t.Errorf("Parse(%q) accepted", s)
		}
	}
}

func TestJSONForm(t *testing.T) {
	h := xethash.Chunk([]byte("x"))
	b, err := json.Marshal(map[string]xethash.Hash{"h": h})
	if err != nil {
		t.Fatal(err)
	}
	if string(b) != `{"h":"`+h.String()+`"}` {
		t.Fatalf("got %s", b)
	}
	var back map[string]xethash.Hash
	if err := json.Unmarshal(b, &back); err != nil || back["h"] != h {
		t.Fatalf("round trip: %v", err)
	}
}

func TestEmptyAndSingle(t *testing.T) {
	if !xethash.File(nil).IsZero() {
		t.Fatal("empty file hash must be 32 zero bytes (reference implementation)")
	}
	if !xethash.Xorb(nil).IsZero() {
		t.Fatal("empty merkle root must be zero")
	}
	one := xethash.Entry{Hash: xethash.Chunk([]byte("a")), Size: 1}
	if xethash.Xorb([]xethash.Entry{one}) != one.Hash {
		t.Fatal("a single entry is its own root")
	}
	if xethash.File([]xethash.Entry{one}) != xethash.Keyed(xethash.ZeroKey, one.Hash[:]) {
		t.Fatal("file hash of one chunk is the zero-keyed hash of its hash")
	}
}

// The reference file's chunk list gives the file hash and xorb hash its
// README states.
func TestReferenceFileAndXorbHash(t *testing.T) {
	chunks := testref.Chunks(t)
	if len(chunks) != testref.NumChunks {
		t.Fatalf("%d chunks", len(chunks))
	}
	var total uint64
	for _, c := range chunks {
		total += c.Size
	}
	if total != testref.FileSize {
		t.Fatalf("sizes add to %d", total)
	}
	if got := xethash.File(chunks).String(); got != testref.FileHash {
		t.Fatalf("file hash %s", got)
	}
	if got := xethash.Xorb(chunks).String(); got != testref.XorbHash {
		t.Fatalf("xorb hash %s", got)
	}
}

func TestKeyedChunk(t *testing.T) {
	h := xethash.Chunk([]byte("abc"))
	if xethash.KeyedChunk(xethash.Zero, h) != h {
		t.Fatal("zero key must pass hashes through")
	}
	key := xethash.Chunk([]byte("key"))
	want := xethash.Keyed(key, h[:])
	if xethash.KeyedChunk(key, h) != want || xethash.NewKeyedChunker(key).Hash(h) != want {
		t.Fatal("keyed chunk hash mismatch")
	}
}

// TestStringEveryByte checks the word-at-a-time XET string against plain
// hex printing of each 8-byte group reversed, with every byte value in
// every position.
func TestStringEveryByte(t *testing.T) {
	for b := 0; b < 256; b++ {
		for pos := 0; pos < xethash.Size; pos++ {
			var h xethash.Hash
			for i := range h {
				h[i] = byte(i*29 + b)
			}
			h[pos] = byte(b)
			var want []byte
			for seg := 0; seg < 4; seg++ {
				for i := 7; i >= 0; i-- {
					want = fmt.Appendf(want, "%02x", h[seg*8+i])
				}
			}
			if got := h.String(); got != string(want) {
				t.Fatalf("byte %#x at %d: got %s, want %s", b, pos, got, want)
			}
		}
	}
}
