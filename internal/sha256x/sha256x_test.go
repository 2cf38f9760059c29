package sha256x

import (
	"bytes"
	"crypto/sha256"
	"encoding"
	"math/rand/v2"
	"testing"
)

func randomData(n int, seed uint64) []byte {
	r := rand.New(rand.NewPCG(seed, seed+1))
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(r.Uint32())
	}
	return b
}

// Every length across a few blocks, so each padding case is met.
func TestEveryLength(t *testing.T) {
	data := randomData(1100, 1)
	d := NewUnrolled()
	for n := 0; n <= len(data); n++ {
		d.Reset()
		d.Write(data[:n])
		want := sha256.Sum256(data[:n])
		if got := d.Sum(nil); !bytes.Equal(got, want[:]) {
			t.Fatalf("length %d: %x, want %x", n, got, want)
		}
	}
}

// Any split of the input into writes gives the same digest, and Sum does
// not disturb a digest in progress.
func TestSplits(t *testing.T) {
	data := randomData(100000, 3)
	want := sha256.Sum256(data)
	r := rand.New(rand.NewPCG(5, 6))
	for round := 0; round < 50; round++ {
		d := NewUnrolled()
		for off := 0; off < len(data); {
			n := min(r.IntN(300)+r.IntN(2)*r.IntN(20000), len(data)-off)
			d.Write(data[off : off+n])
			off += n
			if round%10 == 0 {
				d.Sum(nil)
			}
		}
		if got := d.Sum(nil); !bytes.Equal(got, want[:]) {
			t.Fatalf("round %d: %x", round, got)
		}
	}
	empty := sha256.Sum256(nil)
	if got := New().Sum(nil); !bytes.Equal(got, empty[:]) {
		t.Fatalf("New: empty digest %x", got)
	}
}

// A state taken at any length is crypto/sha256's, byte for byte, and a
// digest restored from it (in either implementation) ends as the whole
// input's digest.
func TestState(t *testing.T) {
	data := randomData(300, 4)
	want := sha256.Sum256(data)
	for n := 0; n <= len(data); n++ {
		d := NewUnrolled()
		d.Write(data[:n])
		std := sha256.New()
		std.Write(data[:n])
		got, _ := d.MarshalBinary()
		ref, err := std.(encoding.BinaryMarshaler).MarshalBinary()
		if err != nil || !bytes.Equal(got, ref) {
			t.Fatalf("length %d: state %x, crypto/sha256's %x", n, got, ref)
		}
		back := new(Digest)
		if err := back.UnmarshalBinary(ref); err != nil {
			t.Fatal(err)
		}
		back.Write(data[n:])
		other := sha256.New()
		if err := other.(encoding.BinaryUnmarshaler).UnmarshalBinary(got); err != nil {
			t.Fatal(err)
		}
		other.Write(data[n:])
		if !bytes.Equal(back.Sum(nil), want[:]) || !bytes.Equal(other.Sum(nil), want[:]) {
			t.Fatalf("length %d: a restored digest does not end as the whole input's", n)
		}
	}
	for _, bad := range [][]byte{nil, []byte("sha\x03"), append([]byte("sha\x02"), make([]byte, stateSize-4)...)} {
		if err := new(Digest).UnmarshalBinary(bad); err == nil {
			t.Fatalf("UnmarshalBinary(%x) took it", bad)
		}
	}
}

// The FIPS 180-2 example of two blocks.
func TestKnownAnswer(t *testing.T) {
	d := NewUnrolled()
	d.Write([]byte("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq"))
	const want = "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1"
	if got := string(bytesHex(d.Sum(nil))); got != want {
		t.Fatalf("%s, want %s", got, want)
	}
}

func bytesHex(b []byte) []byte {
	const digits = "0123456789abcdef"
	out := make([]byte, 0, 2*len(b))
	for _, c := range b {
		out = append(out, digits[c>>4], digits[c&15])
	}
	return out
}

func FuzzDigest(f *testing.F) {
	f.Add([]byte("abc"), uint16(1))
	f.Fuzz(func(t *testing.T, data []byte, split uint16) {
		d := NewUnrolled()
		k := int(split) % (len(data) + 1)
		d.Write(data[:k])
		d.Write(data[k:])
		want := sha256.Sum256(data)
		if got := d.Sum(nil); !bytes.Equal(got, want[:]) {
			t.Fatalf("%x", got)
		}
	})
}

func BenchmarkUnrolled(b *testing.B) {
	data := make([]byte, 1<<20)
	d := NewUnrolled()
	b.SetBytes(int64(len(data)))
	for b.Loop() {
		d.Write(data)
	}
}

func BenchmarkStdlib(b *testing.B) {
	data := make([]byte, 1<<20)
	d := sha256.New()
	b.SetBytes(int64(len(data)))
	for b.Loop() {
		d.Write(data)
	}
}

// Any bytes given as a state are refused or give a digest that goes on
// as crypto/sha256 restored from the same state does.
func FuzzState(f *testing.F) {
	d := NewUnrolled()
	d.Write([]byte("a state with a partial block"))
	state, _ := d.MarshalBinary()
	f.Add(state, []byte("more"))
	f.Fuzz(func(t *testing.T, state, more []byte) {
		got := new(Digest)
		err := got.UnmarshalBinary(state)
		ref := sha256.New()
		refErr := ref.(encoding.BinaryUnmarshaler).UnmarshalBinary(state)
		if (err == nil) != (refErr == nil) {
			t.Fatalf("UnmarshalBinary: %v, crypto/sha256: %v", err, refErr)
		}
		if err != nil {
			return
		}
		got.Write(more)
		ref.Write(more)
		if !bytes.Equal(got.Sum(nil), ref.Sum(nil)) {
			t.Fatal("the restored digest differs from crypto/sha256's")
		}
	})
}
