package cas

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"mime"
	"mime/multipart"
	"strconv"
	"strings"
	"sync"

	"github.com/xetkit/xetkit/xethash"
	"github.com/xetkit/xetkit/xorb"
)

// Range selects bytes [Start, End) of a file.
type Range struct{ Start, End int64 }

// ErrNotFound is returned (wrapped) by Download for a file the hub does
// not know.
var ErrNotFound = errors.New("file not found")

// ErrVerify is wrapped by every error about downloaded data that does not
// match what was asked for.
var ErrVerify = errors.New("download verification failed")

// fetchEntry is one signed URL and the chunk ranges of one xorb it serves.
type fetchEntry struct {
	xorb   xethash.Hash
	url    string
	ranges []fetchRange
}

type fetchRange struct {
	chunks ChunkRange
	bytes  ByteRange
}

// plan is a reconstruction in one shape, whichever version gave it.
type plan struct {
	pastEnd bool // the range asked for starts at or past the file's end
	offset  uint64
	terms   []Term
	entries map[xethash.Hash][]*fetchEntry
}

// Download writes the file with the given file hash (or the part of it rng
// selects, when rng is not nil) to w, and returns the bytes written. It
// asks for the v2 reconstruction and falls back to v1, fetches the xorb
// byte ranges with HTTP Range requests, decodes every chunk and hashes it.
// Every chunk is checked against its xorb's footer before it is written; a
// whole file also against the file hash, and a range against the whole
// file (its reconstruction hashed, through the footers, to the file hash).
// On error, what was written to w must be discarded. As io.Writer
// requires, w keeps none of the slices it is handed: the download reuses
// their memory once Write returns.
func (c *Client) Download(ctx context.Context, file xethash.Hash, w io.Writer, rng *Range) (int64, error) {
	return c.DownloadSized(ctx, file, -1, w, rng)
}

// DownloadSized is Download for a file whose size is known (a pointer
// file gives it; -1: unknown). A whole download then asks for no segment
// past the end (without it, a file that ends on a segment boundary costs
// one more request, answered 416, which browsers log as an error), a range
// that starts at or past the end asks for nothing, and a reconstruction
// that gives another size is an ErrVerify.
func (c *Client) DownloadSized(ctx context.Context, file xethash.Hash, size int64, w io.Writer, rng *Range) (int64, error) {
	if rng != nil && (rng.Start < 0 || rng.End < rng.Start) {
		return 0, fmt.Errorf("download %s: bad range [%d, %d)", file, rng.Start, rng.End)
	}
	if rng != nil && rng.End == rng.Start {
		return 0, nil
	}
	if file.IsZero() {
		return 0, nil // the empty file: no chunks, nothing stored, every range empty
	}
	if rng == nil {
		return c.downloadWhole(ctx, file, size, w)
	}
	if size >= 0 && rng.Start >= size {
		return 0, nil // a range that starts at or past the end is empty
	}
	p, err := c.reconstruction(ctx, file, rng)
	if err != nil {
		return 0, err
	}
	if p.pastEnd {
		return 0, nil // a range that starts at or past the end is empty
	}
	d := c.newDownloader(ctx, file, rng, p)
	d.strict = true
	{
		// Every chunk is checked against its xorb's footer, but which
		// chunks make up the range, and where in them it starts, is the
		// server's word: check it against the whole file's reconstruction,
		// itself checked against the file hash through the footers.
		seq := checkedChunks(ctx, file) // kept by a File from its first read (open.go)
		if seq == nil {
			full, err := c.reconstruction(ctx, file, nil)
			if err != nil {
				return 0, err
			}
			whole := c.newDownloader(ctx, file, nil, full)
			whole.footers, whole.ends = d.footers, d.ends // fetched once for both
			if seq, err = whole.chunkSequence(); err != nil {
				return 0, fmt.Errorf("download %s: %w", file, err)
			}
			keepCheckedChunks(ctx, file, seq)
		}
		if err := checkRangePlan(p, seq, *rng); err != nil {
			return 0, fmt.Errorf("download %s: %w: %v", file, ErrVerify, err)
		}
	}
	return d.run(w)
}

// DefaultSegmentSize is how much of a file one reconstruction request
// covers by default (Client.SegmentSize).
const DefaultSegmentSize = 256 << 20

// downloadWhole downloads a whole file a segment at a time: each segment's
// reconstruction (and its signed URLs) is asked for when the download gets
// there, so a long download never works from stale URLs, and the answers
// stay small however large the file. The chunks of all segments are
// checked against the file hash at the end (and each chunk against its
// xorb's footer before it is written). size is the file's, or -1.
func (c *Client) downloadWhole(ctx context.Context, file xethash.Hash, size int64, w io.Writer) (int64, error) {
	seg := c.SegmentSize
	if seg <= 0 {
		seg = DefaultSegmentSize
	}
	footers, ends := map[xethash.Hash][]xethash.Entry{}, map[xethash.Hash][]uint32{}
	pool := &bufPool{}
	var entries []xethash.Entry
	if size >= 0 && size <= SmallFile && size <= seg {
		return c.downloadSmall(ctx, file, size, w)
	}
	// When the size says another segment follows, its reconstruction is
	// asked for while this one downloads: no round trip between them.
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	type ahead struct {
		start int64
		p     *plan
		err   error
	}
	var next chan ahead
	var pos int64
	for size < 0 || pos < size {
		rng := &Range{Start: pos, End: pos + seg}
		var p *plan
		var err error
		if next != nil {
			if a := <-next; a.start == pos {
				p, err = a.p, a.err
			}
			next = nil
		}
		if p == nil && err == nil {
			p, err = c.reconstruction(ctx, file, rng)
		}
		if err != nil {
			return pos, err
		}
		if size >= 0 && pos+seg < size {
			ch := make(chan ahead, 1)
			next = ch
			go func(start int64) {
				p, err := c.reconstruction(ctx, file, &Range{Start: start, End: start + seg})
				ch <- ahead{start, p, err}
			}(pos + seg)
		}
		if p.pastEnd {
			break // the file ends exactly where the last segment did
		}
		d := c.newDownloader(ctx, file, rng, p)
		d.footers, d.ends, d.collect, d.pool = footers, ends, &entries, pool
		// A segment that starts inside a chunk starts with the chunk the
		// one before ended with: count it once.
		d.dropFirst = pos > 0 && p.offset > 0
		n, err := d.run(w)
		pos += n
		if err != nil {
			return pos, err
		}
		if n < seg {
			break
		}
	}
	if size >= 0 && pos != size {
		return pos, fmt.Errorf("download %s: %w: the reconstruction gives %d bytes, the file has %d", file, ErrVerify, pos, size)
	}
	if got := xethash.File(entries); got != file {
		return pos, fmt.Errorf("download %s: %w: the chunks hash to file %s", file, ErrVerify, got)
	}
	return pos, nil
}

// SmallFile: a whole file of known size no larger than this (a piece) is
// downloaded without its xorbs' footers, held whole and checked against
// the file hash before any byte is written: the footer of a small file's
// xorb is a round trip of its own before the file's one range. Many such
// files go side by side (hubclient.DownloadPaths).
var SmallFile = PieceSize

// downloadSmall downloads a small whole file (SmallFile): the
// reconstruction, its ranges, every chunk hashed, the file hash checked,
// then the bytes written to w.
func (c *Client) downloadSmall(ctx context.Context, file xethash.Hash, size int64, w io.Writer) (int64, error) {
	p, err := c.reconstruction(ctx, file, nil)
	if err != nil {
		return 0, err
	}
	held := bytes.NewBuffer(make([]byte, 0, size))
	// Without the footers a damaged chunk is found only by the file hash:
	// the file is fetched again, as a damaged range would be.
	for again := 0; ; again++ {
		var entries []xethash.Entry
		held.Reset()
		d := c.newDownloader(ctx, file, nil, p)
		d.footerless, d.collect = true, &entries
		n, err := d.run(held)
		switch {
		case err != nil && (!errors.Is(err, ErrVerify) || again == damagedRetries):
			return 0, err
		case err != nil:
			continue
		case n != size:
			return 0, fmt.Errorf("download %s: %w: the reconstruction gives %d bytes, the file has %d", file, ErrVerify, n, size)
		}
		if got := xethash.File(entries); got != file {
			if again < damagedRetries {
				continue
			}
			return 0, fmt.Errorf("download %s: %w: the chunks hash to file %s", file, ErrVerify, got)
		}
		k, err := w.Write(held.Bytes())
		return int64(k), err
	}
}

