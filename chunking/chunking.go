// Package chunking cuts data into content-defined chunks with the gearhash
// rolling hash of the XET-BLAKE3-GEARHASH-LZ4 suite (draft-denis-xet §5),
// exactly as the reference implementation does today: the hash is reset at
// every boundary, a boundary falls where its top 16 bits are zero once the
// chunk has MinSize bytes, and one is forced at MaxSize.
//
// The hash remembers only its last 64 bytes, so the first MinSize-64 bytes
// of a chunk cannot influence any boundary and are never hashed. That skip
// is most of the chunker's speed, and the tests prove it changes no boundary
// against the draft's byte-at-a-time pseudo-code.
//
// Two other implementations differ, and this package follows neither: an
// older reference release carried the hash over boundaries and could cut
// chunks of 8128 to 8191 bytes (about one chunk in a thousand), and the npm
// package @huggingface/xetchunk-wasm 0.2.0 resets the hash but tests for a
// boundary from 8128 bytes on, cutting such short chunks about one time in
// eight; the real chunk lists of the reference files contain neither.
package chunking

// Chunk size parameters of the suite (§5.2).
const (
	TargetSize = 65536
	MinSize    = TargetSize / 8
	MaxSize    = TargetSize * 2
	// Mask selects the top 16 bits of the rolling hash; a boundary may fall
	// where they are all zero.
	Mask uint64 = 0xFFFF000000000000

	// window is how many bytes the rolling hash remembers: each byte's
	// contribution is shifted out after 64 more.
	window = 64
)

// Finder finds chunk boundaries in a stream of bytes. The zero value is
// ready to use at the start of a stream.
type Finder struct {
	hash uint64 // rolling hash of the current chunk
	cur  int    // bytes of the current chunk seen so far
}

// Next scans data, which continues the current chunk, and returns how many
// of its bytes belong to the current chunk. If boundary is true the chunk
// ends after data[n-1] and the next call starts a new chunk; otherwise all of
// data was consumed (n == len(data)) and the chunk goes on.
func (f *Finder) Next(data []byte) (n int, boundary bool) {
	cur, pos, h := f.cur, 0, f.hash
	// Bytes more than 64 before the first possible boundary are shifted out
	// of the hash before it is ever tested: skip them.
	if cur < MinSize-window {
		pos = min(MinSize-window-cur, len(data))
		cur += pos
	}
	// Fill the hash's window up to the byte before the first test.
	for ; pos < len(data) && cur < MinSize-1; pos, cur = pos+1, cur+1 {
		h = h<<1 + gearTable[data[pos]]
	}
	end := min(len(data), pos+MaxSize-cur)
	if i, hit := roll(&h, data[pos:end]); hit {
		f.hash, f.cur = 0, 0
		return pos + i + 1, true
	}
	cur += end - pos
	if cur >= MaxSize {
		f.hash, f.cur = 0, 0
		return end, true
	}
	f.hash, f.cur = h, cur
	return end, false
}

// Boundaries returns the end offset of each chunk of data, in order. The
// last one is len(data); empty data has no chunks.
func Boundaries(data []byte) []int {
	// Chunks average about 64 KiB; a small over-estimate saves regrowth.
	out := make([]int, 0, len(data)/(TargetSize-TargetSize/4)+1)
	var f Finder
	for off := 0; off < len(data); {
		n, _ := f.Next(data[off:])
		off += n
		out = append(out, off)
	}
	return out
}

// Split returns the chunks of data as subslices of it (no copying).
func Split(data []byte) [][]byte {
	ends := Boundaries(data)
	out := make([][]byte, len(ends))
	start := 0
	for i, end := range ends {
		out[i] = data[start:end:end]
		start = end
	}
	return out
}

// boundaryBelow is Mask's test as a comparison: the top 16 bits of h are
// zero exactly when h is below 2^48.
const boundaryBelow = 1 << 48

// roll feeds scan to the rolling hash *h and returns the index of the first
// byte after which the hash hits the mask.
//
// The plain update h = h<<1 + T[b] is a chain of two dependent operations
// per byte. Taking bytes in pairs, h2 = h<<2 + (T[b0]<<1 + T[b1]) keeps the
// chain at two operations per two bytes; the in-between value h<<1 + T[b0]
// is still computed, off the chain, so every position is tested.
//
// Sixteen bytes are taken at a time in straight-line code with a single
// test, on the smallest of the sixteen values: boundaries are rare, and
// branches are what WebAssembly pays most for (Go compiles each taken jump
// to a trip through a dispatch table), which makes this about twice as fast
// there and as fast natively. On a hit the block is replayed byte by byte
// to find the first position.
func roll(h *uint64, scan []byte) (int, bool) {
	tab := &gearTable
	x := *h
	i := 0
	for ; i+16 <= len(scan); i += 16 {
		s := (*[16]byte)(scan[i : i+16])
		t0, t1, t2, t3 := tab[s[0]], tab[s[1]], tab[s[2]], tab[s[3]]
		t4, t5, t6, t7 := tab[s[4]], tab[s[5]], tab[s[6]], tab[s[7]]
		t8, t9, t10, t11 := tab[s[8]], tab[s[9]], tab[s[10]], tab[s[11]]
		t12, t13, t14, t15 := tab[s[12]], tab[s[13]], tab[s[14]], tab[s[15]]
		x0, x1 := x<<1+t0, x<<2+(t0<<1+t1)
		x2, x3 := x1<<1+t2, x1<<2+(t2<<1+t3)
		x4, x5 := x3<<1+t4, x3<<2+(t4<<1+t5)
		x6, x7 := x5<<1+t6, x5<<2+(t6<<1+t7)
		x8, x9 := x7<<1+t8, x7<<2+(t8<<1+t9)
		x10, x11 := x9<<1+t10, x9<<2+(t10<<1+t11)
		x12, x13 := x11<<1+t12, x11<<2+(t12<<1+t13)
		x14, x15 := x13<<1+t14, x13<<2+(t14<<1+t15)
		if min(x0, x1, x2, x3, x4, x5, x6, x7, x8, x9, x10, x11, x12, x13, x14, x15) < boundaryBelow {
			for k := range s {
				if x = x<<1 + tab[s[k]]; x < boundaryBelow {
					*h = x
					return i + k, true
				}
			}
		}
		x = x15
	}
	for ; i < len(scan); i++ {
		if x = x<<1 + tab[scan[i]]; x < boundaryBelow {
			*h = x
			return i, true
		}
	}
	*h = x
	return len(scan), false
}
