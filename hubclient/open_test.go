//go:build !js

package hubclient_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"math/rand/v2"
	"net/http"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/xetkit/xetkit/cas"
	"github.com/xetkit/xetkit/hub"
	"github.com/xetkit/xetkit/hubclient"
)

// openFixture commits a file of n random bytes in xorbs of xorbSize
// bytes, so that it spans several xorbs, and returns it with the hub.
func openFixture(t *testing.T, n, xorbSize int, front func(w http.ResponseWriter, r *http.Request, h *hub.Hub) bool) (*hub.Hub, *hubclient.Client, []byte) {
	t.Helper()
	if front == nil {
		front = func(http.ResponseWriter, *http.Request, *hub.Hub) bool { return false }
	}
	h, srv := startHubBehind(t, front)
	data := randomBytes(91, n)
	c := newClient(srv)
	c.XorbSize = xorbSize
	commitFile(t, c, "big.bin", data)
	return h, newClient(srv), data
}

// Reading the start of a file that spans several xorbs moves a small,
// bounded number of xorb bytes, and reads near it move none.
func TestOpenReadsOnlyWhatItNeeds(t *testing.T) {
	const size = 40 << 20
	var footers atomic.Int64 // footer requests: suffix ranges of xorbs
	h, c, data := openFixture(t, size, 8<<20, func(_ http.ResponseWriter, r *http.Request, _ *hub.Hub) bool {
		if xorbPart(r) == "footer" {
			footers.Add(1)
		}
		return false
	})
	ctx := context.Background()
	f, info, err := c.Open(ctx, "big.bin")
	if err != nil {
		t.Fatal(err)
	}
	if f.Size() != size || info.XetHash.IsZero() {
		t.Fatalf("size %d, hash %s; want %d and a xet file", f.Size(), info.XetHash, size)
	}
	terms, err := c.Terms(ctx, info.XetHash)
	if err != nil {
		t.Fatal(err)
	}
	xorbs := map[string]bool{}
	for _, tm := range terms {
		xorbs[tm.Xorb.String()] = true
	}
	if len(xorbs) < 2 {
		t.Fatalf("the file is in %d xorb(s); the test wants several", len(xorbs))
	}
	before := h.Stats().XorbBytesServed
	p := make([]byte, 100<<10)
	if n, err := f.ReadAt(p, 0); n != len(p) || err != nil {
		t.Fatalf("ReadAt: %d, %v", n, err)
	}
	if !bytes.Equal(p, data[:len(p)]) {
		t.Fatal("the first 100 KiB differ")
	}
	moved := h.Stats().XorbBytesServed - before
	t.Logf("first 100 KiB of a %d MiB file in %d xorbs: %d xorb bytes served", size>>20, len(xorbs), moved)
	// One window rounded out to whole chunks (at most 128 KiB each side)
	// and the footers (about 50 bytes a chunk of the file): nothing like
	// the file, nor even one xorb.
	if limit := int64(cas.FileWindow + 256<<10 + 64*size/(32<<10)); moved > limit || moved >= 2<<20 {
		t.Errorf("%d xorb bytes served for 100 KiB, want at most %d (and < 2 MiB)", moved, limit)
	}
	// A parser reading field by field near what was read: no more fetches.
	before = h.Stats().XorbBytesServed
	reconstructions := h.Stats().Reconstructions
	for off := int64(100 << 10); off < cas.FileWindow-16; off += 997 {
		var b [16]byte
		if _, err := f.ReadAt(b[:], off); err != nil || !bytes.Equal(b[:], data[off:off+16]) {
			t.Fatalf("read at %d: %v or wrong bytes", off, err)
		}
	}
	if moved, recon := h.Stats().XorbBytesServed-before, h.Stats().Reconstructions-reconstructions; moved != 0 || recon != 0 {
		t.Errorf("small reads inside a kept window: %d xorb bytes, %d reconstructions; want none", moved, recon)
	}
	// A read elsewhere: the file's chunk list was checked by the first
	// read and is kept, so only the range's reconstruction, its chunks
	// and the footer of its xorb are fetched.
	before, reconstructions, footersBefore := h.Stats().XorbBytesServed, h.Stats().Reconstructions, footers.Load()
	var b [100]byte
	off := int64(size / 2)
	if _, err := f.ReadAt(b[:], off); err != nil || !bytes.Equal(b[:], data[off:off+100]) {
		t.Fatalf("read at %d: %v or wrong bytes", off, err)
	}
	moved, recon, footerReqs := h.Stats().XorbBytesServed-before, h.Stats().Reconstructions-reconstructions, footers.Load()-footersBefore
	t.Logf("100 bytes in the middle: %d xorb bytes served, %d reconstructions, %d footer requests", moved, recon, footerReqs)
	if recon != 1 || footerReqs > 2 || moved > cas.FileWindow+256<<10+64<<10 {
		t.Errorf("a read elsewhere: %d reconstructions, %d footer requests, %d xorb bytes; want 1, at most 2 (one xorb's), at most a window and a footer", recon, footerReqs, moved)
	}
}

