package pipeline

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"sync"
	"sync/atomic"

	"github.com/xetkit/xetkit/internal/gitfile"
	"github.com/xetkit/xetkit/internal/sha256x"
	"github.com/xetkit/xetkit/shard"
	"github.com/xetkit/xetkit/xethash"
	"github.com/xetkit/xetkit/xorb"
)

// Fragmentation prevention (§10.4): a run of deduplicated chunks inside a
// file is used only if it is at least this long, or touches the start or
// end of the file; a shorter one is uploaded again rather than splitting
// the file into more terms for a small saving.
const (
	minRunChunks = 8
	minRunBytes  = 1 << 20
)

// slot is a xorb a session's chunks refer to: one it builds, or one the
// store already holds.
type slot struct {
	hash   xethash.Hash // known once sealed, or from the start for stored xorbs
	remote bool
	// resumed: stored by an earlier upload (Uploader.Resume), so not
	// sent, but listed in the shard as this session's own.
	resumed bool
	// Set when sealed, for the shard and progress.
	info      *shard.Xorb
	fileBytes map[int]int64 // new bytes per file index
	// recorded closes once Uploader.Resume has recorded the xorb as
	// being sent (nil: nothing to wait for).
	recorded chan struct{}
}

// ref is where one chunk of a file lives: chunk index in a slot.
type ref struct {
	slot  int32
	index uint32
}

// session is one Run.
type session struct {
	u     *Uploader
	store Store
	ctx   context.Context

	slots []*slot
	// local maps chunks placed in this session's xorbs to their place.
	local map[xethash.Hash]ref
	q     *queries // the global dedupe queries
	gate  Gate     // nil: every file is uploaded

	builder xorb.Builder
	cur     int32 // slot of the xorb being built, -1 if none
	curNew  map[int]int64

	queue  chan sealed            // for the uploaders
	spare  chan []byte            // xorb buffers the uploaders are done with
	slotOf map[xethash.Hash]int32 // slot of each xorb by hash
	wg     sync.WaitGroup
	fail   context.CancelCauseFunc

	worked atomic.Int64 // bytes hashed or placed here since the last Yield

	pmu   sync.Mutex // guards prog and serializes OnProgress
	prog  []Progress
	files []fileBlock
	seen  map[xethash.Hash]bool // files already in the shard
}

// sealed is a finished xorb on its way to the store.
type sealed struct {
	built *xorb.Built
	slot  *slot
}

// fileBlock is a file's entry for the shard, with its terms' xorbs still
// named by slot: the last xorb may not be sealed when the file ends.
type fileBlock struct {
	hash         xethash.Hash
	sha256       xethash.Hash
	terms        []slotTerm
	verification []xethash.Hash
}

type slotTerm struct {
	slot       int32
	start, end uint32
	unpacked   uint32
}

// Run is the one upload pipeline (draft §11): it chunks and hashes
// the sources (on u.Offload if set), deduplicates their chunks (within the
// session, against u's cache, and through store's dedupe answers), packs
// the new ones into xorbs that it hands to store.PutXorb as they are
// sealed, and registers the files and xorbs with store.PutShard. Whatever
// the store, the same sources and settings give the same xorbs and shards:
// a Collector sees byte for byte what the CAS would receive.
func (u *Uploader) Run(ctx context.Context, store Store, sources []Source) ([]Result, error) {
	return u.RunGated(ctx, store, sources, nil)
}

// Gate decides, for each file of a session, whether it is uploaded: the
// Hub's preupload, which takes small text files inside the commit
// (package hubclient). The session offers it each file's size and first
// bytes as soon as it has read them, in file order, reads and hashes the
// file meanwhile, and places the file's chunks only once Decide has said
// yes; a file left out gets a Result with Inline set. So each file is
// read once, and the hub's answers come while the files are read.
type Gate interface {
	// Offer gives file's size (-1 if not known) and first bytes (up to
	// SampleSize, fewer only for a shorter file; the Gate's to keep). It
	// must not block.
	Offer(file int, size int64, sample []byte)
	// Flush asks for an answer about every file offered so far: the
	// session can read no further until one comes (placement waits, and
	// the reading waits for placement), or has read every file.
	Flush()
	// Decide returns whether file is uploaded, once that is known.
	Decide(ctx context.Context, file int) (bool, error)
}

