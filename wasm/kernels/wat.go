// Package kernels writes xetkit's WebAssembly kernels as WebAssembly text:
// BLAKE3 over four inputs at once with SIMD128, and SHA-256's block
// function. Go's wasm backend emits no SIMD, so these run beside
// xetkit.wasm, on its memory: the loader (runtime.js) instantiates
// kernels.wasm with xetkit.wasm's exported memory and hands its exports to
// Go's //go:wasmimport functions (xethash/internal/blake3,
// internal/sha256x).
//
// kernels.wat is WAT() written out by gen.go; scripts/build-wasm.sh turns it
// into bytes with wabt's wat2wasm (the npm package pinned in package.json).
// The tests run those bytes in wazero against zeebo/blake3 and crypto/sha256.
package kernels

import (
	"fmt"
	"strings"

	"github.com/xetkit/xetkit/internal/sha256x"
)

// ImportModule is the module name of the kernels' functions in
// xetkit.wasm's imports, as Go's //go:wasmimport lines spell it.
const ImportModule = "xetkit_kernels"

// The BLAKE3 message permutation (applied between rounds) and the state
// words each G call of a round mixes: four columns, then four diagonals.
var (
	blake3Perm = [16]int{2, 6, 3, 10, 7, 0, 4, 13, 1, 11, 12, 5, 9, 14, 15, 8}
	blake3G    = [8][4]int{
		{0, 4, 8, 12}, {1, 5, 9, 13}, {2, 6, 10, 14}, {3, 7, 11, 15},
		{0, 5, 10, 15}, {1, 6, 11, 12}, {2, 7, 8, 13}, {3, 4, 9, 14},
	}
	blake3IV = [4]uint32{0x6A09E667, 0xBB67AE85, 0x3C6EF372, 0xA54FF53A}
)

// Byte shuffles on v128 values holding four little-endian u32 lanes.
const (
	rotr16 = "2 3 0 1 6 7 4 5 10 11 8 9 14 15 12 13" // each lane rotated right by 16 bits
	rotr8  = "1 2 3 0 5 6 7 4 9 10 11 8 13 14 15 12" // by 8 bits
	bswap  = "3 2 1 0 7 6 5 4 11 10 9 8 15 14 13 12" // each lane's bytes reversed
	// A 4x4 transpose of u32 lanes in two steps: interleave lanes of two
	// rows, then take 64-bit halves of two interleaved rows.
	lo32 = "0 1 2 3 16 17 18 19 4 5 6 7 20 21 22 23"       // a0 b0 a1 b1
	hi32 = "8 9 10 11 24 25 26 27 12 13 14 15 28 29 30 31" // a2 b2 a3 b3
	lo64 = "0 1 2 3 4 5 6 7 16 17 18 19 20 21 22 23"       // a0 a1 b0 b1
	hi64 = "8 9 10 11 12 13 14 15 24 25 26 27 28 29 30 31" // a2 a3 b2 b3
)

// w collects the instructions of a function body, one per line.
type w struct{ b strings.Builder }

func (w *w) f(format string, args ...any) {
	w.b.WriteString("    ")
	fmt.Fprintf(&w.b, format, args...)
	w.b.WriteByte('\n')
}

// transpose writes rows a..d (v128 locals of four u32 lanes) transposed
// into out[0..3]: out[i] holds lane i of a, b, c, d.
func (w *w) transpose(a, b, c, d string, out [4]string) {
	w.f("local.get %s local.get %s i8x16.shuffle %s local.set $t0", a, b, lo32)
	w.f("local.get %s local.get %s i8x16.shuffle %s local.set $t1", a, b, hi32)
	w.f("local.get %s local.get %s i8x16.shuffle %s local.set $t2", c, d, lo32)
	w.f("local.get %s local.get %s i8x16.shuffle %s local.set $t3", c, d, hi32)
	w.f("local.get $t0 local.get $t2 i8x16.shuffle %s local.set %s", lo64, out[0])
	w.f("local.get $t0 local.get $t2 i8x16.shuffle %s local.set %s", hi64, out[1])
	w.f("local.get $t1 local.get $t3 i8x16.shuffle %s local.set %s", lo64, out[2])
	w.f("local.get $t1 local.get $t3 i8x16.shuffle %s local.set %s", hi64, out[3])
}

