package blake3

import (
	"math/rand"
	"testing"

	zeebo "github.com/zeebo/blake3"

	"github.com/xetkit/xetkit/internal/kerneltest"
)

// ivKey is the chaining value an unkeyed hash starts from.
var ivKey = [8]uint32{iv0, iv1, iv2, iv3, 0x510E527F, 0x9B05688C, 0x1F83D9AB, 0x5BE0CD19}

// kernelLengths are the lengths SumLanes is tested on: the edges of blocks,
// leaves and groups of four, Xet's chunk sizes, and random ones.
func kernelLengths(rnd *rand.Rand) []int {
	ls := []int{1025, 1088, 2047, 2048, 2049, 3 * 1024, 4*1024 - 1, 4 * 1024, 4*1024 + 1, 5 * 1024,
		8*1024 - 1, 8 * 1024, 8*1024 + 63, 8*1024 + 64, 8*1024 + 65, 15*1024 + 1,
		64 * 1024, 64*1024 + 1, 128*1024 - 1, 128 * 1024, 128*1024 + 1, LanesMaxLen - 1, LanesMaxLen}
	for i := 0; i < 60; i++ {
		ls = append(ls, ChunkLen+1+rnd.Intn(LanesMaxLen-ChunkLen))
	}
	return ls
}

// TestLanesKernel runs SumLanes with the WebAssembly kernel (in wazero) and
// with the Go stand-in below against zeebo/blake3, keyed with every key Xet
// uses and more, and unkeyed.
func TestLanesKernel(t *testing.T) {
	k := kerneltest.Load(t)
	rnd := rand.New(rand.NewSource(11))
	data := make([]byte, LanesMaxLen)
	rnd.Read(data)
	keys := testKeys()
	for _, x := range []struct {
		name string
		x4   Lanes4
	}{{"wasm kernel", k.BLAKE3x4}, {"Go lanes", goLanes}} {
		for _, n := range kernelLengths(rnd) {
			for _, key := range keys {
				kw := [8]uint32(NewKey(key))
				if got, want := SumLanes(&kw, true, data[:n], x.x4), reference(t, key, data[:n]); got != want {
					t.Fatalf("%s: key %x length %d: got %x, want %x", x.name, key[:4], n, got, want)
				}
			}
			want := zeebo.Sum256(data[:n])
			if got := SumLanes(&ivKey, false, data[:n], x.x4); got != want {
				t.Fatalf("%s: unkeyed length %d: got %x, want %x", x.name, n, got, want)
			}
		}
	}
}

// TestLanesCounter checks the kernel's per-lane counters and flags against
// the scalar compression directly, including a counter base that is not
// zero.
func TestLanesCounter(t *testing.T) {
	k := kerneltest.Load(t)
	data := make([]byte, 8*ChunkLen)
	rand.New(rand.NewSource(5)).Read(data)
	key := [8]uint32(NewKey([32]byte{9}))
	out := make([]byte, 8*Size)
	k.BLAKE3x4(&key, data, ChunkLen, 16, 1000, 3, flagKeyedHash, flagChunkStart, flagChunkEnd, out, 2)
	for i := 0; i < 8; i++ {
		kk := Key(key)
		want := kk.fullChunk((*[ChunkLen]byte)(data[i*ChunkLen:]), uint64(1000+3*i))
		var w [Size]byte
		putWords(w[:], &want)
		if string(out[i*Size:(i+1)*Size]) != string(w[:]) {
			t.Fatalf("lane %d: got %x, want %x", i, out[i*Size:(i+1)*Size], w)
		}
	}
}

// goLanes is Lanes4 in plain Go, so SumLanes's tree is tested apart from
// the kernel.
func goLanes(key *[8]uint32, in []byte, stride, nblocks int, counter, step, flags, start, end uint32, out []byte, groups int) {
	cvs := make([][8]uint32, 4*groups)
	for i := range cvs {
		cv := *key
		p := in[i*stride:]
		for b := 0; b < nblocks; b++ {
			f := flags
			if b == 0 {
				f |= start
			}
			if b == nblocks-1 {
				f |= end
			}
			compress(&cv, (*[BlockLen]byte)(p[b*BlockLen:]), uint64(counter+uint32(i)*step), BlockLen, f)
		}
		cvs[i] = cv
	}
	for i := range cvs {
		putWords(out[i*Size:], &cvs[i])
	}
}

// FuzzLanesKernel hashes inputs of fuzzed length (more than one chunk, at
// most LanesMaxLen) and content seed with the kernel, against zeebo/blake3.
func FuzzLanesKernel(f *testing.F) {
	f.Add(uint32(1025), int64(1), []byte("key"), false)
	f.Add(uint32(4*1024+7), int64(2), []byte{1}, true)
	f.Fuzz(func(t *testing.T, n uint32, seed int64, keySeed []byte, unkeyed bool) {
		size := ChunkLen + 1 + int(n%uint32(LanesMaxLen-ChunkLen))
		data := make([]byte, size)
		rand.New(rand.NewSource(seed)).Read(data)
		k := kerneltest.Load(t)
		if unkeyed {
			if got, want := SumLanes(&ivKey, false, data, k.BLAKE3x4), zeebo.Sum256(data); got != want {
				t.Fatalf("unkeyed length %d: got %x, want %x", len(data), got, want)
			}
			return
		}
		var key [32]byte
		copy(key[:], keySeed)
		kw := [8]uint32(NewKey(key))
		if got, want := SumLanes(&kw, true, data, k.BLAKE3x4), reference(t, key, data); got != want {
			t.Fatalf("length %d: got %x, want %x", len(data), got, want)
		}
	})
}

// TestRootsKernel hashes one-chunk messages of every length from 0 to 1024
// four at a time with the kernel, keyed and unkeyed, against zeebo/blake3:
// lanes of different lengths share each group.
func TestRootsKernel(t *testing.T) {
	k := kerneltest.Load(t)
	rnd := rand.New(rand.NewSource(21))
	const stride = ChunkLen
	lens := make([]uint32, 0, 1028)
	for n := 0; n <= ChunkLen; n++ {
		lens = append(lens, uint32(n))
	}
	for len(lens)%4 != 0 {
		lens = append(lens, uint32(rnd.Intn(ChunkLen+1)))
	}
	rnd.Shuffle(len(lens), func(i, j int) { lens[i], lens[j] = lens[j], lens[i] })
	in := make([]byte, stride*len(lens))
	for i, n := range lens {
		rnd.Read(in[i*stride : i*stride+int(n)]) // the rest stays zero: the padding
	}
	out := make([]byte, Size*len(lens))
	for _, key := range testKeys() {
		kw := [8]uint32(NewKey(key))
		k.BLAKE3Roots4(&kw, KeyedFlags, in, stride, lens, out, len(lens)/4)
		for i, n := range lens {
			if want := reference(t, key, in[i*stride:i*stride+int(n)]); string(out[i*Size:(i+1)*Size]) != string(want[:]) {
				t.Fatalf("key %x message %d (%d bytes): got %x, want %x", key[:4], i, n, out[i*Size:(i+1)*Size], want)
			}
		}
	}
	k.BLAKE3Roots4(&ivKey, 0, in, stride, lens, out, len(lens)/4)
	for i, n := range lens {
		if want := zeebo.Sum256(in[i*stride : i*stride+int(n)]); string(out[i*Size:(i+1)*Size]) != string(want[:]) {
			t.Fatalf("unkeyed message %d (%d bytes): got %x, want %x", i, n, out[i*Size:(i+1)*Size], want)
		}
	}
}
