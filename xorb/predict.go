package xorb

import (
	"encoding/binary"
	"math"
	"math/bits"
)

// predictSample is how much of a chunk Auto gives the predictor. The
// reference runs it on one whole chunk per 32; a prefix of every chunk
// costs less still (an eighth of a 64 KiB chunk), keeps no state from one
// chunk to the next, so the choice never depends on how chunks are batched,
// and agrees with the whole chunk's answer on text, float32 and random data.
const predictSample = 8 << 10

// byteGroupingPays predicts, from data alone and without compressing it,
// whether byte grouping before LZ4 (§7.4.3) will compress data better than
// LZ4 alone. It is the reference client's predictor, so that both clients
// choose the same scheme for the same chunk:
//
// For each of the four byte positions within a 4-byte group it counts how
// many bytes have 0 to 8 bits set. Data made of 4-byte values (float32
// weights, int32 tables) has positions whose counts differ from the
// others'; text and random bytes have four alike. A position differs when
// the Kullback-Leibler divergence of its counts from the pooled counts
// (every bin starting at one) exceeds 0.02. A position with an empty bin
// takes no part: the reference's arithmetic turns its divergence into NaN
// (0·ln 0), which its maximum then skips.
func byteGroupingPays(data []byte) bool {
	hist := popcountHistogram(data)
	var pooled [9]float64
	var totals [4]float64
	all := 0.0
	for j := range pooled {
		pooled[j] = 1
	}
	for p := range hist {
		for j, c := range hist[p] {
			pooled[j] += float64(c)
			totals[p] += float64(c)
		}
		all += totals[p]
	}
	most := 0.0
	for p := range hist {
		kl := 0.0
		for j, c := range hist[p] {
			if c == 0 || totals[p] == 0 {
				kl = math.NaN()
				break
			}
			x := float64(c) / totals[p]
			kl += x * math.Log(x/(pooled[j]/all))
		}
		if !math.IsNaN(kl) {
			most = max(most, kl)
		}
	}
	return most > 0.02
}

// popcountHistogram counts, for each byte position p within a 4-byte group,
// how many bytes of data at that position have each number of bits set.
//
// Eight bytes at a time: a SWAR popcount leaves each byte's count in that
// byte, and positions 0 and 1 (2 and 3) are counted as one pair index
// c0 + 9·c1 into an 81-bin table, so there are four table increments per
// eight bytes, spread over four tables so that neighbouring increments do
// not wait on each other.
func popcountHistogram(data []byte) [4][9]uint32 {
	var pairs [4][81]uint32 // positions 0+1 and 2+3, each twice
	i := 0
	for ; i+8 <= len(data); i += 8 {
		w := binary.LittleEndian.Uint64(data[i:])
		w -= (w >> 1) & 0x5555555555555555
		w = (w & 0x3333333333333333) + ((w >> 2) & 0x3333333333333333)
		w = (w + (w >> 4)) & 0x0f0f0f0f0f0f0f0f
		z := w&0x00ff00ff00ff00ff + 9*((w>>8)&0x00ff00ff00ff00ff)
		pairs[0][z&0xffff]++
		pairs[1][(z>>16)&0xffff]++
		pairs[2][(z>>32)&0xffff]++
		pairs[3][z>>48]++
	}
	var hist [4][9]uint32
	for k := range 81 {
		lo, hi := k%9, k/9
		hist[0][lo] += pairs[0][k] + pairs[2][k]
		hist[1][hi] += pairs[0][k] + pairs[2][k]
		hist[2][lo] += pairs[1][k] + pairs[3][k]
		hist[3][hi] += pairs[1][k] + pairs[3][k]
	}
	for ; i < len(data); i++ {
		hist[i%4][bits.OnesCount8(data[i])]++
	}
	return hist
}
