package cas

// Resuming a download: the bytes an earlier attempt left in a file are
// checked, chunk by chunk, against the chunk hashes of the file's xorbs
// (their footers, themselves checked against the file hash) before they
// count; only what is missing or wrong is fetched again.

import (
	"context"
	"fmt"
	"io"
	"sort"
	"sync"

	"github.com/xetkit/xetkit/xethash"
)

// Partial is a file a download writes into at offsets and may find bytes
// of an earlier attempt in (an *os.File is one).
type Partial interface {
	io.ReaderAt
	io.WriterAt
	Truncate(size int64) error
}

// Resumed says what DownloadInto did with a partial file.
type Resumed struct {
	// Kept is the bytes already in the file that were checked against
	// their chunks' hashes and kept.
	Kept int64
	// Refetched is the bytes that were in the file but did not match
	// their chunks' hashes (a damaged or torn write), fetched again.
	Refetched int64
	// Fetched is the bytes written by this download (the file's size
	// less Kept).
	Fetched int64
}

// resumeGap: two ranges to fetch closer than this are fetched as one
// (fewer reconstructions, at the cost of a few bytes fetched again).
const resumeGap = 1 << 20

// DownloadInto writes the whole file with the given file hash (size bytes)
// into f, reusing what f's first have bytes already hold: each chunk there
// is read back and hashed, and counts only if it matches the chunk hash
// its xorb's footer gives (the footers checked against the file hash
// first, as a range download checks them); every other byte is fetched
// and checked as Download checks it, written at its offset. f is cut to
// size at the end. kept, if not nil, is told the bytes kept as they are
// known (for a progress display). With have 0 it is Download into f. On
// error, f holds only bytes that were checked, or the earlier attempt's
// unchecked bytes; a later DownloadInto checks them all again.
func (c *Client) DownloadInto(ctx context.Context, file xethash.Hash, size int64, f Partial, have int64, kept func(int64)) (Resumed, error) {
	var r Resumed
	if size < 0 {
		return r, fmt.Errorf("download %s: DownloadInto needs the file's size", file)
	}
	have = min(have, size)
	if file.IsZero() || have <= 0 || size <= SmallFile {
		n, err := c.DownloadSized(ctx, file, size, io.NewOffsetWriter(f, 0), nil)
		r.Fetched = n
		if err == nil {
			err = f.Truncate(size)
		}
		return r, err
	}
	p, err := c.reconstruction(ctx, file, nil)
	if err != nil {
		return r, err
	}
	whole := c.newDownloader(ctx, file, nil, p)
	seq, err := whole.chunkSequence()
	if err != nil {
		return r, fmt.Errorf("download %s: %w", file, err)
	}
	var total uint64
	for _, ch := range seq {
		total += ch.size
	}
	if total != uint64(size) {
		return r, fmt.Errorf("download %s: %w: the reconstruction gives %d bytes, the file has %d", file, ErrVerify, total, size)
	}
	hashes := make([]xethash.Hash, len(seq))
	for i, ch := range seq {
		hashes[i] = whole.footers[ch.xorb][ch.index].Hash
	}
	missing, err := checkPartial(ctx, f, seq, hashes, have, &r, kept)
	if err != nil {
		return r, fmt.Errorf("download %s: reading back what an earlier attempt wrote: %w", file, err)
	}
	// The ranges left go through the range download, checked against the
	// chunk list just checked (it rides in ctx, so it is not asked again).
	ctx = context.WithValue(ctx, checkedKey{}, &checked{file: file, seq: seq})
	for _, m := range missing {
		n, err := c.DownloadSized(ctx, file, size, io.NewOffsetWriter(f, m.Start), &Range{Start: m.Start, End: m.End})
		r.Fetched += n
		if err != nil {
			return r, err
		}
		if n != m.End-m.Start {
			return r, fmt.Errorf("download %s: %w: bytes %d-%d came back as %d bytes", file, ErrVerify, m.Start, m.End, n)
		}
	}
	return r, f.Truncate(size)
}

// checkPartial hashes the chunks of seq that lie wholly within f's first
// have bytes, several at once, and returns the byte ranges of the file
// that must be fetched: the chunks that do not match, and everything from
// have on (merged where closer than resumeGap).
func checkPartial(ctx context.Context, f io.ReaderAt, seq []seqChunk, hashes []xethash.Hash, have int64, r *Resumed, kept func(int64)) ([]Range, error) {
	offs := make([]int64, len(seq)+1)
	for i, ch := range seq {
		offs[i+1] = offs[i] + int64(ch.size)
	}
	// The chunks wholly in the file: [0, n).
	n := sort.Search(len(seq), func(i int) bool { return offs[i+1] > have })
	good := make([]bool, n)
	// Batches of about 4 MiB, read and hashed by a few goroutines (a
	// browser holds each in its page and in the module at once).
	const batch = 4 << 20
	type span struct{ from, to int }
	var spans []span
	for i := 0; i < n; {
		j := i + 1
		for j < n && offs[j+1]-offs[i] <= batch {
			j++
		}
		spans = append(spans, span{i, j})
		i = j
	}
	work := make(chan span)
	var wg sync.WaitGroup
	var mu sync.Mutex
	var firstErr error
	for range 4 {
		wg.Go(func() {
			var buf []byte
			for s := range work {
				need := offs[s.to] - offs[s.from]
				if int64(cap(buf)) < need {
					buf = make([]byte, need)
				}
				b := buf[:need]
				if _, err := f.ReadAt(b, offs[s.from]); err != nil && err != io.EOF {
					mu.Lock()
					firstErr = err
					mu.Unlock()
					continue
				}
				for i := s.from; i < s.to; i++ {
					good[i] = xethash.Chunk(b[offs[i]-offs[s.from]:offs[i+1]-offs[s.from]]) == hashes[i]
				}
			}
		})
	}
	for _, s := range spans {
		if ctx.Err() != nil {
			break
		}
		work <- s
	}
	close(work)
	wg.Wait()
	if firstErr != nil {
		return nil, firstErr
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	var missing []Range
	add := func(a, b int64) {
		if k := len(missing) - 1; k >= 0 && a-missing[k].End < resumeGap {
			missing[k].End = b
			return
		}
		missing = append(missing, Range{a, b})
	}
	for i := range n {
		if !good[i] {
			r.Refetched += int64(seq[i].size)
			add(offs[i], offs[i+1])
		}
	}
	if offs[n] < offs[len(seq)] {
		add(offs[n], offs[len(seq)])
	}
	r.Kept = offs[len(seq)]
	for _, m := range missing {
		r.Kept -= m.End - m.Start
	}
	if kept != nil && r.Kept > 0 {
		kept(r.Kept)
	}
	return missing, nil
}
