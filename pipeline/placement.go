package pipeline

import (
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"sync/atomic"

	"github.com/xetkit/xetkit/xethash"
)

// Placement takes the chunks of every file of a session in order: it
// deduplicates them (see queries.go for the dedupe answers it may wait
// for) and packs the new ones into xorbs; at a file's end it writes the
// file's block for the shard and its Result. With Lookahead set it runs
// on a goroutine of its own, up to Lookahead bytes of chunks behind the
// reading and hashing, and goes from one file to the next as the reading
// does: reading overlaps compression, the dedupe queries sent as chunks
// are hashed are answered while placement catches up, and no file waits
// for the one before it (a folder of small files would otherwise pay a
// round trip each). Without, it runs in the reading goroutine (and waits
// for a Gate's answer about each file in turn). Either way it places the
// same chunks in the same order.

// Lookahead is how many bytes of chunks placement may lag behind the
// hashing (0: none, placement in the reading goroutine). Under
// WebAssembly, where the two take turns on one thread, it is there to
// let the hashing go on while placement waits for an answer.
var Lookahead = platformDefault(8<<20, 32<<20)

// placeItem is a run of one file's chunks, or its end: its size and
// SHA-256.
type placeItem struct {
	file   int
	chunks []chunkIn
	end    bool
	total  int64
	digest [32]byte
}

// placement is a session's placement (see above).
type placement struct {
	s       *session
	sources []Source
	results []Result
	cur     *fileRun // the file being placed

	// With Lookahead: batches of items for the goroutine, the one being
	// filled (items, the bytes they hold in buf), and how it ended.
	ch     chan []placeItem
	done   chan struct{}
	items  []placeItem
	buf    []byte
	err    error       // placement's first error, read once done is closed
	failed atomic.Bool // placement failed, or the reading gave up: drain
}

// errPlacement stops the reading when placement failed (finish gives
// placement's own error).
var errPlacement = errors.New("placement failed")

func (s *session) startPlacement(sources []Source, results []Result) *placement {
	pl := &placement{s: s, sources: sources, results: results}
	if Lookahead <= 0 {
		return pl
	}
	pl.ch = make(chan []placeItem, max(1, Lookahead/readSize))
	pl.done = make(chan struct{})
	go func() {
		defer close(pl.done)
		for batch := range pl.ch {
			for _, it := range batch {
				if pl.failed.Load() {
					continue // drained
				}
				if err := pl.place(it); err != nil {
					pl.err = err
					pl.failed.Store(true)
				}
			}
		}
	}()
	return pl
}

// add hands placement the next chunks of file (valid only during the
// call).
func (pl *placement) add(file int, chunks []chunkIn) error {
	if pl.ch == nil {
		return pl.place(placeItem{file: file, chunks: chunks})
	}
	if pl.failed.Load() {
		return errPlacement
	}
	size := 0
	for _, c := range chunks {
		size += len(c.data) + len(c.record)
	}
	if pl.buf == nil || len(pl.buf)+size > cap(pl.buf) {
		// A new buffer: the goroutine may still be reading the last one.
		pl.buf = make([]byte, 0, max(size, readSize))
	}
	keep := func(b []byte) []byte {
		if b == nil {
			return nil
		}
		start := len(pl.buf)
		pl.buf = append(pl.buf, b...)
		return pl.buf[start:len(pl.buf):len(pl.buf)]
	}
	out := make([]chunkIn, len(chunks))
	for i, c := range chunks {
		out[i] = c
		out[i].data, out[i].record = keep(c.data), keep(c.record)
	}
	pl.items = append(pl.items, placeItem{file: file, chunks: out})
	if len(pl.buf) >= readSize {
		return pl.send()
	}
	return nil
}

// end tells placement that file ends after the chunks given so far.
func (pl *placement) end(file int, total int64, digest [32]byte) error {
	it := placeItem{file: file, end: true, total: total, digest: digest}
	if pl.ch == nil {
		return pl.place(it)
	}
	if pl.failed.Load() {
		return errPlacement
	}
	pl.items = append(pl.items, it)
	return nil
}

// send hands the goroutine the items gathered.
func (pl *placement) send() error {
	if len(pl.items) == 0 {
		return nil
	}
	select {
	case pl.ch <- pl.items:
	default:
		// The reading is about to wait for placement, which may wait
		// for the Gate's answer about a file offered.
		if g := pl.s.gate; g != nil {
			g.Flush()
		}
		select {
		case pl.ch <- pl.items:
		case <-pl.s.ctx.Done():
			return context.Cause(pl.s.ctx)
		}
	}
	pl.items, pl.buf = nil, nil
	return nil
}

// finish waits for placement to take every item handed over (with
// abandon, it drops those not taken yet) and returns its error.
func (pl *placement) finish(abandon bool) error {
	if pl.ch == nil {
		return nil
	}
	if abandon {
		pl.failed.Store(true)
	} else if err := pl.send(); err != nil {
		abandon = true
	}
	close(pl.ch)
	<-pl.done
	if abandon {
		return nil
	}
	return pl.err
}

// place places one item.
func (pl *placement) place(it placeItem) error {
	s := pl.s
	src := pl.sources[it.file]
	if pl.cur == nil || pl.cur.idx != it.file {
		pl.cur = &fileRun{s: s, idx: it.file, size: src.Size}
		if s.gate != nil {
			if pl.ch == nil {
				s.gate.Flush() // placement in the reading goroutine: nothing more is read meanwhile
			}
			up, err := s.gate.Decide(s.ctx, it.file)
			if err != nil {
				return err
			}
			pl.cur.skip = !up
		}
	}
	f := pl.cur
	if f.skip {
		if it.end {
			pl.cur = nil
			s.progress(f.idx, func(p *Progress) { p.Hashed = it.total })
			pl.results[f.idx] = Result{Name: src.Name, Size: it.total, SHA256: hex.EncodeToString(it.digest[:]), Inline: true}
		}
		return nil
	}
	if len(it.chunks) > 0 {
		if err := f.chunks(it.chunks); err != nil {
			return fmt.Errorf("upload %s: %w", src.Name, err)
		}
	}
	if !it.end {
		return nil
	}
	pl.cur = nil
	if src.Size >= 0 && it.total != src.Size {
		return fmt.Errorf("upload %s: read %d bytes, but the source said %d", src.Name, it.total, src.Size)
	}
	if err := f.endRun(true); err != nil {
		return fmt.Errorf("upload %s: %w", src.Name, err)
	}
	fh := xethash.File(f.entries)
	s.addFileBlock(fh, f, it.digest)
	resumed := f.resumedBytes()
	s.progress(f.idx, func(p *Progress) { p.Hashed = it.total; p.Deduped = f.deduped; p.Resumed = resumed })
	pl.results[f.idx] = Result{
		Name: src.Name, Size: it.total, Hash: fh, SHA256: hex.EncodeToString(it.digest[:]),
		NewBytes: f.newBytes, DedupedBytes: f.deduped, ResumedBytes: resumed,
	}
	return nil
}