// rotr writes x = x >>> n on each lane of the v128 local x.
func (w *w) rotr(x string, n int) {
	switch n {
	case 16:
		w.f("local.get %s local.get %s i8x16.shuffle %s local.set %s", x, x, rotr16, x)
	case 8:
		w.f("local.get %s local.get %s i8x16.shuffle %s local.set %s", x, x, rotr8, x)
	default:
		w.f("local.get %s i32.const %d i32x4.shr_u local.get %s i32.const %d i32x4.shl v128.or local.set %s", x, n, x, 32-n, x)
	}
}

// blake3G writes one G call on state locals $va..$vd with message locals
// $mx and $my: two halves, each adding a message word and rotating by its
// own pair of distances.
func (w *w) blake3G(a, b, c, d, x, y int) {
	va, vb, vc, vd := fmt.Sprintf("$v%d", a), fmt.Sprintf("$v%d", b), fmt.Sprintf("$v%d", c), fmt.Sprintf("$v%d", d)
	for _, h := range []struct{ m, r1, r2 int }{{x, 16, 12}, {y, 8, 7}} {
		w.f("local.get %s local.get %s i32x4.add local.get $m%d i32x4.add local.set %s", va, vb, h.m, va)
		w.f("local.get %s local.get %s v128.xor local.set %s", vd, va, vd)
		w.rotr(vd, h.r1)
		w.f("local.get %s local.get %s i32x4.add local.set %s", vc, vd, vc)
		w.f("local.get %s local.get %s v128.xor local.set %s", vb, vc, vb)
		w.rotr(vb, h.r2)
	}
}

// blake3Locals declares the v128 locals of a four-lane BLAKE3 function: the
// state v0..v15, the message m0..m15, the chaining values h0..h7 and
// transpose scratch t0..t3.
func blake3Locals() string {
	var locals strings.Builder
	for _, set := range []struct {
		name string
		n    int
	}{{"v", 16}, {"m", 16}, {"h", 8}, {"t", 4}} {
		for i := 0; i < set.n; i++ {
			fmt.Fprintf(&locals, " (local $%s%d v128)", set.name, i)
		}
	}
	return locals.String()
}

// blake3Start sets every lane's chaining value to the key and opens the
// loop over blocks ($b from 0).
func (w *w) blake3Start() {
	for i := 0; i < 8; i++ {
		w.f("local.get $key i32.load offset=%d i32x4.splat local.set $h%d", 4*i, i)
	}
	w.f("i32.const 0 local.set $b")
	w.f("loop $block")
}

// loadBlocks loads the 64-byte blocks at the lane pointers ptr[0..3] into
// the v128 locals dst0..dst15, transposed so that dst_i holds word i of
// all four, passing each row through row0..row3. bigEndian reverses each
// word's bytes (SHA-256's words are big-endian, BLAKE3's little).
func (w *w) loadBlocks(ptr [4]string, row, dst string, bigEndian bool) {
	for q := 0; q < 4; q++ {
		for l := 0; l < 4; l++ {
			if bigEndian {
				// The shuffle takes only the loaded row's bytes; its second
				// operand is there to fill the instruction's form.
				w.f("local.get %s v128.load offset=%d align=1 local.get %s%d i8x16.shuffle %s local.set %s%d", ptr[l], 16*q, row, l, bswap, row, l)
			} else {
				w.f("local.get %s v128.load offset=%d align=1 local.set %s%d", ptr[l], 16*q, row, l)
			}
		}
		var out [4]string
		for i := range out {
			out[i] = fmt.Sprintf("%s%d", dst, 4*q+i)
		}
		w.transpose(row+"0", row+"1", row+"2", row+"3", out)
	}
}

