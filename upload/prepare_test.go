package upload

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/xetkit/xetkit/chunking"
	"github.com/xetkit/xetkit/internal/testref"
	"github.com/xetkit/xetkit/shard"
	"github.com/xetkit/xetkit/xethash"
	"github.com/xetkit/xetkit/xorb"
)

func prepData(n int, seed uint64) []byte {
	r := rand.New(rand.NewPCG(seed, seed^0x9e37))
	b := make([]byte, n)
	for i := 0; i+8 <= n; i += 8 {
		v := r.Uint64()
		for k := 0; k < 8; k++ {
			b[i+k] = byte(v >> (8 * k))
		}
	}
	return b
}

// prepared runs data through a Preparer fed by Write in pieces of the given
// sizes (cycled), keeping a copy of every sealed xorb.
func prepareWrite(t *testing.T, data []byte, pieces []int) (*Prepared, [][]byte) {
	t.Helper()
	p := NewPreparer()
	var xorbs [][]byte
	p.OnXorb = func(b *xorb.Built) error {
		xorbs = append(xorbs, bytes.Clone(b.Bytes))
		return nil
	}
	for off, i := 0, 0; off < len(data); i++ {
		n := min(pieces[i%len(pieces)], len(data)-off)
		if _, err := p.Write(data[off : off+n]); err != nil {
			t.Fatal(err)
		}
		off += n
	}
	res, err := p.Finish()
	if err != nil {
		t.Fatal(err)
	}
	return res, xorbs
}

// prepareScan feeds data the other way: Scan, EncodeChunks on batches of at
// most batch chunks, AddRecords.
func prepareScan(t *testing.T, data []byte, piece, batch int) (*Prepared, [][]byte) {
	t.Helper()
	p := NewPreparer()
	p.SizeHint = int64(len(data)) // must change nothing but memory use
	p.ExternalSHA256 = true       // given below
	var xorbs [][]byte
	p.OnXorb = func(b *xorb.Built) error {
		xorbs = append(xorbs, bytes.Clone(b.Bytes))
		return nil
	}
	var enc xorb.Encoder
	pos := int64(0) // stream offset of the next chunk to add
	add := func(lens []int) {
		for len(lens) > 0 {
			k := min(batch, len(lens))
			total := 0
			for _, n := range lens[:k] {
				total += n
			}
			hashes, recs, recLens, err := EncodeChunks(&enc, data[pos:pos+int64(total)], lens[:k], nil, nil, nil)
			if err != nil {
				t.Fatal(err)
			}
			records := make([][]byte, k)
			for i, n := range recLens {
				records[i], recs = recs[:n], recs[n:]
			}
			if err := p.AddRecords(hashes, lens[:k], records); err != nil {
				t.Fatal(err)
			}
			pos += int64(total)
			lens = lens[k:]
		}
	}
	for off := 0; off < len(data); off += piece {
		lens, err := p.Scan(data[off:min(off+piece, len(data))])
		if err != nil {
			t.Fatal(err)
		}
		add(append([]int(nil), lens...))
	}
	lens, err := p.ScanFinish()
	if err != nil {
		t.Fatal(err)
	}
	add(append([]int(nil), lens...))
	p.SetSHA256(sha256.Sum256(data))
	res, err := p.Finish()
	if err != nil {
		t.Fatal(err)
	}
	return res, xorbs
}

// reconstruct rebuilds the file from its terms and the sealed xorbs, and
// checks each xorb on the way.
func reconstruct(t *testing.T, res *Prepared, xorbs [][]byte) []byte {
	t.Helper()
	if len(xorbs) != len(res.Xorbs) {
		t.Fatalf("%d xorbs handed out, result lists %d", len(xorbs), len(res.Xorbs))
	}
	parsed := map[xethash.Hash]*xorb.Xorb{}
	for i, b := range xorbs {
		x, err := xorb.Parse(b)
		if err != nil {
			t.Fatalf("xorb %d: %v", i, err)
		}
		if err := x.Verify(); err != nil {
			t.Fatalf("xorb %d: %v", i, err)
		}
		info := res.Xorbs[i]
		if x.Footer.Hash != info.Hash || len(b) != info.Size || x.Footer.NumChunks() != info.Chunks {
			t.Fatalf("xorb %d does not match its description %+v", i, info)
		}
		if len(b) > xorb.MaxSize || info.Chunks > xorb.MaxChunks {
			t.Fatalf("xorb %d is over the limits: %d bytes, %d chunks", i, len(b), info.Chunks)
		}
		parsed[info.Hash] = x
	}
	var out []byte
	for _, term := range res.Terms {
		x := parsed[term.Xorb]
		if x == nil {
			t.Fatalf("term refers to unknown xorb %s", term.Xorb)
		}
		start := len(out)
		for i := term.ChunkStart; i < term.ChunkEnd; i++ {
			var err error
			if out, err = x.Chunk(out, int(i)); err != nil {
				t.Fatal(err)
			}
		}
		if uint64(len(out)-start) != term.UnpackedBytes {
			t.Fatalf("term %+v: %d bytes", term, len(out)-start)
		}
	}
	return out
}