func (c *Client) newDownloader(ctx context.Context, file xethash.Hash, rng *Range, p *plan) *downloader {
	return &downloader{c: c, ctx: ctx, file: file, rng: rng, plan: p,
		footers: map[xethash.Hash][]xethash.Entry{}, ends: map[xethash.Hash][]uint32{}, footerJobs: map[xethash.Hash]*footerJob{}, pool: &bufPool{}}
}

// seqChunk is one chunk of a file, in order: where it is stored and its size.
type seqChunk struct {
	xorb  xethash.Hash
	index uint32
	size  uint64
}

// chunkSequence returns every chunk of the file, in order, from the whole
// file's reconstruction and the footers of its xorbs, after checking that
// they hash to the file hash: a reconstruction altered in any way fails.
func (d *downloader) chunkSequence() ([]seqChunk, error) {
	var seq []seqChunk
	var entries []xethash.Entry
	// The footers are fetched side by side, as the controller allows; a
	// failure stops the others.
	ctx, cancel := context.WithCancel(d.ctx)
	d.ctx = ctx
	var wg sync.WaitGroup
	defer func() {
		cancel()
		wg.Wait()
	}()
	for _, t := range d.plan.terms {
		d.startFooter(&wg, t)
	}
	for i, t := range d.plan.terms {
		if err := d.awaitFooter(d.ctx, t); err != nil {
			return nil, err
		}
		d.mu.Lock()
		known := d.footers[t.Hash]
		d.mu.Unlock()
		if known == nil {
			return nil, fmt.Errorf("%w: the server does not serve xorb %s's footer, so a range cannot be checked", ErrVerify, t.Hash)
		}
		if t.Range.End <= t.Range.Start || int(t.Range.End) > len(known) {
			return nil, fmt.Errorf("%w: term %d names chunks [%d, %d) of xorb %s, which has %d", ErrVerify, i, t.Range.Start, t.Range.End, t.Hash, len(known))
		}
		var n uint64
		for ci := t.Range.Start; ci < t.Range.End; ci++ {
			entries = append(entries, known[ci])
			seq = append(seq, seqChunk{t.Hash, ci, known[ci].Size})
			n += known[ci].Size
		}
		if n != t.UnpackedLength {
			return nil, fmt.Errorf("%w: term %d is %d bytes by its xorb's footer, %d by the reconstruction", ErrVerify, i, n, t.UnpackedLength)
		}
	}
	if got := xethash.File(entries); got != d.file {
		return nil, fmt.Errorf("%w: the reconstruction's chunks hash to file %s", ErrVerify, got)
	}
	return seq, nil
}

// checkRangePlan checks a range's reconstruction against the file's chunk
// sequence: its chunks must be the file's, in order, from the one its
// offset says the range starts in, far enough to cover the range.
func checkRangePlan(p *plan, seq []seqChunk, rng Range) error {
	var size uint64
	for _, c := range seq {
		size += c.size
	}
	if uint64(rng.Start) < p.offset {
		return fmt.Errorf("offset %d into the first chunk is past the range's start %d", p.offset, rng.Start)
	}
	start := uint64(rng.Start) - p.offset // where the first chunk of the answer must begin
	k, pos := 0, uint64(0)
	for k < len(seq) && pos < start {
		pos += seq[k].size
		k++
	}
	if pos != start || k == len(seq) {
		return fmt.Errorf("no chunk of the file begins at byte %d, where the answer's first chunk should", start)
	}
	for _, t := range p.terms {
		for ci := t.Range.Start; ci < t.Range.End; ci++ {
			if k == len(seq) || seq[k].xorb != t.Hash || seq[k].index != ci {
				return fmt.Errorf("the range's chunk at byte %d is not the file's (xorb %s chunk %d)", pos, t.Hash, ci)
			}
			pos += seq[k].size
			k++
		}
	}
	if end := min(uint64(rng.End), size); pos < end {
		return fmt.Errorf("the answer covers the file to byte %d, the range asks to %d", pos, end)
	}
	return nil
}

// footerOf reads the footer of t's xorb through one of its URLs, renewing
// the URLs once if they have expired.
func (d *downloader) footerOf(t Term) error {
	return d.renewing(t, func(e *fetchEntry, _ fetchRange, renewed bool) error { return d.footer(e, renewed) })
}

// reconstruction asks for v2, then v1 when the hub lacks v2.
// FileTerm is one term of a file's reconstruction: a run of chunks of one
// xorb.
type FileTerm struct {
	Xorb  xethash.Hash `json:"xorb"`
	Start uint32       `json:"start"` // the first chunk's index in the xorb
	End   uint32       `json:"end"`   // one past the last
	Bytes uint64       `json:"bytes"` // the run's bytes in the file
}

// Terms asks the hub how the file is rebuilt: its terms, in order, as the
// hub gives them (Download checks them; this only shows them).
func (c *Client) Terms(ctx context.Context, file xethash.Hash) ([]FileTerm, error) {
	if file.IsZero() {
		return []FileTerm{}, nil
	}
	p, err := c.reconstruction(ctx, file, nil)
	if err != nil {
		return nil, err
	}
	out := make([]FileTerm, len(p.terms))
	for i, t := range p.terms {
		out[i] = FileTerm{Xorb: t.Hash, Start: t.Range.Start, End: t.Range.End, Bytes: t.UnpackedLength}
	}
	return out, nil
}

func (c *Client) reconstruction(ctx context.Context, file xethash.Hash, rng *Range) (*plan, error) {
	get := func(version string, v any) (int, error) {
		status := 0
		pass := []int{statusNotFound, statusNotImplemented, statusRangeNotSatisfiable}
		err := c.call(ctx, "reconstruct "+file.String(), scopeRead, pass,
			func(base string) (*Request, error) {
				req, err := NewRequest(ctx, "GET", base+"/"+version+"/reconstructions/"+file.String(), nil)
				if err == nil && rng != nil {
					req.Header.Set("Range", fmt.Sprintf("bytes=%d-%d", rng.Start, rng.End-1))
				}
				return req, err
			}, func(resp *Response) error {
				status = resp.StatusCode
				if status != statusOK {
					return nil
				}
				return DecodeJSON(resp, v)
			})
		return status, err
	}
	var v2 ReconstructionV2
	status, err := get("v2", &v2)
	if err != nil {
		return nil, err
	}
	var cp *Plan
	switch status {
	case statusOK:
		cp, err = v2.Plan()
	case statusRangeNotSatisfiable:
	default:
		var v1 ReconstructionV1
		if status, err = get("v1", &v1); err != nil {
			return nil, err
		}
		if status == statusOK {
			cp, err = v1.Plan()
		}
	}
	if err != nil {
		return nil, fmt.Errorf("reconstruct %s: %w", file, err)
	}
	p := &plan{entries: map[xethash.Hash][]*fetchEntry{}}
	switch {
	case status == statusRangeNotSatisfiable && rng != nil:
		p.pastEnd = true
		return p, nil
	case cp == nil:
		return nil, fmt.Errorf("download %s: %w", file, ErrNotFound)
	}
	p.offset, p.terms = cp.Offset, cp.Terms
	for x, list := range cp.Fetch {
		for _, f := range list {
			fe := &fetchEntry{xorb: x, url: f.URL}
			for _, r := range f.Ranges {
				// Ranges are fetched into buffers of their size: one no
				// xorb can have is refused before anything is allocated.
				if r.Bytes.End < r.Bytes.Start || r.Chunks.End <= r.Chunks.Start || r.Bytes.End >= xorb.MaxSize {
					return nil, fmt.Errorf("download %s: %w: the reconstruction gives xorb %s chunks [%d, %d) at bytes %d-%d, which no xorb can hold",
						file, ErrVerify, x, r.Chunks.Start, r.Chunks.End, r.Bytes.Start, r.Bytes.End)
				}
				fe.ranges = append(fe.ranges, fetchRange{r.Chunks, r.Bytes})
			}
			p.entries[x] = append(p.entries[x], fe)
			c.warm(f.URL) // once per host: the pieces go there next
		}
	}
	return p, nil
}

// cacheKey names a fetched chunk range of a xorb.
type cacheKey struct {
	xorb  xethash.Hash
	start uint32
}

