package xethash

import (
	"strconv"
	"sync"

	"github.com/xetkit/xetkit/internal/wasmkernels"
	fast "github.com/xetkit/xetkit/xethash/internal/blake3"
)

// Entry is a leaf or node of the aggregated hash tree: a hash and the number
// of bytes it covers.
type Entry struct {
	Hash Hash
	Size uint64
}

// Tree shape parameters (§6.2.2.1).
const (
	meanBranching = 4
	maxChildren   = 2*meanBranching + 1
)

// nextCut returns how many of the leading entries merge into one node
// (§6.2.2.2): at least 3 when there are more than 2, cut after an entry whose
// hash tail is divisible by the mean branching factor, never more than 9.
func nextCut(entries []Entry) int {
	n := len(entries)
	if n <= 2 {
		return n
	}
	end := min(maxChildren, n)
	for i := 2; i < end; i++ {
		if entries[i].Hash.Tail()%meanBranching == 0 {
			return i + 1
		}
	}
	return end
}

// mergeNode hashes one internal node: lines "<hash> : <size>\n" under the
// internal node key (§6.2.2.3). buf is scratch space reused across calls.
func mergeNode(children []Entry, buf []byte) (Entry, []byte) {
	buf, total := appendNode(buf[:0], children)
	return Entry{Hash: internalNodePool.sum(buf), Size: total}, buf
}

// appendNode appends the message of the node over children to dst and
// returns it with the bytes the node covers.
func appendNode(dst []byte, children []Entry) ([]byte, uint64) {
	var total uint64
	for _, c := range children {
		dst = c.Hash.appendString(dst)
		dst = append(dst, " : "...)
		dst = strconv.AppendUint(dst, c.Size, 10)
		dst = append(dst, '\n')
		total += c.Size
	}
	return dst, total
}

// MerkleRoot returns the root of the aggregated hash tree over entries
// (§6.2.2.4); Zero when there are none. entries is not modified.
func MerkleRoot(entries []Entry) Hash {
	if len(entries) < 2 {
		return MerkleRootInPlace(entries)
	}
	return MerkleRootInPlace(append([]Entry(nil), entries...))
}

// MerkleRootInPlace is MerkleRoot for a caller that is done with entries:
// the tree's levels are built over them, so nothing is allocated for them.
func MerkleRootInPlace(entries []Entry) Hash {
	switch len(entries) {
	case 0:
		return Zero
	case 1:
		return entries[0].Hash
	}
	if wasmkernels.Available && len(entries) >= 4*meanBranching {
		return merkleLanes(entries, wasmkernels.BLAKE3Roots4)
	}
	level := entries
	var scratch [maxChildren * (64 + 3 + 20 + 1)]byte
	buf := scratch[:0]
	for len(level) > 1 {
		out := 0
		for read := 0; read < len(level); {
			cut := read + nextCut(level[read:])
			level[out], buf = mergeNode(level[read:cut], buf)
			out++
			read = cut
		}
		level = level[:out]
	}
	return level[0].Hash
}

// Xorb returns the xorb hash of its chunks in order (§6.2.3).
func Xorb(chunks []Entry) Hash { return MerkleRoot(chunks) }

// File returns the file hash of its chunks in order (§6.3). A file with no
// chunks hashes to Zero, as in the reference implementation (whose server
// rejects the draft's keyed hash of the zero root for an empty file).
func File(chunks []Entry) Hash {
	if len(chunks) == 0 {
		return Zero
	}
	return FileOfRoot(MerkleRoot(chunks))
}

// FileOfRoot returns the file hash of a file whose chunks' tree has root
// root (see MerkleRootInPlace); the empty file's is Zero, not this.
func FileOfRoot(root Hash) Hash { return zeroKeyPool.sum(root[:]) }

// A node's message is at most maxChildren lines of 64 + 3 + 20 + 1 bytes:
// 792, padded to whole blocks, 832.
const (
	nodeStride = 832
	nodeBatch  = 64
)

// nodes is a batch of one level's internal nodes for merkleLanes.
type nodes struct {
	msgs  [nodeBatch * nodeStride]byte
	lens  [nodeBatch]uint32
	sizes [nodeBatch]uint64
	out   [nodeBatch * Size]byte
	n     int
}

var nodesPool = sync.Pool{New: func() any { return new(nodes) }}

// merkleLanes is MerkleRootInPlace with the nodes of each level hashed four
// at a time by roots (the SIMD kernel under WebAssembly): every node of a
// level depends only on the level below, so a level's nodes are
// independent messages.
func merkleLanes(level []Entry, roots fast.Roots4) Hash {
	b := nodesPool.Get().(*nodes)
	defer nodesPool.Put(b)
	key := [8]uint32(internalNodePool.fast)
	for len(level) > 1 {
		out := 0
		// flush hashes the batch and writes its nodes to level[out:]: below
		// every entry the next batch reads, as each node has a child.
		flush := func() {
			g := b.n / 4
			if g > 0 {
				roots(&key, fast.KeyedFlags, b.msgs[:], nodeStride, b.lens[:], b.out[:], g)
			}
			for i := 0; i < b.n; i++ {
				e := Entry{Size: b.sizes[i]}
				if i < 4*g {
					e.Hash = Hash(b.out[i*Size : (i+1)*Size])
				} else {
					e.Hash = internalNodePool.sum(b.msgs[i*nodeStride : i*nodeStride+int(b.lens[i])])
				}
				level[out] = e
				out++
			}
			b.n = 0
		}
		for read := 0; read < len(level); {
			cut := read + nextCut(level[read:])
			msg := b.msgs[b.n*nodeStride : (b.n+1)*nodeStride : (b.n+1)*nodeStride]
			m, total := appendNode(msg[:0], level[read:cut])
			clear(msg[len(m) : (len(m)+63)&^63]) // the last block's padding
			b.lens[b.n], b.sizes[b.n] = uint32(len(m)), total
			b.n++
			if b.n == nodeBatch {
				flush()
			}
			read = cut
		}
		flush()
		level = level[:out]
	}
	return level[0].Hash
}