func checkPrepared(t *testing.T, data []byte, res *Prepared, xorbs [][]byte) {
	t.Helper()
	var want []xethash.Entry
	for _, c := range chunking.Split(data) {
		want = append(want, xethash.Entry{Hash: xethash.Chunk(c), Size: uint64(len(c))})
	}
	if len(res.Chunks) != len(want) {
		t.Fatalf("%d chunks, want %d", len(res.Chunks), len(want))
	}
	for i := range want {
		if res.Chunks[i] != want[i] {
			t.Fatalf("chunk %d: %v, want %v", i, res.Chunks[i], want[i])
		}
	}
	if res.FileHash != xethash.File(want) {
		t.Fatalf("file hash %s, want %s", res.FileHash, xethash.File(want))
	}
	sum := sha256.Sum256(data)
	if res.SHA256 != hex.EncodeToString(sum[:]) || res.Size != int64(len(data)) {
		t.Fatalf("sha256 %s size %d", res.SHA256, res.Size)
	}
	if got := reconstruct(t, res, xorbs); !bytes.Equal(got, data) {
		t.Fatalf("terms rebuild %d bytes that differ from the %d of the file", len(got), len(data))
	}
	s, err := shard.Parse(res.Shard)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range shard.ValidateUpload(s, time.Now()) {
		if f.Severity == shard.Error {
			t.Errorf("shard finding: %+v", f)
		}
	}
	if s.Footer != nil || len(s.Files) != 1 || s.Files[0].Hash != res.FileHash || len(s.Xorbs) != len(res.Xorbs) {
		t.Fatalf("shard does not describe the file: footer %v, %d files, %d xorbs", s.Footer != nil, len(s.Files), len(s.Xorbs))
	}
	if s.Files[0].SHA256 == nil || s.Files[0].SHA256.String() != res.SHA256 {
		t.Fatalf("shard SHA-256 %v, want %s", s.Files[0].SHA256, res.SHA256)
	}
}

func TestPrepareWrite(t *testing.T) {
	data := prepData(9<<20+777, 1)
	res, xorbs := prepareWrite(t, data, []int{1, 100000, 3 << 20, 65536})
	checkPrepared(t, data, res, xorbs)
	if len(res.Xorbs) != 1 || len(res.Terms) != 1 {
		t.Fatalf("9 MiB of random data: %d xorbs, %d terms, want 1 and 1", len(res.Xorbs), len(res.Terms))
	}
}

// Both ways of feeding a Preparer give the same xorbs and shard.
func TestPrepareScanEqualsWrite(t *testing.T) {
	a := prepData(3<<20, 2)
	data := append(append(append([]byte(nil), a...), prepData(2<<20+5, 3)...), a...)
	w, wx := prepareWrite(t, data, []int{8 << 20})
	for _, c := range []struct{ piece, batch int }{{8 << 20, 1000}, {1 << 20, 7}, {100000, 1}} {
		s, sx := prepareScan(t, data, c.piece, c.batch)
		checkPrepared(t, data, s, sx)
		if !bytes.Equal(s.Shard, w.Shard) || len(sx) != len(wx) {
			t.Fatalf("piece %d batch %d: shard or xorb count differs from Write's", c.piece, c.batch)
		}
		for i := range sx {
			if !bytes.Equal(sx[i], wx[i]) {
				t.Fatalf("piece %d batch %d: xorb %d differs from Write's", c.piece, c.batch, i)
			}
		}
	}
}

// A repeated region is stored once and referenced twice.
func TestPrepareDedupe(t *testing.T) {
	a := prepData(4<<20, 4)
	data := append(append(append([]byte(nil), a...), prepData(1<<20, 5)...), a...)
	res, xorbs := prepareWrite(t, data, []int{1 << 20})
	checkPrepared(t, data, res, xorbs)
	stored := 0
	for _, x := range res.Xorbs {
		stored += x.Chunks
	}
	if stored >= len(res.Chunks) {
		t.Fatalf("%d chunks stored for %d in the file: nothing deduplicated", stored, len(res.Chunks))
	}
	zeros := make([]byte, 1<<20)
	res, xorbs = prepareWrite(t, zeros, []int{1 << 20})
	checkPrepared(t, zeros, res, xorbs)
	if res.Xorbs[0].Chunks != 1 {
		t.Fatalf("1 MiB of zeros stored as %d chunks, want 1", res.Xorbs[0].Chunks)
	}
}

// More than a xorb's worth of data is split into xorbs within the limits.
func TestPrepareSeveralXorbs(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: this test prepares 70 MiB (scripts/test.sh runs it)")
	}
	data := prepData(70<<20, 6)
	p := NewPreparer()
	p.Mode = xorb.OnlyNone // incompressible data: skip the futile compression
	var xorbs [][]byte
	p.OnXorb = func(b *xorb.Built) error {
		xorbs = append(xorbs, bytes.Clone(b.Bytes))
		return nil
	}
	if _, err := p.Write(data); err != nil {
		t.Fatal(err)
	}
	res, err := p.Finish()
	if err != nil {
		t.Fatal(err)
	}
	checkPrepared(t, data, res, xorbs)
	if len(res.Xorbs) != 2 || len(res.Terms) != 2 {
		t.Fatalf("70 MiB: %d xorbs and %d terms, want 2 and 2", len(res.Xorbs), len(res.Terms))
	}
	if len(xorbs[0]) < xorb.MaxSize-(xorb.MaxChunkSize+1024) {
		t.Fatalf("first xorb is %d bytes: sealed before it was full", len(xorbs[0]))
	}
}