type downloader struct {
	c    *Client
	ctx  context.Context
	file xethash.Hash
	rng  *Range
	// mu guards what the download's requests share: the plan's URLs (a
	// renewal replaces them), footers, ends and footerJobs.
	mu   sync.Mutex
	plan *plan
	gen  int // renewals of the plan's URLs so far
	// renewMu makes renewals one at a time.
	renewMu sync.Mutex
	// footers holds each xorb's chunks (hash and size), read from its
	// footer before any of its records, so every chunk is checked before
	// it is written; a nil entry: the server would not serve the footer.
	footers map[xethash.Hash][]xethash.Entry
	// ends holds, for each xorb whose footer was read, where each chunk
	// record ends: what lets a large range be fetched a piece at a time.
	ends map[xethash.Hash][]uint32
	// footerJobs: the footer fetches started, one per xorb.
	footerJobs map[xethash.Hash]*footerJob
	// strict: a footer the server will not serve is an error (a range
	// asked for cannot be checked otherwise); else the file hash at the
	// end is the check.
	strict bool
	// footerless: no footer is fetched, the chunks are checked by the
	// file hash alone, before any is written (SmallFile).
	footerless bool
	// collect, if set, receives every chunk's entry for the file hash,
	// the first one left out when dropFirst is set.
	collect   *[]xethash.Entry
	dropFirst bool
	// pool holds the buffers of ranges written, for the next ones.
	pool *bufPool
	// buf is the download buffer of the engine's run (nil outside it).
	buf *buffer
}

// bufPool keeps the buffers of fetched ranges once their chunks are
// written, for the ranges fetched next: a download cycles through about
// DownloadBuffer of them instead of leaving a garbage buffer behind each
// piece (which WebAssembly memory, never shrinking, would keep).
type bufPool struct {
	mu   sync.Mutex
	free [][]byte
	held int64
}

// get returns a buffer of n bytes, one put back if one is large enough.
func (p *bufPool) get(n int64) []byte {
	p.mu.Lock()
	defer p.mu.Unlock()
	for i, b := range p.free {
		if int64(cap(b)) >= n {
			p.free = append(p.free[:i], p.free[i+1:]...)
			p.held -= int64(cap(b))
			return b[:n]
		}
	}
	return make([]byte, n)
}

// reuseBuffers: natively the pool lowers a download's peak resident
// size (256 MiB through loopback: 240 -> 195 MB). Under WebAssembly it
// was measured to raise the peak instead (a 1 GiB download in Node:
// 293 -> 965 MiB), not yet understood, so there it is off.
var reuseBuffers = platformDefault(false, true)

// put takes back a buffer no chunk given out refers to any more.
func (p *bufPool) put(b []byte) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if reuseBuffers && b != nil && p.held+int64(cap(b)) <= DownloadBuffer {
		p.free = append(p.free, b)
		p.held += int64(cap(b))
	}
}

// footerJob is the fetch of one xorb's footer, which every part of that
// xorb waits for.
type footerJob struct {
	done chan struct{}
	err  error
}

// fetched is one decoded range: its chunks and their hashes, and the
// buffer it was read into, which the chunks may point into (nil when it
// is not the range's own).
type fetched struct {
	chunks [][]byte
	hashes []xethash.Hash
	raw    []byte
}

// source finds the fetch entry and range that cover a term. The caller
// holds d.mu, or no request of the download has started.
func (d *downloader) source(t Term) (*fetchEntry, fetchRange, bool) {
	for _, e := range d.plan.entries[t.Hash] {
		for _, r := range e.ranges {
			if r.chunks.Start <= t.Range.Start && t.Range.End <= r.chunks.End {
				return e, r, true
			}
		}
	}
	return nil, fetchRange{}, false
}

// The download engine. The terms are cut into jobs, each one request: a
// piece of a large term (a byte range of its xorb cut by the footer's
// record boundaries, or, while the footer is on its way, a span cut by
// bytes alone: see spans), or the range (all ranges, for a v2 URL signed
// for several) that serves a small term, fetched once for all the terms
// that use it. One goroutine (dispatch) walks the terms in order, starts
// the xorbs' footers a few xorbs ahead, and requests the jobs; each
// request waits for a place in the Client's concurrency window, so as
// many run at once as the controller allows. The caller's goroutine takes
// the jobs in file order, as each is done, and writes their chunks, each
// checked against its xorb's footer before its job is done.
//
// Memory is bounded by the download buffer (DownloadBuffer), counted in
// the bytes of received data, not of requests:
//
//   - A job's bytes enter the buffer when its answer's body begins, and
//     leave it once the writer has taken the last term that uses them. A
//     body that does not fit waits unread (the connection's flow control
//     holds the sender back), unless the buffer is empty or the writer
//     waits for its job: a job larger than the buffer still goes alone,
//     and the job the writer needs is never held back.
//   - Requests run ahead of the buffer by at most one buffer: a job is
//     requested once its bytes and those of the jobs requested whose
//     bodies have not begun fit in the buffer (or there are none).
//
// So the next jobs are asked for while the buffer's are still arriving,
// and their answers are on their way when room is made: the link is not
// left idle for the round trip of new requests, as it was when jobs took
// their room at the request (jobs started together share the link, end
// together and are written together; the next ones were asked for only
// then, all at once, and each such wave began with a round trip of idle
// link).
//
// A body waits for room only while the job the writer waits for will be
// done without another request (its body is being read, or has been
// read whole): that job then makes room by itself. When it will not (it
// waits for a place in the window, a retry, or its footer), waiting bodies
// take their room at once, so no request the writer needs ever waits on
// a body that waits for the writer (a place in the window, or one of the
// browser's connections to the host). The buffer then passes its bound by
// at most the bytes requested ahead: a download holds at most twice
// DownloadBuffer, and DownloadBuffer while its requests go through.

// The engine's platform defaults.
var (
	// PieceSize: a term whose range is larger is fetched in pieces of at
	// most this many bytes (or an eighth more, where that takes in the
	// rest of the range), in parallel. Large enough that a request's
	// round trip is a small part of its time on a slow connection (4 MiB
	// at 10 MB/s takes 0.4 s, against a 0.1 s round trip), small enough
	// that many fit in the buffer.
	PieceSize int64 = 4 << 20
	// DownloadBuffer bounds the bytes of xorb data a download holds:
	// bodies being received or received and not yet written (and, ahead
	// of them, as many bytes requested). What bounds its memory; see the
	// engine's comment above. A single range larger than it is still
	// fetched, alone. In the
	// browser, 6 pieces: one on each connection Chromium opens to a host
	// (a 1 GiB download then peaks at about 260 MiB of WebAssembly memory
	// and Node's resident size under 300 MiB).
	DownloadBuffer = platformDefault[int64](24<<20, 64<<20)
)

// footersAhead is how many xorbs' footers are fetched ahead of the term
// the engine is cutting into jobs.
const footersAhead = 8

// job is one request of the download engine.
type job struct {
	seq   int   // in the order the writer takes them
	bytes int64 // of xorb data: its share of the download buffer
	uses  int   // steps still to take from it (the writer's count)
	done  chan struct{}
	err   error
	got   []rangeGot // set when done without error
	// What the buffer knows of it (guarded by the buffer's mu): its bytes
	// are in the buffer; it will be done without another request (a body
	// of it is being read, or has been); its fetch has ended.
	room, moving, finished bool
	// A span (fetchSpan) ends where the next begins decoding: the byte
	// its first record starts at, and that record's chunk index.
	next      int64
	nextChunk uint32
}

// rangeGot is one fetched range and its decoded chunks.
type rangeGot struct {
	r   fetchRange
	got *fetched
}

// step is what the writer takes next: chunks of term from job (all of
// the job's chunks when piece, else those of the range that covers the
// term).
type step struct {
	term     int
	job      *job
	piece    bool
	termEnds bool
}

// buffer is the download buffer (see the engine's comment): the bytes of
// the jobs whose bodies have begun and are not yet written, and of those
// requested whose bodies have not begun.
type buffer struct {
	mu    sync.Mutex
	cond  *sync.Cond
	held  int64 // bodies begun, not yet written
	asked int64 // requested, bodies not begun
	limit int64
	want  *job // the job the writer waits for
}

func newBuffer(limit int64) *buffer {
	b := &buffer{limit: limit}
	b.cond = sync.NewCond(&b.mu)
	return b
}

// wait waits for a change to the buffer, or for ctx to end.
func (b *buffer) wait(ctx context.Context) error {
	if ctx.Err() != nil {
		return context.Cause(ctx)
	}
	b.cond.Wait()
	return nil
}

// update changes the buffer under its lock and wakes whoever waits on it.
func (b *buffer) update(change func()) {
	b.mu.Lock()
	change()
	b.cond.Broadcast()
	b.mu.Unlock()
}