// blake3Compress runs the compression on every lane: the state from h0..h7,
// the IV and v12..v15 (counter low and high, block length, flags, which
// the caller sets), then seven rounds; it leaves the new chaining values
// in v0..v7 (each v_i xor v_{i+8}).
func (w *w) blake3Compress() {
	for i := 0; i < 8; i++ {
		w.f("local.get $h%d local.set $v%d", i, i)
	}
	for i := 0; i < 4; i++ {
		w.f("v128.const i32x4 0x%08x 0x%08x 0x%08x 0x%08x local.set $v%d", blake3IV[i], blake3IV[i], blake3IV[i], blake3IV[i], 8+i)
	}
	sched := [16]int{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15}
	for r := 0; r < 7; r++ {
		w.f(";; round %d", r+1)
		for g, s := range blake3G {
			w.blake3G(s[0], s[1], s[2], s[3], sched[2*g], sched[2*g+1])
		}
		var next [16]int
		for i := range next {
			next[i] = sched[blake3Perm[i]]
		}
		sched = next
	}
	for i := 0; i < 8; i++ {
		w.f("local.get $v%d local.get $v%d v128.xor local.set $v%d", i, i+8, i)
	}
}

// blake3Store writes h0..h7 of the four lanes to out: each lane's 32
// bytes, lanes one after another.
func (w *w) blake3Store() {
	w.transpose("$h0", "$h1", "$h2", "$h3", [4]string{"$v0", "$v1", "$v2", "$v3"})
	w.transpose("$h4", "$h5", "$h6", "$h7", [4]string{"$v4", "$v5", "$v6", "$v7"})
	for l := 0; l < 4; l++ {
		w.f("local.get $out local.get $v%d v128.store offset=%d align=1", l, 32*l)
		w.f("local.get $out local.get $v%d v128.store offset=%d align=1", l+4, 32*l+16)
	}
}

// blake3x4 writes the function blake3_x4, whose doc is the comment it
// emits.
func blake3x4() string {
	var w w
	w.f("(local $ctr v128) (local $p0 i32) (local $p1 i32) (local $p2 i32) (local $p3 i32) (local $b i32) (local $fl i32)")
	w.f("block $done")
	w.f("local.get $groups i32.eqz br_if $done")
	w.f("loop $group")
	// Lane i reads input i of the group and counts from counter + i*step.
	w.f("local.get $in local.set $p0")
	w.f("local.get $p0 local.get $stride i32.add local.set $p1")
	w.f("local.get $p1 local.get $stride i32.add local.set $p2")
	w.f("local.get $p2 local.get $stride i32.add local.set $p3")
	w.f("local.get $counter i32x4.splat v128.const i32x4 0 1 2 3 local.get $step i32x4.splat i32x4.mul i32x4.add local.set $ctr")
	w.blake3Start()
	// Flags: base, plus start on the first block and end on the last.
	w.f("local.get $flags")
	w.f("local.get $start i32.const 0 local.get $b i32.eqz select i32.or")
	w.f("local.get $end i32.const 0 local.get $b i32.const 1 i32.add local.get $nblocks i32.eq select i32.or")
	w.f("local.set $fl")
	w.loadBlocks([4]string{"$p0", "$p1", "$p2", "$p3"}, "$v", "$m", false)
	w.f("local.get $ctr local.set $v12")
	w.f("v128.const i32x4 0 0 0 0 local.set $v13")
	w.f("i32.const 64 i32x4.splat local.set $v14")
	w.f("local.get $fl i32x4.splat local.set $v15")
	w.blake3Compress()
	for i := 0; i < 8; i++ {
		w.f("local.get $v%d local.set $h%d", i, i)
	}
	for l := 0; l < 4; l++ {
		w.f("local.get $p%d i32.const 64 i32.add local.set $p%d", l, l)
	}
	w.f("local.get $b i32.const 1 i32.add local.tee $b local.get $nblocks i32.lt_u br_if $block")
	w.f("end")
	w.blake3Store()
	w.f("local.get $out i32.const 128 i32.add local.set $out")
	w.f("local.get $in local.get $stride i32.const 4 i32.mul i32.add local.set $in")
	w.f("local.get $counter local.get $step i32.const 4 i32.mul i32.add local.set $counter")
	w.f("local.get $groups i32.const 1 i32.sub local.tee $groups br_if $group")
	w.f("end")
	w.f("end")
	return `
  ;; blake3_x4 runs BLAKE3's compression over 4*groups inputs, four at a
  ;; time (one per v128 lane), and writes each input's 32-byte chaining value
  ;; to out, in input order. Input i starts at in + i*stride and is nblocks
  ;; 64-byte blocks; its counter is counter + i*step (high word 0); every
  ;; block is compressed with block length 64 and flags, plus start on its
  ;; first block and end on its last. key points at the 8 key words.
  ;;   leaves:  stride 1024, nblocks 16, step 1, start CHUNK_START, end CHUNK_END
  ;;   parents: stride 64, nblocks 1, counter 0, step 0, flags with PARENT
  ;; out may equal in when stride >= 32: each group reads all its blocks
  ;; before it writes.
  (func (export "blake3_x4")
    (param $key i32) (param $in i32) (param $stride i32) (param $nblocks i32)
    (param $counter i32) (param $step i32) (param $flags i32) (param $start i32)
    (param $end i32) (param $out i32) (param $groups i32)
   ` + blake3Locals() + "\n" + w.b.String() + "  )\n"
}