// Reads at random offsets and of random lengths (small ones through the
// windows, large ones streamed, some past the end, several at once) give
// the file's bytes, and the kept bytes stay within their bound.
func TestOpenRandomReads(t *testing.T) {
	const size = 6<<20 + 12345
	_, c, data := openFixture(t, size, 2<<20, nil)
	f, _, err := c.Open(context.Background(), "big.bin")
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	var failed atomic.Int32
	for g := range 4 {
		wg.Go(func() {
			r := rand.New(rand.NewPCG(uint64(g), 7))
			for i := 0; i < 40 && failed.Load() == 0; i++ {
				off := r.Int64N(size + 1000)
				n := r.IntN(64 << 10)
				if i%8 == 0 {
					n = cas.FileBigRead + r.IntN(2<<20) // streamed
				}
				p := make([]byte, n)
				got, err := f.ReadAt(p, off)
				end := min(off+int64(n), size)
				want := max(end-off, 0)
				if int64(got) != want || (got < n && err != io.EOF) || (got == n && err != nil) {
					t.Errorf("ReadAt(%d bytes at %d): %d, %v; want %d bytes", n, off, got, err, want)
					failed.Add(1)
					return
				}
				if want > 0 && !bytes.Equal(p[:got], data[off:end]) {
					t.Errorf("ReadAt(%d bytes at %d): wrong bytes", n, off)
					failed.Add(1)
					return
				}
				if k := f.CachedBytes(); k > cas.FileCacheBytes {
					t.Errorf("%d bytes kept, bound %d", k, cas.FileCacheBytes)
					failed.Add(1)
					return
				}
			}
		})
	}
	wg.Wait()
	// The whole file, streamed.
	var buf bytes.Buffer
	if n, err := f.WriteRange(context.Background(), &buf, 0, 1<<40); err != nil || n != size || !bytes.Equal(buf.Bytes(), data) {
		t.Errorf("WriteRange of the whole file: %d, %v (equal %v)", n, err, bytes.Equal(buf.Bytes(), data))
	}
}

// By hash with no size: the size is learnt at the end.
func TestOpenByHashUnknownSize(t *testing.T) {
	const size = 700 << 10
	_, c, data := openFixture(t, size, 2<<20, nil)
	info, err := c.Resolve(context.Background(), "big.bin")
	if err != nil {
		t.Fatal(err)
	}
	f := c.Client.Open(context.Background(), info.XetHash, -1)
	if f.Size() != -1 {
		t.Fatalf("size %d before any read, want -1", f.Size())
	}
	p := make([]byte, 200<<10)
	// Past the end: nothing, and the size is still unknown.
	if n, err := f.ReadAt(p[:100], size+3*cas.FileWindow); n != 0 || err != io.EOF || f.Size() != -1 {
		t.Fatalf("read past the end: %d, %v, size %d", n, err, f.Size())
	}
	n, err := f.ReadAt(p, size-1000)
	if n != 1000 || err != io.EOF || !bytes.Equal(p[:n], data[size-1000:]) {
		t.Fatalf("read over the end: %d, %v", n, err)
	}
	if f.Size() != size {
		t.Errorf("size %d after reading the end, want %d", f.Size(), size)
	}
	if n, err := f.ReadAt(p[:10], size); n != 0 || err != io.EOF {
		t.Errorf("read at the end: %d, %v", n, err)
	}
}

// A xorb range corrupted at the source under a read fails the read with
// ErrVerify (and gives no byte), while what was read before it stays
// right.
func TestOpenCorruptRange(t *testing.T) {
	var corrupt atomic.Bool
	front := func(w http.ResponseWriter, r *http.Request, h *hub.Hub) bool {
		if !corrupt.Load() || xorbPart(r) != "data" {
			return false // footers pass: the chunk records are damaged
		}
		serveAltered(w, r, h, func(body []byte) {
			if len(body) > 200 {
				body[len(body)/2] ^= 0x10
			}
		})
		return true
	}
	const size = 3 << 20
	_, c, data := openFixture(t, size, 1<<20, front)
	f, _, err := c.Open(context.Background(), "big.bin")
	if err != nil {
		t.Fatal(err)
	}
	p := make([]byte, 4096)
	if _, err := f.ReadAt(p, 10); err != nil || !bytes.Equal(p, data[10:10+4096]) {
		t.Fatalf("clean read: %v", err)
	}
	corrupt.Store(true)
	for _, n := range []int{4096, cas.FileBigRead + 1} { // through a window, and streamed
		q := make([]byte, n)
		got, err := f.ReadAt(q, 2<<20)
		if !errors.Is(err, cas.ErrVerify) {
			t.Errorf("read of %d bytes over a corrupted range: %d bytes, %v; want ErrVerify", n, got, err)
		}
		if n <= cas.FileBigRead && got != 0 {
			t.Errorf("a failed windowed read gave %d bytes", got)
		}
		if got > 0 && !bytes.Equal(q[:got], data[2<<20:2<<20+got]) {
			t.Errorf("a failed read gave %d wrong bytes", got)
		}
	}
	// The window read before is kept, and right.
	if _, err := f.ReadAt(p, 10); err != nil || !bytes.Equal(p, data[10:10+4096]) {
		t.Errorf("kept window after the failure: %v", err)
	}
}

// A file stored in git reads the same way.
func TestOpenGitFile(t *testing.T) {
	_, srv := startHub(t, hub.Config{})
	c := newClient(srv)
	text := []byte("a small text file kept in git\n")
	commitFile(t, c, "notes.txt", text)
	f, info, err := c.Open(context.Background(), "notes.txt")
	if err != nil {
		t.Fatal(err)
	}
	if !info.XetHash.IsZero() {
		t.Fatal("the hub stored the small text file with Xet; this test needs one in git")
	}
	p := make([]byte, 100)
	n, err := f.ReadAt(p, 2)
	if n != len(text)-2 || err != io.EOF || !bytes.Equal(p[:n], text[2:]) {
		t.Errorf("ReadAt: %d, %v, %q", n, err, p[:n])
	}
	if _, _, err := c.Open(context.Background(), "missing.bin"); !errors.Is(err, cas.ErrNotFound) {
		t.Errorf("missing path: %v, want ErrNotFound", err)
	}
}