// ask waits until j may be requested: while a buffer's worth of bytes is
// requested and not begun, later jobs wait.
func (b *buffer) ask(ctx context.Context, j *job) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	for b.asked > 0 && b.asked+j.bytes > b.limit {
		if err := b.wait(ctx); err != nil {
			return err
		}
	}
	b.asked += j.bytes
	return nil
}

// begin is called as a body of j begins: the first time, it waits until
// j's bytes may enter the buffer and puts them there. j then moves, until
// stall.
func (b *buffer) begin(ctx context.Context, j *job) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	for !b.fits(j) {
		if err := b.wait(ctx); err != nil {
			return err
		}
	}
	if !j.room {
		j.room = true
		b.asked -= j.bytes
		b.held += j.bytes
	}
	j.moving = true
	b.cond.Broadcast()
	return nil
}

// fits reports whether j's body may begin (see the engine's comment): its
// bytes are in the buffer or fit there, or the buffer is empty, or the
// writer waits for j, or the job it waits for needs another request.
func (b *buffer) fits(j *job) bool {
	writerMoves := b.want != nil && (b.want.moving || b.want.finished)
	return j.room || b.held == 0 || b.held+j.bytes <= b.limit || b.want == j || !writerMoves
}

// stall is called when j needs another request before it is done: a body
// of it failed, its bytes came damaged, or its footer is not in yet.
func (b *buffer) stall(j *job) { b.update(func() { j.moving = false }) }

// finish is called when j's fetch has ended.
func (b *buffer) finish(j *job) { b.update(func() { j.finished = true }) }

// release takes j's bytes out of the buffer once written.
func (b *buffer) release(j *job) { b.update(func() { b.held -= j.bytes }) }

// waitFor tells the buffer which job the writer waits for.
func (b *buffer) waitFor(j *job) { b.update(func() { b.want = j }) }

// wake wakes whoever waits on the buffer (the download ended).
func (b *buffer) wake() { b.update(func() {}) }

func (d *downloader) run(w io.Writer) (int64, error) {
	file, rng := d.file, d.rng
	fail := func(format string, args ...any) (int64, error) {
		return 0, fmt.Errorf("download %s: %w: %s", file, ErrVerify, fmt.Sprintf(format, args...))
	}
	uses := map[cacheKey]int{} // terms that read each range
	for i, t := range d.plan.terms {
		if t.Range.End <= t.Range.Start {
			return fail("term %d has an empty chunk range", i)
		}
		_, r, ok := d.source(t)
		if !ok {
			return 0, fmt.Errorf("download %s: the reconstruction gives no URL for term %d (xorb %s chunks [%d, %d))",
				file, i, t.Hash, t.Range.Start, t.Range.End)
		}
		uses[cacheKey{t.Hash, r.chunks.Start}]++
	}
	skip := d.plan.offset
	want := int64(-1) // bytes to write; -1: all
	if rng != nil {
		want = rng.End - rng.Start
	}
	var written int64
	first := true
	var termBytes uint64
	// emit writes one checked chunk, less what the range leaves out.
	emit := func(h xethash.Hash, data []byte) error {
		termBytes += uint64(len(data))
		if d.collect != nil && !(first && d.dropFirst) {
			*d.collect = append(*d.collect, xethash.Entry{Hash: h, Size: uint64(len(data))})
		}
		first = false
		if skip >= uint64(len(data)) {
			skip -= uint64(len(data))
			return nil
		}
		out := data[skip:]
		skip = 0
		if want >= 0 && int64(len(out)) > want-written {
			out = out[:want-written]
		}
		if len(out) == 0 {
			return nil
		}
		n, err := w.Write(out)
		written += int64(n)
		return err
	}
	ctx, cancel := context.WithCancelCause(d.ctx)
	d.ctx = ctx
	buf := newBuffer(DownloadBuffer)
	d.buf = buf
	stopWake := context.AfterFunc(ctx, buf.wake)
	defer stopWake()
	var wg sync.WaitGroup
	steps := make(chan step, 64)
	dispatchErr := make(chan error, 1)
	wg.Go(func() {
		defer close(steps)
		dispatchErr <- d.dispatch(ctx, &wg, buf, uses, steps)
	})
	defer func() {
		cancel(errors.New("the download ended"))
		for range steps {
		}
		wg.Wait()
	}()
	for st := range steps {
		j := st.job
		buf.waitFor(j)
		select {
		case <-j.done:
		case <-ctx.Done():
			return written, context.Cause(ctx)
		}
		if j.err != nil {
			return written, fmt.Errorf("download %s: %w", file, j.err)
		}
		t := d.plan.terms[st.term]
		var got *fetched
		var lo, hi uint32
		if st.piece {
			got = j.got[0].got
			hi = uint32(len(got.chunks))
		} else {
			for _, rg := range j.got {
				if rg.r.chunks.Start <= t.Range.Start && t.Range.End <= rg.r.chunks.End {
					got, lo, hi = rg.got, t.Range.Start-rg.r.chunks.Start, t.Range.End-rg.r.chunks.Start
					break
				}
			}
			if got == nil {
				return fail("the ranges fetched for term %d do not cover it (the reconstruction changed when renewed)", st.term)
			}
		}
		for k, data := range got.chunks[lo:hi] {
			if err := emit(got.hashes[lo+uint32(k)], data); err != nil {
				return written, err
			}
		}
		if j.uses--; j.uses == 0 {
			// Written and no later term reads it: its buffers serve the
			// next ranges.
			for _, rg := range j.got {
				d.pool.put(rg.got.raw)
			}
			j.got = nil
			buf.release(j)
		}
		if st.termEnds {
			if termBytes != t.UnpackedLength {
				return fail("term %d (xorb %s chunks [%d, %d)) decodes to %d bytes, the reconstruction says %d",
					st.term, t.Hash, t.Range.Start, t.Range.End, termBytes, t.UnpackedLength)
			}
			termBytes = 0
		}
	}
	if err := <-dispatchErr; err != nil {
		return written, fmt.Errorf("download %s: %w", file, err)
	}
	// The hub clamps a range to the file's end; only a short first answer
	// is wrong.
	if rng != nil && written == 0 {
		return fail("range [%d, %d) gave no bytes", rng.Start, rng.End)
	}
	return written, nil
}

// dispatch cuts the terms into jobs, in order, hands the writer its steps
// and starts each job once the buffer lets it be requested (on wg).
func (d *downloader) dispatch(ctx context.Context, wg *sync.WaitGroup, buf *buffer, uses map[cacheKey]int, steps chan<- step) error {
	byRange := map[cacheKey]*job{} // range jobs, by every range they fetch
	seq := 0
	send := func(s step) error {
		select {
		case steps <- s:
			return nil
		case <-ctx.Done():
			return context.Cause(ctx)
		}
	}
	start := func(j *job, fetch func(j *job) error) error {
		if err := buf.ask(ctx, j); err != nil {
			return err
		}
		wg.Go(func() {
			defer close(j.done)
			j.err = fetch(j)
			buf.finish(j)
		})
		return nil
	}
	ahead, started, reached := 0, map[xethash.Hash]bool{}, map[xethash.Hash]bool{}
	for i, t := range d.plan.terms {
		// Footers of the next few xorbs are on their way meanwhile.
		for ; !d.footerless && ahead < len(d.plan.terms) && len(started)-len(reached) < footersAhead; ahead++ {
			if h := d.plan.terms[ahead].Hash; !started[h] {
				started[h] = true
				d.startFooter(wg, d.plan.terms[ahead])
			}
		}
		if !started[t.Hash] && !d.footerless {
			started[t.Hash] = true
			d.startFooter(wg, t)
		}
		reached[t.Hash] = true
		d.mu.Lock()
		_, r, _ := d.source(t)
		d.mu.Unlock()
		if spans := d.spans(t, r); spans != nil {
			// Its footer is not in yet: fetched by bytes meanwhile.
			var prev *job
			for k, sp := range spans {
				j := &job{seq: seq, bytes: spanEnd(sp, r) - sp.Start + 1, uses: 1, done: make(chan struct{})}
				seq++
				if err := send(step{term: i, job: j, piece: true, termEnds: k == len(spans)-1}); err != nil {
					return err
				}
				sp, after, last := sp, prev, k == len(spans)-1
				if err := start(j, func(j *job) error { return d.fetchSpan(t, r, sp, after, last, j) }); err != nil {
					return err
				}
				prev = j
			}
			continue
		}
		if !d.footerless {
			if err := d.awaitFooter(ctx, t); err != nil {
				return err
			}
		}
		d.mu.Lock()
		_, r, _ = d.source(t)
		pieces := d.pieces(t, r)
		d.mu.Unlock()
		for k, pc := range pieces {
			j := &job{seq: seq, bytes: pc.bytes.End - pc.bytes.Start + 1, uses: 1, done: make(chan struct{})}
			seq++
			if err := send(step{term: i, job: j, piece: true, termEnds: k == len(pieces)-1}); err != nil {
				return err
			}
			if err := start(j, func(j *job) error { return d.fetchPiece(t, pc, j) }); err != nil {
				return err
			}
		}
		if pieces != nil {
			continue
		}
		key := cacheKey{t.Hash, r.chunks.Start}
		if j := byRange[key]; j != nil {
			if err := send(step{term: i, job: j, termEnds: true}); err != nil {
				return err
			}
			continue
		}
		d.mu.Lock()
		e, _, _ := d.source(t)
		j := &job{seq: seq, done: make(chan struct{})}
		for _, rr := range e.ranges {
			k := cacheKey{t.Hash, rr.chunks.Start}
			j.bytes += rr.bytes.End - rr.bytes.Start + 1
			j.uses += uses[k]
			byRange[k] = j
		}
		d.mu.Unlock()
		seq++
		if err := send(step{term: i, job: j, termEnds: true}); err != nil {
			return err
		}
		if err := start(j, func(j *job) error { return d.fetchRanges(t, j) }); err != nil {
			return err
		}
	}
	return nil
}