// blake3Roots writes the function blake3_roots_x4.
func blake3Roots() string {
	var w w
	w.f("(local $q0 i32) (local $q1 i32) (local $q2 i32) (local $q3 i32)")
	w.f("(local $n0 i32) (local $n1 i32) (local $n2 i32) (local $n3 i32)")
	w.f("(local $len v128) (local $nb v128) (local $last v128) (local $live v128) (local $b i32) (local $maxb i32)")
	w.f("block $done")
	w.f("local.get $groups i32.eqz br_if $done")
	w.f("loop $group")
	// Lane l: message 4g+l at in + l*stride, its length, its block count
	// (at least one: the empty message is one empty block).
	for l := 0; l < 4; l++ {
		w.f("local.get $lens i32.load offset=%d i32.const 63 i32.add i32.const 6 i32.shr_u local.tee $n%d i32.const 1 local.get $n%d i32.const 1 i32.gt_u select local.set $n%d", 4*l, l, l, l)
	}
	w.f("local.get $lens v128.load align=4 local.set $len")
	w.f("local.get $n0 i32x4.splat local.get $n1 i32x4.replace_lane 1 local.get $n2 i32x4.replace_lane 2 local.get $n3 i32x4.replace_lane 3 local.set $nb")
	w.f("local.get $n0 local.get $n1 local.get $n0 local.get $n1 i32.gt_u select local.tee $maxb")
	w.f("local.get $n2 local.get $maxb local.get $n2 i32.gt_u select local.tee $maxb")
	w.f("local.get $n3 local.get $maxb local.get $n3 i32.gt_u select local.set $maxb")
	w.blake3Start()
	// A lane past its last block reads its last block again (always inside
	// its message) and keeps its chaining value.
	for l := 0; l < 4; l++ {
		w.f("local.get $in local.get $stride i32.const %d i32.mul i32.add local.get $b local.get $n%d i32.const 1 i32.sub local.get $b local.get $n%d i32.lt_u select i32.const 6 i32.shl i32.add local.set $q%d", l, l, l, l)
	}
	w.loadBlocks([4]string{"$q0", "$q1", "$q2", "$q3"}, "$v", "$m", false)
	w.f("local.get $nb local.get $b i32x4.splat i32x4.gt_u local.set $live")
	w.f("local.get $nb local.get $b i32.const 1 i32.add i32x4.splat i32x4.eq local.set $last")
	w.f("v128.const i32x4 0 0 0 0 local.set $v12")
	w.f("v128.const i32x4 0 0 0 0 local.set $v13")
	// Block length: 64, or on a lane's last block what is left of it.
	w.f("local.get $len local.get $b i32.const 6 i32.shl i32x4.splat i32x4.sub i32.const 64 i32x4.splat local.get $last v128.bitselect local.set $v14")
	// Flags: base, start on block 0, end and root on a lane's last block.
	w.f("local.get $flags i32.const 1 i32.const 0 local.get $b i32.eqz select i32.or i32x4.splat")
	w.f("local.get $last i32.const 10 i32x4.splat v128.and v128.or local.set $v15")
	w.blake3Compress()
	for i := 0; i < 8; i++ {
		w.f("local.get $v%d local.get $h%d local.get $live v128.bitselect local.set $h%d", i, i, i)
	}
	w.f("local.get $b i32.const 1 i32.add local.tee $b local.get $maxb i32.lt_u br_if $block")
	w.f("end")
	w.blake3Store()
	w.f("local.get $out i32.const 128 i32.add local.set $out")
	w.f("local.get $in local.get $stride i32.const 4 i32.mul i32.add local.set $in")
	w.f("local.get $lens i32.const 16 i32.add local.set $lens")
	w.f("local.get $groups i32.const 1 i32.sub local.tee $groups br_if $group")
	w.f("end")
	w.f("end")
	return `
  ;; blake3_roots_x4 hashes 4*groups messages of one BLAKE3 chunk each (0 to
  ;; 1024 bytes), four at a time, and writes each 32-byte hash to out, in
  ;; order. Message i is lens[i] (u32) bytes at in + i*stride, zero-padded
  ;; to whole 64-byte blocks (at least one); key points at the 8 key words
  ;; and flags is the base flags (KEYED_HASH for a keyed hash; CHUNK_START,
  ;; CHUNK_END and ROOT are added here). Merkle nodes are such messages.
  (func (export "blake3_roots_x4")
    (param $key i32) (param $flags i32) (param $in i32) (param $stride i32)
    (param $lens i32) (param $out i32) (param $groups i32)
   ` + blake3Locals() + "\n" + w.b.String() + "  )\n"
}