// SampleSize is how much of a file's start a Gate is offered: the sample
// the Hub's preupload takes.
const SampleSize = 512

// RunGated is Run, with gate deciding which files are uploaded (Gate);
// nil: all of them.
func (u *Uploader) RunGated(ctx context.Context, store Store, sources []Source, gate Gate) ([]Result, error) {
	ctx, fail := context.WithCancelCause(ctx)
	defer fail(nil)
	s := &session{
		u: u, store: store, ctx: ctx, fail: fail, cur: -1, gate: gate,
		local:  map[xethash.Hash]ref{},
		slotOf: map[xethash.Hash]int32{},
		seen:   map[xethash.Hash]bool{},
		queue:  make(chan sealed),
		spare:  make(chan []byte, 2),
		prog:   make([]Progress, len(sources)),
	}
	s.q = newQueries(s, len(sources))
	defer func() {
		fail(nil) // ends any query whose answer no one waits for
		s.q.wg.Wait()
	}()
	for i, src := range sources {
		s.prog[i] = Progress{Index: i, Name: src.Name, Size: src.Size}
	}
	u.checkUnconfirmed(ctx, store)
	for range u.concurrency(u.xorbSize()) {
		s.wg.Go(s.uploader)
	}
	results := make([]Result, len(sources))
	err := s.addFiles(sources, results)
	if err == nil {
		err = s.seal()
	}
	if err != nil {
		fail(err) // stop the uploaders: the shard will not be sent
	}
	close(s.queue)
	s.wg.Wait()
	s.settleRecords()
	if err != nil {
		return nil, err
	}
	if cause := context.Cause(ctx); cause != nil && !errors.Is(cause, context.Canceled) {
		return nil, cause // an uploader failed
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if err := s.uploadShards(); err != nil {
		return s.shardFailed(sources, gate, err)
	}
	// Later calls dedupe against what this one stored.
	for _, sl := range s.slots {
		if !sl.remote && sl.info != nil {
			hashes := make([]xethash.Hash, len(sl.info.Chunks))
			for i, ch := range sl.info.Chunks {
				hashes[i] = ch.Hash
			}
			u.known().addPlain(sl.hash, hashes)
		}
	}
	for i := range s.prog {
		s.progress(i, func(p *Progress) { p.Done = true })
	}
	return results, nil
}

// addFiles reads, chunks and hashes the sources one after another (the
// small ones read ahead, several at once), and has placement deduplicate
// their chunks and pack the new ones into xorbs, writing each file's
// block for the shard and its result.
func (s *session) addFiles(sources []Source, results []Result) error {
	for _, src := range sources {
		if src.Open == nil {
			return fmt.Errorf("upload %s: Source.Open is nil", src.Name)
		}
	}
	pl := s.startPlacement(sources, results)
	ra := startReadAhead(s.ctx, sources)
	defer ra.close()
	o := s.u.Offload
	r := &chunkReader{ctx: s.ctx, o: o.encoding(), records: true,
		emit: func(file int, chunks []chunkIn) error {
			s.q.mark(file, chunks)
			return pl.add(file, chunks)
		},
		end:    pl.end,
		onRead: func(file int, t int64) { s.progress(file, func(p *Progress) { p.Read = t }) },
		worked: s.work,
	}
	err := func() error {
		for i, src := range sources {
			if err := s.readFile(r, ra, i, src); err != nil {
				return err
			}
		}
		if s.gate != nil {
			s.gate.Flush() // every file is offered
		}
		return r.drain()
	}()
	if errors.Is(err, errPlacement) {
		return pl.finish(false) // placement's own error
	}
	if perr := pl.finish(err != nil); err == nil {
		err = perr
	}
	return err
}

// readFile reads one source through r, once the Gate, if any, is
// offered its size and first bytes.
func (s *session) readFile(r *chunkReader, ra *readAhead, i int, src Source) error {
	start, done := ra.take(i)
	if start.err != nil {
		return fmt.Errorf("upload %s: %w", src.Name, start.err)
	}
	defer done()
	head, rest := start.head, start.rest
	size := src.Size
	if rest == nil {
		size = int64(len(head))
	} else if sz, ok := rest.(sizer); ok && size < 0 {
		size = sz.Size()
	}
	if size != src.Size {
		s.progress(i, func(p *Progress) { p.Size = size })
	}
	if s.gate != nil {
		sample := head[:min(SampleSize, len(head))]
		s.q.gitFile[i] = gitfile.Regular(size, sample)
		s.gate.Offer(i, size, sample)
	}
	data, rd := head, io.Reader(nil)
	if rest != nil {
		data, rd = nil, io.MultiReader(bytes.NewReader(head), rest)
	}
	// The SHA-256: here, or where the Offload says; a small file's with
	// its chunks, where an Offload encodes them (read).
	var sum Digest
	var err error
	switch o := s.u.Offload; {
	case start.sha != nil:
		sum = knownSHA(*start.sha)
	case o.encoding() != nil && data != nil && len(data) <= o.BatchSize():
	case o != nil && o.SHA256 != nil:
		if sum, err = o.SHA256(); err != nil {
			return fmt.Errorf("upload %s: %w", src.Name, err)
		}
	default:
		sum = &localSHA{sha256x.New()}
	}
	if _, err := r.read(i, rd, data, sum); err != nil && !errors.Is(err, errPlacement) {
		return fmt.Errorf("upload %s: %w", src.Name, err)
	} else if err != nil {
		return err
	}
	return nil
}

// sizer is a reader that can tell its source's size where the Source did
// not (a browser's File, asked only once it is known to be large).
type sizer interface{ Size() int64 }

// xorbSize is the chunk data at which a xorb is sealed.
func (u *Uploader) xorbSize() int {
	if u.XorbSize <= 0 {
		return DefaultXorbSize
	}
	return min(u.XorbSize, xorb.MaxBytes)
}

// known returns the client's chunk cache.
func (u *Uploader) known() *knownChunks {
	u.cacheOnce.Do(func() { u.cache = &knownChunks{} })
	return u.cache
}

// work counts n bytes hashed or placed here, and lets the host's event
// loop turn (Offload.Yield) after each yieldEvery of them.
func (s *session) work(n int) error {
	o := s.u.Offload
	if o == nil || o.Yield == nil {
		return nil
	}
	if s.worked.Add(int64(n)) < yieldEvery {
		return nil
	}
	s.worked.Store(0)
	return o.Yield()
}

// progress applies an update to file i's progress and reports it.
func (s *session) progress(i int, update func(*Progress)) {
	s.pmu.Lock()
	defer s.pmu.Unlock()
	update(&s.prog[i])
	if s.u.OnProgress != nil {
		s.u.OnProgress(s.reported(i))
	}
}

// fileRun is the per-file state of the chunk loop.
type fileRun struct {
	s       *session
	idx     int
	skip    bool            // the Gate leaves it out
	size    int64           // Source.Size, -1 if unknown
	entries []xethash.Entry // every chunk, for the file hash
	refs    []ref
	// pending is a run of deduplicated chunks not yet long enough to be
	// used (their data is kept in case they must be uploaded after all).
	pending     []chunkIn
	pendingSize int64
	runOK       bool  // the current dedupe run is accepted
	runStart    int   // chunk index where the current dedupe run began
	newBytes    int64 // bytes placed in new xorbs
	deduped     int64
	hashed      int64 // bytes of the chunks seen so far
	pos         int64 // offset of the chunk being placed
	resumed     int64 // bytes of chunks in resumed xorbs, among refs[:resumedUpTo]
	resumedUpTo int
}

// chunkIn is one chunk of a file as the session takes it: its hash and
// size, and either its bytes (compressed here if it is new) or its chunk
// record (from an Offload). Both are only valid during the call they are
// passed to.
type chunkIn struct {
	hash   xethash.Hash
	size   int
	data   []byte
	record []byte
	first  bool // the file's first chunk
	wait   int  // the dedupe queries sent up to it (queries.go)
}

// chunks takes the next chunks of the file.
func (f *fileRun) chunks(chunks []chunkIn) error {
	if len(chunks) == 0 {
		return nil
	}
	s := f.s
	hashedBefore := f.hashed
	// Record every hash first, so progress never shows bytes uploaded
	// before they are hashed.
	f.pos = f.hashed
	for _, c := range chunks {
		f.entries = append(f.entries, xethash.Entry{Hash: c.hash, Size: uint64(c.size)})
		f.hashed += int64(c.size)
	}
	hashed := f.hashed
	s.progress(f.idx, func(p *Progress) { p.Hashed = hashed })
	for i := range chunks {
		c := chunks[i]
		at, ok, err := s.find(&chunks[i])
		if err != nil {
			return err
		}
		if ok {
			f.dedupe(c, at)
			f.pos += int64(c.size)
			continue
		}
		if err := f.endRun(false); err != nil {
			return err
		}
		if at, err = s.addNew(c, f); err != nil {
			return err
		}
		f.refs = append(f.refs, at)
		f.newBytes += int64(c.size)
		f.pos += int64(c.size)
	}
	resumed := f.resumedBytes()
	s.progress(f.idx, func(p *Progress) { p.Deduped = f.deduped; p.Resumed = resumed })
	return s.work(int(f.hashed - hashedBefore))
}

// dedupe adds a chunk found stored to the current run.
func (f *fileRun) dedupe(c chunkIn, at ref) {
	if len(f.pending) == 0 && !f.runOK {
		f.runStart = len(f.refs)
	}
	f.refs = append(f.refs, at)
	if f.runOK {
		f.deduped += int64(c.size)
		return
	}
	c.data, c.record = bytes.Clone(c.data), bytes.Clone(c.record)
	f.pending = append(f.pending, c)
	f.pendingSize += int64(c.size)
	if len(f.pending) >= minRunChunks || f.pendingSize >= minRunBytes {
		f.acceptRun()
	}
}

func (f *fileRun) acceptRun() {
	f.runOK = true
	f.deduped += f.pendingSize
	f.pending, f.pendingSize = nil, 0
}

// endRun closes the current dedupe run, before a new chunk or at the end
// of the file. A short run is used only at the start or end of the file;
// otherwise its chunks are uploaded again, as new chunks.
func (f *fileRun) endRun(atEOF bool) error {
	defer func() { f.runOK = false }()
	if len(f.pending) == 0 {
		return nil
	}
	if atEOF || f.runStart == 0 {
		f.acceptRun()
		return nil
	}
	f.refs = f.refs[:f.runStart]
	pending := f.pending
	f.pending, f.pendingSize = nil, 0
	for _, p := range pending {
		at, err := f.s.addNew(p, f)
		if err != nil {
			return err
		}
		f.refs = append(f.refs, at)
		f.newBytes += int64(p.size)
	}
	return nil
}

// find looks a chunk up: this session's xorbs, the client's cache, the
// xorbs of earlier unfinished uploads (Uploader.Resume), then, where
// dedupe queries were sent up to it, their answers (queries.go).
func (s *session) find(c *chunkIn) (ref, bool, error) {
	if at, ok := s.local[c.hash]; ok {
		return at, true, nil
	}
	known := s.u.known()
	if loc, ok := known.lookup(c.hash, s.u.clock()); ok {
		return s.remoteRef(loc), true, nil
	}
	if at, ok := s.findResumed(c.hash); ok {
		return at, true, nil
	}
	if c.wait > s.q.answered {
		if err := s.q.await(c.wait); err != nil {
			return ref{}, false, err
		}
		if loc, ok := known.lookup(c.hash, s.u.clock()); ok {
			return s.remoteRef(loc), true, nil
		}
	}
	return ref{}, false, nil
}

func (s *session) remoteRef(loc chunkLoc) ref {
	if i, ok := s.slotOf[loc.xorb]; ok {
		return ref{i, loc.index}
	}
	i := int32(len(s.slots))
	s.slots = append(s.slots, &slot{hash: loc.xorb, remote: true})
	s.slotOf[loc.xorb] = i
	return ref{i, loc.index}
}

// addNew puts a chunk into the xorb being built, sealing it first when
// full.
func (s *session) addNew(c chunkIn, f *fileRun) (ref, error) {
	limit := s.u.xorbSize()
	if s.cur < 0 {
		s.cur = int32(len(s.slots))
		s.slots = append(s.slots, &slot{})
		s.curNew = map[int]int64{}
		// Size the buffer for what is left of this file (at most a xorb)
		// rather than growing it by doubling: under WebAssembly memory
		// never shrinks, so the garbage of growth would stay.
		// (A re-placed short dedupe run lies before pos: minRunBytes.)
		// Room for the chunk data stored uncompressed at worst, a header
		// per chunk and the footer (Finish appends it).
		want := int64(limit + xorb.MaxSize - xorb.MaxBytes)
		if f.size >= 0 {
			left := f.size - f.pos + minRunBytes
			want = min(want, left+left/128+64<<10)
		}
		s.builder.Reset(s.buffer(int(want)))
	}
	s.builder.Encoder.Mode = s.u.Compression
	// A xorb ends where its chunk data would pass the limit, as the
	// reference client cuts them (its data, not its serialized size, so
	// xorbs end at the same chunks however they compress); the builder
	// itself enforces the format's limits.
	full := s.builder.NumChunks() > 0 && s.builder.Unpacked()+uint64(c.size) > uint64(limit)
	err := xorb.ErrFull
	if !full {
		if c.record != nil {
			err = s.builder.AddRecord(c.record, c.hash)
		} else {
			err = s.builder.AddHashed(c.data, c.hash)
		}
	}
	if errors.Is(err, xorb.ErrFull) {
		if err := s.seal(); err != nil {
			return ref{}, err
		}
		return s.addNew(c, f)
	}
	if err != nil {
		return ref{}, err
	}
	at := ref{s.cur, uint32(s.builder.NumChunks() - 1)}
	s.local[c.hash] = at
	s.curNew[f.idx] += int64(c.size)
	return at, nil
}

// seal finishes the xorb being built and hands it to the uploaders.
func (s *session) seal() error {
	if s.cur < 0 {
		return nil
	}
	built, err := s.builder.Finish()
	if err != nil {
		return err
	}
	sl := s.slots[s.cur]
	sl.hash = built.Hash
	sl.fileBytes = s.curNew
	// As in the reference client's upload shards, bytes on disk and chunk
	// flags are left 0: the hub has the xorb itself and decides which
	// chunks global dedupe answers for (the reference file's chunk 756 is
	// eligible by its hash, §10.3.1, and carries no flag in the reference
	// upload shard).
	info := &shard.Xorb{Hash: built.Hash, BytesInXorb: uint32(built.UncompressedSize)}
	info.Chunks = make([]shard.Chunk, len(built.Chunks))
	for i, c := range built.Chunks {
		info.Chunks[i] = shard.Chunk{Hash: c.Hash, ByteRangeStart: c.UnpackedOffset, UnpackedBytes: c.UncompressedSize}
	}
	sl.info = info
	s.recordSending(sl)
	s.slotOf[built.Hash] = s.cur
	s.cur, s.curNew = -1, nil
	select {
	case s.queue <- sealed{built, sl}:
		return nil
	case <-s.ctx.Done():
		sl.waitRecorded()
		return context.Cause(s.ctx)
	}
}

// buffer returns an empty buffer of capacity at least n for the next
// xorb: one an uploader is done with when there is one, so a long upload
// cycles through a few buffers instead of leaving one garbage buffer per
// xorb (which a WebAssembly runtime, whose memory never shrinks, would
// have to hold until collected).
func (s *session) buffer(n int) []byte {
	select {
	case b := <-s.spare:
		if cap(b) >= n {
			return b[:0]
		}
	default:
	}
	return make([]byte, 0, n)
}

// uploader sends sealed xorbs until the queue closes; the first failure
// stops the session.
func (s *session) uploader() {
	for x := range s.queue {
		x.slot.waitRecorded()
		if s.ctx.Err() != nil {
			continue // drain
		}
		if err := s.store.PutXorb(s.ctx, x.built); err != nil {
			s.fail(err)
			continue
		}
		s.recordStored(x.slot)
		// The hub has the bytes; nothing refers to them any more (a failed
		// attempt's request is long over: a retry waits first).
		select {
		case s.spare <- x.built.Bytes:
		default:
		}
		for file, n := range x.slot.fileBytes {
			s.progress(file, func(p *Progress) { p.Uploaded += n })
		}
	}
}