// fetchPiece fetches one piece of term t.
func (d *downloader) fetchPiece(t Term, pc fetchRange, j *job) error {
	return d.renewing(t, func(e *fetchEntry, _ fetchRange, _ bool) error {
		return d.get(e, []fetchRange{pc}, true, j, func(r fetchRange, got *fetched) error {
			j.got = []rangeGot{{r, got}}
			return nil
		})
	})
}

// fetchRanges fetches every range of the entry that serves term t, with
// one request.
func (d *downloader) fetchRanges(t Term, j *job) error {
	return d.renewing(t, func(e *fetchEntry, _ fetchRange, _ bool) error {
		j.got = j.got[:0]
		return d.get(e, e.ranges, false, j, func(r fetchRange, got *fetched) error {
			for k := range j.got {
				if j.got[k].r == r { // a retry's copy
					j.got[k].got = got
					return nil
				}
			}
			j.got = append(j.got, rangeGot{r, got})
			return nil
		})
	})
}

// startFooter starts fetching the footer of t's xorb, unless it is known
// or on its way.
func (d *downloader) startFooter(wg *sync.WaitGroup, t Term) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if _, ok := d.footerJobs[t.Hash]; ok {
		return
	}
	fj := &footerJob{done: make(chan struct{})}
	d.footerJobs[t.Hash] = fj
	wg.Go(func() {
		defer close(fj.done)
		fj.err = d.footerOf(t)
	})
}

// awaitFooter waits for the footer of t's xorb (started by startFooter).
func (d *downloader) awaitFooter(ctx context.Context, t Term) error {
	d.mu.Lock()
	fj := d.footerJobs[t.Hash]
	d.mu.Unlock()
	select {
	case <-fj.done:
		return fj.err
	case <-ctx.Done():
		return context.Cause(ctx)
	}
}

// footerIn reports whether the fetch of the footer of t's xorb has ended.
func (d *downloader) footerIn(t Term) bool {
	d.mu.Lock()
	fj := d.footerJobs[t.Hash]
	d.mu.Unlock()
	select {
	case <-fj.done:
		return true
	default:
		return false
	}
}

// pieces cuts term t's chunks into byte ranges of at most PieceSize (one
// chunk at least) by its xorb's record boundaries, or returns nil when the
// range r that serves it is small, or the boundaries are unknown or
// disagree with r (then r is fetched whole, as the reconstruction says).
// What would be left after the last full piece, if less than pieceSlack,
// joins that piece instead. The caller holds d.mu.
func (d *downloader) pieces(t Term, r fetchRange) []fetchRange {
	ends := d.ends[t.Hash]
	if r.bytes.End-r.bytes.Start+1 <= PieceSize+pieceSlack() || int(t.Range.End) > len(ends) || t.Range.End > r.chunks.End || t.Range.Start < r.chunks.Start {
		return nil
	}
	start := func(c uint32) int64 {
		if c == 0 {
			return 0
		}
		return int64(ends[c-1])
	}
	if start(r.chunks.Start) != r.bytes.Start || int64(ends[r.chunks.End-1])-1 != r.bytes.End {
		return nil
	}
	last := int64(ends[t.Range.End-1])
	var out []fetchRange
	for c := t.Range.Start; c < t.Range.End; {
		end := c + 1
		if last-start(c) <= PieceSize+pieceSlack() {
			end = t.Range.End // the rest, in one piece
		}
		for end < t.Range.End && int64(ends[end])-start(c) <= PieceSize {
			end++
		}
		out = append(out, fetchRange{chunks: ChunkRange{Start: c, End: end}, bytes: ByteRange{Start: start(c), End: int64(ends[end-1]) - 1}})
		c = end
	}
	return out
}

// Spans: the pieces of a range whose footer has not arrived. A xorb's
// footer (its chunk hashes, and where each record ends) is fetched a few
// xorbs ahead, so pieces are usually cut at record boundaries; but for
// the first xorbs of a download, waiting for their footers would put a
// round trip before the first byte. Instead such a range is cut by bytes
// alone, in pieces of PieceSize, each fetched with up to maxRecord bytes
// past its end, so that every record that starts in a span is whole in
// its fetch. Each span, once fetched, waits for the span before it (which
// says where its own first record starts) and for the footer, then
// decodes its records and checks every chunk against the footer, as a
// piece does: nothing is written unchecked, and the footer's round trip
// overlaps the transfer.

// maxRecord is the longest chunk record: a header and at most
// MaxChunkSize bytes of payload.
const maxRecord = xorb.HeaderSize + xorb.MaxChunkSize

// spans cuts range r into byte spans when it serves exactly term t, is
// larger than a piece and its xorb's footer is not in yet; else nil. The
// caller holds no lock.
func (d *downloader) spans(t Term, r fetchRange) []ByteRange {
	if r.chunks != t.Range || r.bytes.End-r.bytes.Start+1 <= PieceSize+pieceSlack() {
		return nil
	}
	d.mu.Lock()
	fj := d.footerJobs[t.Hash]
	_, known := d.footers[t.Hash]
	d.mu.Unlock()
	if known || fj == nil {
		return nil
	}
	select {
	case <-fj.done:
		return nil // in (or failed: awaitFooter says so)
	default:
	}
	var out []ByteRange
	for at := r.bytes.Start; at <= r.bytes.End; {
		end := at + PieceSize - 1
		if r.bytes.End-at+1 <= PieceSize+pieceSlack() {
			end = r.bytes.End
		}
		out = append(out, ByteRange{Start: at, End: end})
		at = end + 1
	}
	return out
}

// spanEnd is the last byte fetched for span sp of range r: a record that
// starts in the span ends at most maxRecord bytes past it.
func spanEnd(sp ByteRange, r fetchRange) int64 { return min(sp.End+maxRecord, r.bytes.End) }

// fetchSpan fetches span sp of range r (serving term t), then decodes the
// records that start in it, from where the span before it (after, nil
// for the first) left off, and checks them against the footer. last: the
// span ends the range, whose records must end exactly at its end.
func (d *downloader) fetchSpan(t Term, r fetchRange, sp ByteRange, after *job, last bool, j *job) error {
	end := spanEnd(sp, r)
	var raw []byte
	for again := 0; ; again++ {
		err := d.renewing(t, func(e *fetchEntry, _ fetchRange, _ bool) error {
			var err error
			raw, err = d.fetchBytes(e, sp.Start, end, j)
			return err
		})
		if err != nil {
			return err
		}
		pos, chunk := r.bytes.Start, t.Range.Start
		if after != nil {
			select {
			case <-after.done:
			case <-d.ctx.Done():
				return context.Cause(d.ctx)
			}
			if after.err != nil {
				return after.err
			}
			pos, chunk = after.next, after.nextChunk
		}
		if !d.footerIn(t) {
			d.buf.stall(j) // its footer's request is not answered yet
		}
		if err := d.awaitFooter(d.ctx, t); err != nil {
			return err
		}
		got, next, n, err := d.decodeSpan(t, r, sp, raw, pos, chunk, last)
		if bad := (*damaged)(nil); errors.As(err, &bad) {
			if again < damagedRetries {
				d.buf.stall(j)
				continue // damaged on the way, perhaps: fetched again
			}
			return bad.err
		}
		if err != nil {
			return err
		}
		j.got = []rangeGot{{fetchRange{chunks: ChunkRange{Start: chunk, End: chunk + n}, bytes: ByteRange{Start: pos, End: next - 1}}, got}}
		j.next, j.nextChunk = next, chunk+n
		return nil
	}
}

