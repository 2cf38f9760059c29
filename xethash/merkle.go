package xethash

import "strconv"

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
	buf = buf[:0]
	var total uint64
	for _, c := range children {
		buf = c.Hash.appendString(buf)
		buf = append(buf, " : "...)
		buf = strconv.AppendUint(buf, c.Size, 10)
		buf = append(buf, '\n')
		total += c.Size
	}
	return Entry{Hash: internalNodePool.sum(buf), Size: total}, buf
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