func TestPrepareEmpty(t *testing.T) {
	for _, scan := range []bool{false, true} {
		var res *Prepared
		var xorbs [][]byte
		if scan {
			res, xorbs = prepareScan(t, nil, 1, 1)
		} else {
			res, xorbs = prepareWrite(t, nil, []int{1})
		}
		checkPrepared(t, nil, res, xorbs)
		if len(xorbs) != 0 || len(res.Terms) != 0 || !res.FileHash.IsZero() {
			t.Fatalf("empty file: %d xorbs, %d terms, hash %s", len(xorbs), len(res.Terms), res.FileHash)
		}
	}
}

// The shard of the reference file, described the way a Preparer describes
// it, is the reference implementation's upload shard byte for byte.
func TestPrepareReferenceShard(t *testing.T) {
	chunks := testref.Chunks(t)
	want := testref.Read(t, "ev-population.csv.shard.verification-no-footer")
	xh := xethash.Xorb(chunks)
	if xh.String() != testref.XorbHash {
		t.Fatalf("xorb hash %s", xh)
	}
	res := &Prepared{
		Size:     testref.FileSize,
		FileHash: xethash.File(chunks),
		SHA256:   testref.SHA256,
		Xorbs:    []PreparedXorb{{Hash: xh, Chunks: len(chunks), UnpackedBytes: testref.FileSize, Entries: chunks}},
		Terms:    []PreparedTerm{{Xorb: xh, ChunkStart: 0, ChunkEnd: uint32(len(chunks)), UnpackedBytes: testref.FileSize}},
	}
	got, err := res.BuildShard()
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		for i := range min(len(got), len(want)) {
			if got[i] != want[i] {
				t.Fatalf("differs from the reference at byte %d (lengths %d, %d)", i, len(got), len(want))
			}
		}
		t.Fatalf("lengths %d and %d", len(got), len(want))
	}
}

func TestPrepareMisuse(t *testing.T) {
	data := prepData(300000, 7)
	var enc xorb.Encoder

	p := NewPreparer()
	lens, err := p.Scan(data)
	if err != nil || len(lens) == 0 {
		t.Fatalf("scan: %v, %d chunks", err, len(lens))
	}
	if _, err := p.Write(data); err == nil {
		t.Fatal("Write after Scan accepted")
	}
	if _, err := p.Finish(); err == nil {
		t.Fatal("error not sticky")
	}

	p = NewPreparer()
	lens, _ = p.Scan(data)
	n := lens[0]
	hashes, recs, _, err := EncodeChunks(&enc, data[:n], []int{n}, nil, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := p.AddRecords(hashes, []int{n + 1}, [][]byte{recs}); err == nil {
		t.Fatal("record whose size disagrees accepted")
	}

	p = NewPreparer()
	lens, _ = p.Scan(data)
	bad := bytes.Clone(recs)
	bad[0] = 9 // version
	if err := p.AddRecords(hashes, lens[:1], [][]byte{bad}); err == nil {
		t.Fatal("record with a bad header accepted")
	}

	p = NewPreparer()
	p.Scan(data)
	if _, err := p.Finish(); err == nil {
		t.Fatal("Finish before ScanFinish accepted")
	}

	p = NewPreparer()
	p.Scan(data)
	p.ScanFinish()
	if _, err := p.Finish(); err == nil {
		t.Fatal("Finish with chunks scanned but not added accepted")
	}
	if err := p.AddRecords(make([]xethash.Hash, 99), make([]int, 99), make([][]byte, 99)); err == nil {
		t.Fatal("more records than chunks scanned accepted")
	}

	if _, _, _, err := EncodeChunks(&enc, data[:10], []int{11}, nil, nil, nil); err == nil {
		t.Fatal("lengths past the data accepted")
	}
	if _, _, _, err := EncodeChunks(&enc, data[:10], []int{9}, nil, nil, nil); err == nil {
		t.Fatal("bytes left over accepted")
	}

	p = NewPreparer()
	p.ExternalSHA256 = true
	p.Write(data)
	if _, err := p.Finish(); err == nil {
		t.Fatal("Finish without the external SHA-256 accepted")
	}

	stop := errors.New("stop")
	p = NewPreparer()
	p.OnXorb = func(*xorb.Built) error { return stop }
	p.Write(data)
	if _, err := p.Finish(); !errors.Is(err, stop) {
		t.Fatalf("OnXorb's error: got %v", err)
	}
	if _, err := p.Write(data); !errors.Is(err, stop) {
		t.Fatalf("after OnXorb's error: got %v", err)
	}
}