// decodeSpan decodes the records of raw (bytes sp.Start.. of the xorb)
// that start in sp, the first at pos with chunk index chunk, checked
// against the footer; it returns them, where the next record starts and
// how many there were.
func (d *downloader) decodeSpan(t Term, r fetchRange, sp ByteRange, raw []byte, pos int64, chunk uint32, last bool) (*fetched, int64, uint32, error) {
	d.mu.Lock()
	known := d.footers[t.Hash]
	d.mu.Unlock()
	bad := func(format string, args ...any) error {
		return &damaged{fmt.Errorf("%w: xorb %s bytes %d-%d: %s", ErrVerify, t.Hash, sp.Start, sp.End, fmt.Sprintf(format, args...))}
	}
	if pos < sp.Start || pos > sp.End+1 {
		return nil, 0, 0, bad("the record before it ends at byte %d, outside it", pos)
	}
	// The records that start in the span, by their headers (each is then
	// checked by the decoder).
	next, n := pos, uint32(0)
	for next <= sp.End && (!last || next <= r.bytes.End) {
		k, ok := xorb.RecordLen(raw[next-sp.Start:])
		if !ok || next+int64(k)-sp.Start > int64(len(raw)) {
			return nil, 0, 0, bad("the record at byte %d runs past the bytes fetched", next)
		}
		if chunk+n >= t.Range.End {
			return nil, 0, 0, bad("more chunk records than the reconstruction's %d", t.Range.End-t.Range.Start)
		}
		next += int64(k)
		n++
	}
	if last && (next != r.bytes.End+1 || chunk+n != t.Range.End) {
		return nil, 0, 0, bad("%d chunk records end at byte %d, the reconstruction says %d end at %d", chunk+n-t.Range.Start, next, t.Range.End-t.Range.Start, r.bytes.End+1)
	}
	dec := &rangeDecoder{xorb: t.Hash, r: fetchRange{chunks: ChunkRange{Start: chunk, End: chunk + n}, bytes: ByteRange{Start: pos, End: next - 1}}, known: known}
	if n > 0 {
		if err := dec.whole(raw[pos-sp.Start : next-sp.Start]); err != nil {
			return nil, 0, 0, err
		}
	}
	dec.got.raw = raw
	return &dec.got, next, n, nil
}

// fetchBytes reads bytes [start, end] of e's xorb, for job j, into a
// buffer of the download's pool.
func (d *downloader) fetchBytes(e *fetchEntry, start, end int64, j *job) ([]byte, error) {
	var out []byte
	err := d.c.call(d.ctx, "fetch xorb "+e.xorb.String(), noAuth, nil, func(string) (*Request, error) {
		req, err := NewRequest(d.ctx, "GET", e.url, nil)
		if err == nil {
			req.Header.Set("Range", fmt.Sprintf("bytes=%d-%d", start, end))
			req.bulk = end-start+1 >= BulkRequest
		}
		return req, err
	}, func(resp *Response) (err error) {
		if err := d.buf.begin(d.ctx, j); err != nil {
			return err
		}
		defer d.stallOn(&err, j)
		switch resp.StatusCode {
		case statusPartialContent:
			if at, _, ok := contentRange(resp.Header.Get("Content-Range")); ok && at != start {
				return fmt.Errorf("%w: asked for bytes from %d, the answer starts at %d", ErrVerify, start, at)
			}
		case statusOK: // the whole xorb
			if _, err := io.CopyN(io.Discard, resp.Body, start); err != nil {
				return transient(err)
			}
		default:
			return fmt.Errorf("unexpected status %d for a range request", resp.StatusCode)
		}
		b := d.pool.get(end - start + 1)
		if _, err := io.ReadFull(resp.Body, b); err != nil {
			return transient(fmt.Errorf("range body: bytes %d-%d ended early: %w", start, end, err))
		}
		if resp.StatusCode == statusPartialContent {
			if k, _ := io.ReadFull(resp.Body, make([]byte, 1)); k > 0 {
				return transient(errors.New("range body: the body is longer than the bytes asked for"))
			}
		}
		out = b
		return nil
	})
	return out, err
}

// pieceSlack is how much a piece may pass PieceSize to take in the rest
// of its range rather than leave it for a request of its own: an 8 MiB
// xorb cut at record boundaries into pieces of at most 4 MiB left a third
// piece of some 100 KB, a request that is nearly all round trip and holds
// one of the browser's six connections for it.
func pieceSlack() int64 { return PieceSize / 8 }

// renewing runs try on the fetch entry that serves term t and, when that
// fails with a stale URL, once more on the URLs of a renewed
// reconstruction (renewed is then set). Parts that fail together renew
// the URLs once.
func (d *downloader) renewing(t Term, try func(e *fetchEntry, r fetchRange, renewed bool) error) error {
	for renewed := false; ; renewed = true {
		d.mu.Lock()
		e, r, ok := d.source(t)
		gen := d.gen
		d.mu.Unlock()
		if !ok {
			return fmt.Errorf("%w: the reconstruction gives no URL for xorb %s chunks [%d, %d)", ErrVerify, t.Hash, t.Range.Start, t.Range.End)
		}
		err := try(e, r, renewed)
		if renewed || !staleURL(err) {
			return err
		}
		if err := d.refresh(gen); err != nil {
			return err
		}
	}
}

// staleURL reports whether a xorb URL's failure calls for new URLs: it
// expired (403), or came damaged or unknown (400, 404).
func staleURL(err error) bool {
	var he *HTTPError
	return errors.As(err, &he) && (he.Status == statusForbidden || he.Status == statusNotFound || he.Status == statusBadRequest)
}

// refresh asks for the reconstruction again, for new signed URLs, unless
// they were renewed since generation gen. The terms must not change: the
// file is content-addressed.
func (d *downloader) refresh(gen int) error {
	d.renewMu.Lock()
	defer d.renewMu.Unlock()
	d.mu.Lock()
	renewed := d.gen != gen
	d.mu.Unlock()
	if renewed {
		return nil
	}
	p, err := d.c.reconstruction(d.ctx, d.file, d.rng)
	if err != nil {
		return err
	}
	if len(p.terms) != len(d.plan.terms) || p.offset != d.plan.offset {
		return fmt.Errorf("%w: the reconstruction changed when asked again", ErrVerify)
	}
	for i := range p.terms {
		if p.terms[i] != d.plan.terms[i] {
			return fmt.Errorf("%w: term %d of the reconstruction changed when asked again", ErrVerify, i)
		}
	}
	d.mu.Lock()
	d.plan.entries = p.entries
	d.gen++
	d.mu.Unlock()
	return nil
}

// footer reads the chunk hashes of e's xorb from its footer (a suffix
// range of any of the xorb's URLs) and checks them against the xorb hash.
// A server that will not serve the footer leaves whole-file downloads to
// the file hash check at the end; a range download then cannot be checked
// and fails.
//
// A 403 may be an expired URL: it is an error until the URLs were renewed
// (renewed), and then means the server keeps footers to itself.
func (d *downloader) footer(e *fetchEntry, renewed bool) error {
	d.mu.Lock()
	_, done := d.footers[e.xorb]
	d.mu.Unlock()
	if done {
		return nil
	}
	// The terms name chunks up to some index of the xorb, which has at
	// least that many: the footer of that many chunks is the most that can
	// be asked for without reaching into records the URL may not sign. A
	// longer footer takes a second request of its exact size.
	var least uint32
	for _, t := range d.plan.terms {
		if t.Hash == e.xorb {
			least = max(least, t.Range.End)
		}
	}
	var known []xethash.Entry
	bad := 0 // footers that did not check out: damaged on the way, perhaps
	for want := int64(xorb.FooterSize(int(least))); known == nil; {
		tail, size, status, err := d.suffix(e, want)
		if err != nil {
			return err
		}
		if status == statusForbidden && !renewed {
			return &HTTPError{Op: "fetch the footer of xorb " + e.xorb.String(), Method: "GET", URL: "(signed xorb URL)", Status: status, Attempts: 1}
		}
		if status != statusPartialContent && status != statusOK {
			break // no footer served (403 or 416)
		}
		f, err := xorb.ParseFooterTail(tail, size)
		if errors.Is(err, xorb.ErrShortTail) && len(tail) >= 4 {
			need := int64(binary.LittleEndian.Uint32(tail[len(tail)-4:])) + 4
			if need > want && need <= size {
				want = need
				continue
			}
		}
		if err == nil {
			if known, err = footerEntries(f, e.xorb); err == nil {
				d.mu.Lock()
				d.ends[e.xorb] = f.BoundarySection.ChunkBoundaryOffsets
				d.mu.Unlock()
			}
		}
		if err != nil {
			if bad++; bad <= damagedRetries {
				continue
			}
			return fmt.Errorf("%w: xorb %s: its footer: %v", ErrVerify, e.xorb, err)
		}
	}
	if known == nil && d.strict {
		return fmt.Errorf("%w: the server does not serve xorb %s's footer, so a range of it cannot be checked", ErrVerify, e.xorb)
	}
	d.mu.Lock()
	d.footers[e.xorb] = known
	d.mu.Unlock()
	return nil
}