// sha256Blocks writes the function sha256_blocks. It takes the blocks in
// groups of up to four: their message schedules, which depend only on
// their own block, run side by side in SIMD lanes into the scratch area
// as W[t]+K[t] (lane b of the 16 bytes at 16t), and then each block's
// rounds, which depend on the block before, run in turn with scalar
// code. A group of fewer than four fills the spare lanes with its last
// block and ignores them.
func sha256Blocks() string {
	var w w
	var locals strings.Builder
	for i := 0; i < 8; i++ {
		fmt.Fprintf(&locals, " (local $s%d i32) (local $a%d i32)", i, i)
	}
	for i := 0; i < 16; i++ {
		fmt.Fprintf(&locals, " (local $w%d v128)", i)
	}
	for i := 0; i < 4; i++ {
		fmt.Fprintf(&locals, " (local $p%d i32) (local $r%d v128) (local $t%d v128)", i, i, i)
	}
	locals.WriteString(" (local $lanes i32) (local $wk i32) (local $x0 i32) (local $x1 i32)")

	w.f("local.get $n i32.eqz if return end")
	for i := 0; i < 8; i++ {
		w.f("local.get $state i32.load offset=%d local.set $s%d", 4*i, i)
	}
	w.f("loop $group")
	// The group's blocks: p_b is block b, or the last one where the
	// group has fewer than b+1.
	w.f("local.get $n i32.const 4 local.get $n i32.const 4 i32.lt_u select local.set $lanes")
	w.f("local.get $in local.set $p0")
	for b := 1; b < 4; b++ {
		w.f("local.get $in i32.const %d i32.add local.get $p%d local.get $lanes i32.const %d i32.gt_u select local.set $p%d", 64*b, b-1, b, b)
	}
	// W[0..15] of every block: w_i holds word i of all four.
	w.loadBlocks([4]string{"$p0", "$p1", "$p2", "$p3"}, "$r", "$w", true)
	for t := 0; t < 64; t++ {
		wt := fmt.Sprintf("$w%d", t%16)
		if t >= 16 {
			// W[t] = σ1(W[t-2]) + W[t-7] + σ0(W[t-15]) + W[t-16], in place.
			// SIMD has no lane rotation: each rotation's two halves are
			// shifts, xored in with the rest.
			w2, w7, w15 := fmt.Sprintf("$w%d", (t-2)%16), fmt.Sprintf("$w%d", (t-7)%16), fmt.Sprintf("$w%d", (t-15)%16)
			w.f("local.get %s", wt)
			w.f("local.get %s i32.const 17 i32x4.shr_u local.get %s i32.const 15 i32x4.shl v128.xor", w2, w2)
			w.f("local.get %s i32.const 19 i32x4.shr_u v128.xor local.get %s i32.const 13 i32x4.shl v128.xor", w2, w2)
			w.f("local.get %s i32.const 10 i32x4.shr_u v128.xor i32x4.add", w2)
			w.f("local.get %s i32x4.add", w7)
			w.f("local.get %s i32.const 7 i32x4.shr_u local.get %s i32.const 25 i32x4.shl v128.xor", w15, w15)
			w.f("local.get %s i32.const 18 i32x4.shr_u v128.xor local.get %s i32.const 14 i32x4.shl v128.xor", w15, w15)
			w.f("local.get %s i32.const 3 i32x4.shr_u v128.xor i32x4.add local.set %s", w15, wt)
		}
		k := sha256x.K[t]
		w.f("local.get $scratch local.get %s v128.const i32x4 0x%08x 0x%08x 0x%08x 0x%08x i32x4.add v128.store offset=%d", wt, k, k, k, k, 16*t)
	}
	// The rounds of each block in turn, $wk at its lane of the scratch.
	w.f("local.get $scratch local.set $wk")
	w.f("loop $block")
	for i := 0; i < 8; i++ {
		w.f("local.get $s%d local.set $a%d", i, i)
	}
	w.f("local.get $a1 local.get $a2 i32.xor local.set $x1") // b^c of round 0
	// The working variables a..h rotate by renaming: in round t, a is
	// $a[(8-t)%8], b the next, and so on.
	for t := 0; t < 64; t++ {
		v := func(k int) string { return fmt.Sprintf("$a%d", ((k-t)%8+8)%8) }
		a, b, d, e, f, g, h := v(0), v(1), v(3), v(4), v(5), v(6), v(7) // c enters Maj as last round's a^b
		// h += Σ1(e) + Ch(e,f,g) + W[t]+K[t]; d += h; h += Σ0(a) + Maj(a,b,c).
		w.f("local.get %s local.get %s i32.const 6 i32.rotr local.get %s i32.const 11 i32.rotr i32.xor local.get %s i32.const 25 i32.rotr i32.xor i32.add", h, e, e, e)
		w.f("local.get %s local.get %s local.get %s i32.xor i32.and local.get %s i32.xor i32.add", e, f, g, g)
		w.f("local.get $wk i32.load offset=%d i32.add local.tee %s", 16*t, h)
		w.f("local.get %s i32.add local.set %s", d, d)
		// Maj(a,b,c) = b ^ ((a^b) & (b^c)), and this round's b^c is the
		// last round's a^b: one operation fewer per round.
		ab, bc := fmt.Sprintf("$x%d", t%2), fmt.Sprintf("$x%d", (t+1)%2)
		w.f("local.get %s local.get %s i32.const 2 i32.rotr local.get %s i32.const 13 i32.rotr i32.xor local.get %s i32.const 22 i32.rotr i32.xor i32.add", h, a, a, a)
		w.f("local.get %s local.get %s local.get %s i32.xor local.tee %s local.get %s i32.and i32.xor i32.add local.set %s", b, a, b, ab, bc, h)
	}
	for i := 0; i < 8; i++ {
		w.f("local.get $s%d local.get $a%d i32.add local.set $s%d", i, i, i)
	}
	w.f("local.get $wk i32.const 4 i32.add local.tee $wk local.get $scratch local.get $lanes i32.const 2 i32.shl i32.add i32.lt_u br_if $block")
	w.f("end")
	w.f("local.get $in local.get $lanes i32.const 6 i32.shl i32.add local.set $in")
	w.f("local.get $n local.get $lanes i32.sub local.tee $n br_if $group")
	w.f("end")
	for i := 0; i < 8; i++ {
		w.f("local.get $state local.get $s%d i32.store offset=%d", i, 4*i)
	}
	return `
  ;; sha256_blocks runs SHA-256's compression over n 64-byte blocks at in,
  ;; updating the 8 state words at state (native u32s, H0 first). scratch
  ;; is 1 KiB it may overwrite.
  (func (export "sha256_blocks") (param $state i32) (param $in i32) (param $n i32) (param $scratch i32)
   ` + locals.String() + "\n" + w.b.String() + "  )\n"
}

// WAT returns the text of kernels.wasm.
func WAT() string {
	return `;; Generated by gen.go (package kernels); do not edit.
;; xetkit's WebAssembly kernels. They import the memory of the xetkit.wasm
;; instance they serve and work on it in place; every pointer is an address
;; in it, and Go guarantees the ranges.
(module
  (import "env" "memory" (memory 0))
` + blake3x4() + blake3Roots() + sha256Blocks() + ")\n"
}

//go:generate go run gen.go