// footerEntries returns the chunks a footer lists, after checking that
// they hash to the xorb x.
func footerEntries(f *xorb.Footer, x xethash.Hash) ([]xethash.Entry, error) {
	unpacked := f.BoundarySection.UnpackedChunkOffsets
	entries := make([]xethash.Entry, len(unpacked))
	var prev uint32
	for i, u := range unpacked {
		entries[i] = xethash.Entry{Hash: f.HashSection.Hashes[i], Size: uint64(u - prev)}
		prev = u
	}
	if got := xethash.Xorb(entries); got != x || f.Hash != x {
		return nil, fmt.Errorf("it describes xorb %s", got)
	}
	return entries, nil
}

// suffix fetches the last n bytes of e's xorb, returning them with the
// xorb's size; status 403 or 416 (no footer for this URL), or 0 for an
// answer without the xorb's size, is returned rather than failed.
func (d *downloader) suffix(e *fetchEntry, n int64) (tail []byte, size int64, status int, err error) {
	op := "fetch the footer of xorb " + e.xorb.String()
	err = d.c.call(d.ctx, op, noAuth, []int{statusForbidden, statusRangeNotSatisfiable},
		func(string) (*Request, error) {
			req, err := NewRequest(d.ctx, "GET", e.url, nil)
			if err == nil {
				req.Header.Set("Range", fmt.Sprintf("bytes=-%d", n))
			}
			return req, err
		}, func(resp *Response) error {
			status = resp.StatusCode
			switch status {
			case statusPartialContent:
				total, ok := ContentRangeSize(resp.Header.Get("Content-Range"))
				if !ok {
					status = 0 // no size given: the footer cannot be located
					return nil
				}
				size = total
			case statusOK: // the whole xorb
			default:
				return nil
			}
			b, err := io.ReadAll(io.LimitReader(resp.Body, xorb.MaxSize+1<<20))
			if err != nil {
				return transient(err)
			}
			if status == statusOK {
				size = int64(len(b))
				b = b[max(0, int64(len(b))-n):]
			}
			tail = b
			return nil
		})
	return tail, size, status, err
}

// get fetches byte ranges of e's xorb in one request, and decodes and
// checks their chunks: take gets each range, in order, once it is whole
// (as it arrives, where the answer is one stream). With resume (ranges
// this client cut from one span: pieces), they are asked for as one span,
// and a request sent again asks only for the ranges not taken yet;
// without, every request asks for exactly ranges (a v2 URL is signed for
// that set), and take may see a range again after a retry. The bodies are
// job j's, in the download buffer.
func (d *downloader) get(e *fetchEntry, ranges []fetchRange, resume bool, j *job, take func(r fetchRange, got *fetched) error) error {
	d.mu.Lock()
	known := d.footers[e.xorb]
	d.mu.Unlock()
	op := "fetch xorb " + e.xorb.String()
	taken, damagedAt, again := 0, -1, 0
	for {
		err := d.c.call(d.ctx, op, noAuth, nil, func(string) (*Request, error) {
			if !resume {
				taken = 0
			}
			req, err := NewRequest(d.ctx, "GET", e.url, nil)
			if err == nil {
				req.Header.Set("Range", rangeHeader(ranges[taken:], resume))
				var n int64
				for _, r := range ranges[taken:] {
					n += r.bytes.End - r.bytes.Start + 1
				}
				req.bulk = n >= BulkRequest
			}
			return req, err
		}, func(resp *Response) (err error) {
			if err := d.buf.begin(d.ctx, j); err != nil {
				return err
			}
			defer d.stallOn(&err, j)
			decs := make([]*rangeDecoder, len(ranges)-taken)
			for i, r := range ranges[taken:] {
				decs[i] = &rangeDecoder{xorb: e.xorb, r: r, known: known, pool: d.pool}
			}
			return readRanges(resp, decs, func(dec *rangeDecoder) error {
				taken++
				return take(dec.r, &dec.got)
			})
		})
		var bad *damaged
		if err == nil || !errors.As(err, &bad) {
			return err
		}
		// Bytes that do not decode or hash right may have been damaged on
		// the way: they are fetched again at once, damagedRetries times.
		if taken != damagedAt {
			damagedAt, again = taken, 0
		}
		if again++; again > damagedRetries {
			return bad.err
		}
	}
}

// stallOn tells the buffer that job j stalls when *err is set (a body
// that failed is asked for again).
func (d *downloader) stallOn(err *error, j *job) {
	if *err != nil {
		d.buf.stall(j)
	}
}

// damagedRetries is how many times bytes that fail their checks are
// fetched again: enough for damage in transit, few enough that damage at
// the source is reported at once.
const damagedRetries = 1

// rangeHeader is the Range header that asks for ranges, joining those
// that touch into one span when join is set.
func rangeHeader(ranges []fetchRange, join bool) string {
	spec := []byte("bytes=")
	for i, r := range ranges {
		switch {
		case i == 0:
			spec = strconv.AppendInt(spec, r.bytes.Start, 10)
		case !join || r.bytes.Start != ranges[i-1].bytes.End+1:
			spec = append(strconv.AppendInt(append(spec, '-'), ranges[i-1].bytes.End, 10), ',')
			spec = strconv.AppendInt(spec, r.bytes.Start, 10)
		}
	}
	spec = strconv.AppendInt(append(spec, '-'), ranges[len(ranges)-1].bytes.End, 10)
	return string(spec)
}

// contiguous reports whether each decoder's range starts where the one
// before it ends.
func contiguous(decs []*rangeDecoder) bool {
	for i := 1; i < len(decs); i++ {
		if decs[i].r.bytes.Start != decs[i-1].r.bytes.End+1 {
			return false
		}
	}
	return true
}

// damaged is a fetched range whose bytes do not decode or hash right.
type damaged struct{ err error }

func (e *damaged) Error() string { return e.err.Error() }

// rangeDecoder decodes the chunk records of one fetched range as its bytes
// arrive, and hashes each chunk, checking it against the xorb's footer when
// known: each record as soon as it is whole, so that the work on a range
// overlaps its transfer. It holds exactly the chunks the range names.
type rangeDecoder struct {
	xorb  xethash.Hash
	r     fetchRange
	known []xethash.Entry
	b     []byte // the range's bytes; those past what feed was given are not read yet
	off   int    // where the next record starts
	dec   xorb.Decoder
	got   fetched
	pool  *bufPool // where a range read on its own gets its buffer
}

// start gives the decoder the buffer the range is read into.
func (d *rangeDecoder) start(b []byte) {
	n := int(d.r.chunks.End - d.r.chunks.Start)
	// n comes from the server: believe it only as far as the bytes go.
	n = min(n, len(b)/xorb.HeaderSize+1)
	d.b = b
	d.got = fetched{chunks: make([][]byte, 0, n), hashes: make([]xethash.Hash, 0, n)}
}

// feed decodes every record that the first filled bytes hold whole; at
// filled == len(b), every record, and checks that they are the range's.
func (d *rangeDecoder) feed(filled int) error {
	want := int(d.r.chunks.End - d.r.chunks.Start)
	for d.off < filled {
		if n, ok := xorb.RecordLen(d.b[d.off:filled]); filled < len(d.b) && (!ok || n > filled-d.off) {
			return nil // the rest of the record is on its way
		}
		if len(d.got.chunks) == want {
			return d.fail("%d bytes left after the %d chunk records the range should hold", len(d.b)-d.off, want)
		}
		data, used, err := d.dec.Chunk(d.b[d.off:], d.r.bytes.Start+int64(d.off))
		if err != nil {
			return d.fail("%v", err)
		}
		h := xethash.Chunk(data)
		at := int(d.r.chunks.Start) + len(d.got.chunks)
		if d.known != nil && (at >= len(d.known) || h != d.known[at].Hash) {
			return d.fail("chunk %d does not hash to what the xorb's footer says", at)
		}
		d.got.chunks = append(d.got.chunks, data)
		d.got.hashes = append(d.got.hashes, h)
		d.off += used
	}
	if filled == len(d.b) && len(d.got.chunks) != want {
		return d.fail("holds %d chunk records, the reconstruction says %d", len(d.got.chunks), want)
	}
	return nil
}

func (d *rangeDecoder) fail(format string, args ...any) error {
	return &damaged{fmt.Errorf("%w: xorb %s bytes %d-%d: %s", ErrVerify, d.xorb, d.r.bytes.Start, d.r.bytes.End, fmt.Sprintf(format, args...))}
}

// whole decodes a range read in one piece.
func (d *rangeDecoder) whole(b []byte) error {
	d.start(b)
	return d.feed(len(b))
}

// readRanges reads the answer to a Range request into the decoders of
// the requested ranges, one each, and hands each to take once it is whole,
// in order: a 206 of one span (decoded as it arrives, each range taken as
// soon as its last byte is in), a multipart/byteranges body, or a 200
// with the whole object.
func readRanges(resp *Response, decs []*rangeDecoder, take func(*rangeDecoder) error) error {
	takeAll := func() error {
		for _, d := range decs {
			if err := take(d); err != nil {
				return err
			}
		}
		return nil
	}
	if resp.StatusCode == statusOK {
		// The whole xorb: cut the ranges out of it.
		var last int64
		for _, d := range decs {
			last = max(last, d.r.bytes.End+1)
		}
		b, err := readUpTo(resp.Body, last)
		if err != nil {
			return transient(err)
		}
		for _, d := range decs {
			if int64(len(b)) <= d.r.bytes.End {
				return fmt.Errorf("%w: the server sent %d bytes, bytes %d-%d were asked for", ErrVerify, len(b), d.r.bytes.Start, d.r.bytes.End)
			}
			if err := d.whole(b[d.r.bytes.Start : d.r.bytes.End+1]); err != nil {
				return err
			}
		}
		return takeAll()
	}
	if resp.StatusCode != statusPartialContent {
		return fmt.Errorf("unexpected status %d for a range request", resp.StatusCode)
	}
	mt, params, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	if mt != "multipart/byteranges" {
		start, _, ok := contentRange(resp.Header.Get("Content-Range"))
		if !ok {
			if !contiguous(decs) {
				return fmt.Errorf("%w: %d ranges asked for, one unlabelled range received", ErrVerify, len(decs))
			}
			start = decs[0].r.bytes.Start
		}
		if start == decs[0].r.bytes.Start && contiguous(decs) {
			return readStream(resp.Body, decs, take)
		}
		// A server may merge ranges into one; take it if it covers all.
		b, err := io.ReadAll(io.LimitReader(resp.Body, xorb.MaxSize))
		if err != nil {
			return transient(err)
		}
		for _, d := range decs {
			lo, hi := d.r.bytes.Start-start, d.r.bytes.End-start+1
			if lo < 0 || hi > int64(len(b)) {
				return fmt.Errorf("%w: the answer does not cover bytes %d-%d", ErrVerify, d.r.bytes.Start, d.r.bytes.End)
			}
			if err := d.whole(b[lo:hi]); err != nil {
				return err
			}
		}
		return takeAll()
	}
	mr := multipart.NewReader(resp.Body, params["boundary"])
	for {
		p, err := mr.NextPart()
		if err == io.EOF {
			break
		}
		if err != nil {
			return transient(err)
		}
		start, end, ok := contentRange(p.Header.Get("Content-Range"))
		if !ok {
			return fmt.Errorf("%w: a multipart part has no usable Content-Range", ErrVerify)
		}
		if !covers(decs, start, end) {
			return fmt.Errorf("%w: a multipart part holds bytes %d-%d, which were not asked for", ErrVerify, start, end)
		}
		b, err := readExactly(p, end-start+1)
		if err != nil {
			return transient(fmt.Errorf("multipart part %d-%d: %w", start, end, err))
		}
		for _, d := range decs {
			if d.r.bytes.Start >= start && d.r.bytes.End <= end && d.b == nil {
				if err := d.whole(b[d.r.bytes.Start-start : d.r.bytes.End-start+1]); err != nil {
					return err
				}
			}
		}
	}
	for _, d := range decs {
		if d.b == nil {
			return fmt.Errorf("%w: the multipart answer lacks bytes %d-%d", ErrVerify, d.r.bytes.Start, d.r.bytes.End)
		}
	}
	return takeAll()
}

// readStream reads a body that holds decs' ranges one after another, each
// into a buffer of its size, decoding as the bytes land, and hands each to
// take once whole; the last once the body has ended where it should.
func readStream(r io.Reader, decs []*rangeDecoder, take func(*rangeDecoder) error) error {
	for i, d := range decs {
		n := d.r.bytes.End - d.r.bytes.Start + 1
		var b []byte
		if d.pool != nil {
			b = d.pool.get(n)
		} else {
			b = make([]byte, n)
		}
		d.start(b)
		d.got.raw = b
		for filled := 0; filled < len(b); {
			k, err := r.Read(b[filled:])
			if k > 0 {
				filled += k
				if err := d.feed(filled); err != nil {
					return err
				}
			}
			if err == io.EOF && filled < len(b) {
				err = io.ErrUnexpectedEOF
			}
			if err != nil && err != io.EOF {
				return transient(fmt.Errorf("range body: bytes %d-%d ended early (%d of %d bytes): %w", d.r.bytes.Start, d.r.bytes.End, filled, n, err))
			}
		}
		if i == len(decs)-1 {
			if k, _ := io.ReadFull(r, make([]byte, 1)); k > 0 {
				return transient(errors.New("range body: the body is longer than the bytes asked for"))
			}
		}
		if err := take(d); err != nil {
			return err
		}
		decs[i] = nil // the range is the taker's: hold no piece longer than it does
	}
	return nil
}

// readExactly reads a body of exactly n bytes into one buffer of that
// size (io.ReadAll would grow one by doubling: for a 64 MiB xorb, twice the
// memory and many copies).
func readExactly(r io.Reader, n int64) ([]byte, error) {
	b := make([]byte, n)
	if _, err := io.ReadFull(r, b); err != nil {
		return nil, fmt.Errorf("the body ended early (%d bytes expected): %w", n, err)
	}
	var extra [1]byte
	if k, _ := io.ReadFull(r, extra[:]); k > 0 {
		return nil, fmt.Errorf("the body is longer than the %d bytes expected", n)
	}
	return b, nil
}

// readUpTo reads at most n bytes, into one buffer.
func readUpTo(r io.Reader, n int64) ([]byte, error) {
	b := make([]byte, n)
	k, err := io.ReadFull(r, b)
	if err == io.ErrUnexpectedEOF || err == io.EOF {
		err = nil
	}
	return b[:k], err
}

// covers reports whether bytes [start, end] lie within the ranges asked for.
func covers(decs []*rangeDecoder, start, end int64) bool {
	lo, hi := int64(-1), int64(-1)
	for _, d := range decs {
		if lo < 0 || d.r.bytes.Start < lo {
			lo = d.r.bytes.Start
		}
		hi = max(hi, d.r.bytes.End)
	}
	return start <= end && start >= lo && end <= hi
}

// ContentRangeSize reads the size from a Content-Range header, "bytes a-b/size".
func ContentRangeSize(s string) (int64, bool) {
	_, total, ok := strings.Cut(s, "/")
	if !ok {
		return 0, false
	}
	n, err := strconv.ParseInt(strings.TrimSpace(total), 10, 64)
	return n, err == nil && n > 0
}

// contentRange reads "bytes a-b/size".
func contentRange(s string) (start, end int64, ok bool) {
	spec, found := strings.CutPrefix(strings.TrimSpace(s), "bytes ")
	if !found {
		return 0, 0, false
	}
	spec, _, _ = strings.Cut(spec, "/")
	as, bs, found := strings.Cut(spec, "-")
	if !found {
		return 0, 0, false
	}
	a, err1 := strconv.ParseInt(as, 10, 64)
	b, err2 := strconv.ParseInt(bs, 10, 64)
	if err1 != nil || err2 != nil || b < a {
		return 0, 0, false
	}
	return a, b, true
}
