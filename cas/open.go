package cas

// Lazy, verified reads of one file: File, a random-access reader that
// fetches only the xorb ranges under what is read (each a verified range
// download) and keeps the last windows it read.

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync"

	"github.com/xetkit/xetkit/xethash"
)

// FileWindow is the unit a File fetches and keeps for small reads: a read
// of at most FileBigRead bytes fetches the aligned windows that cover it,
// so the next reads near it (a parser reading a header field by field)
// are answered from memory. One window costs one range download: its
// bytes, rounded out to whole chunks (64 KiB on average), and the footers
// of the xorbs that hold them (see Client.Open for the first read's).
const FileWindow = 256 << 10

// FileCacheBytes bounds the bytes of finished windows a File keeps (the
// least recently used go first): 16 windows. Reads in flight hold their
// own buffers besides, at most FileBigRead bytes each.
const FileCacheBytes = 4 << 20

// FileBigRead is the largest read that goes through the windows. A larger
// one is answered from the windows it starts in, if kept, and otherwise
// by one range download streamed to the reader, kept nowhere: large reads
// are sequential, and caching them would only push out the small ones.
const FileBigRead = 1 << 20

// RangeReader writes bytes [r.Start, r.End) of a file (fewer where the
// file ends first) to w, every byte checked before it is written, and
// returns the bytes written; on error, what it wrote is discarded.
// Client.DownloadSized is one, for a file hash.
type RangeReader func(ctx context.Context, w io.Writer, r Range) (int64, error)

// File reads one file lazily and verified: ReadAt fetches only the chunks
// under the bytes asked for (a range download, which checks every chunk
// against its xorb's footer and the range against the file hash), and
// keeps the last windows read (FileWindow, FileCacheBytes). A File may be
// read by several goroutines at once; two reads of one window fetch it
// once.
type File struct {
	ctx  context.Context
	read RangeReader

	mu      sync.Mutex
	size    int64 // -1 until a read reaches the end
	windows map[int64]*window
	cached  int64  // bytes of finished windows
	tick    uint64 // use counter, for least recently used
}

// window is one aligned window of the file: being fetched until ready is
// closed, then its bytes (shorter than FileWindow at the file's end) or
// the fetch's error.
type window struct {
	ready chan struct{}
	done  bool // ready is closed and err is nil (guarded by File.mu)
	data  []byte
	err   error
	used  uint64
}

// Open returns a File of the file with the given hash and size (-1 if
// unknown: then Size is -1 until a read reaches the end). Nothing is
// fetched until it is read. ctx bounds the reads of ReadAt.
//
// Each read is a range download (DownloadSized), which checks the range
// against the file's chunk list, itself checked against the file hash
// through the footers of all the file's xorbs (about 50 bytes per chunk of
// the file). The File keeps that checked list from its first read (48
// bytes per chunk: 0.07 % of the file's size), so later reads fetch only
// the reconstruction of their range, its chunks and the footers of the
// xorbs that hold them.
func (c *Client) Open(ctx context.Context, file xethash.Hash, size int64) *File {
	kept := &checked{file: file}
	return NewFile(ctx, size, func(ctx context.Context, w io.Writer, r Range) (int64, error) {
		return c.DownloadSized(context.WithValue(ctx, checkedKey{}, kept), file, size, w, &r)
	})
}

// checked holds the chunk list of one file once a range download has
// checked it against the file hash. It rides in the context of a File's
// range downloads (checkedKey), which take it from there instead of
// fetching and checking it again.
type checked struct {
	file xethash.Hash
	mu   sync.Mutex
	seq  []seqChunk
}

type checkedKey struct{}

// checkedChunks returns the checked chunk list of file that ctx carries,
// or nil.
func checkedChunks(ctx context.Context, file xethash.Hash) []seqChunk {
	k, _ := ctx.Value(checkedKey{}).(*checked)
	if k == nil || k.file != file {
		return nil
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.seq
}

// keepCheckedChunks gives the chunk list of file, checked against its
// hash, to the holder ctx carries, if any.
func keepCheckedChunks(ctx context.Context, file xethash.Hash, seq []seqChunk) {
	if k, _ := ctx.Value(checkedKey{}).(*checked); k != nil && k.file == file {
		k.mu.Lock()
		k.seq = seq
		k.mu.Unlock()
	}
}

// NewFile returns a File of size bytes (-1 if unknown) read through read,
// which must check what it writes. ctx bounds the reads of ReadAt.
func NewFile(ctx context.Context, size int64, read RangeReader) *File {
	if size < 0 {
		size = -1
	}
	return &File{ctx: ctx, read: read, size: size, windows: map[int64]*window{}}
}

// Size returns the file's size in bytes, or -1 while it is unknown.
func (f *File) Size() int64 {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.size
}

// CachedBytes returns the bytes of the windows the File keeps now (at most
// FileCacheBytes).
func (f *File) CachedBytes() int64 {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.cached
}

// ReadAt reads len(p) bytes at offset off (io.ReaderAt), within the
// context given to Open.
func (f *File) ReadAt(p []byte, off int64) (int, error) {
	return f.ReadAtContext(f.ctx, p, off)
}

// ReadAtContext is ReadAt within ctx.
func (f *File) ReadAtContext(ctx context.Context, p []byte, off int64) (int, error) {
	if off < 0 {
		return 0, fmt.Errorf("read at %d: negative offset", off)
	}
	want := int64(len(p))
	if size := f.Size(); size >= 0 {
		want = min(want, max(size-off, 0))
	}
	var n int64
	var err error
	if want > FileBigRead {
		n, err = f.WriteRange(ctx, &sliceWriter{b: p[:want]}, off, off+want)
	} else {
		n, err = f.readWindows(ctx, p[:want], off)
	}
	if err == nil && n < int64(len(p)) {
		err = io.EOF
	}
	return int(n), err
}

// readWindows reads p at off through the windows.
func (f *File) readWindows(ctx context.Context, p []byte, off int64) (int64, error) {
	last := (off + int64(len(p)) - 1) / FileWindow
	var n int64
	for n < int64(len(p)) {
		pos := off + n
		idx := pos / FileWindow
		data, err := f.window(ctx, idx, last)
		if err != nil {
			return n, err
		}
		at := pos - idx*FileWindow
		if at >= int64(len(data)) {
			break // the file ends here
		}
		n += int64(copy(p[n:], data[at:]))
		if len(data) < FileWindow {
			break
		}
	}
	return n, nil
}

// window returns window idx's bytes: kept, being fetched by another read
// (waited for), or fetched now together with the windows after it, up to
// last, that nobody has or is fetching.
func (f *File) window(ctx context.Context, idx, last int64) ([]byte, error) {
	for {
		f.mu.Lock()
		if w := f.windows[idx]; w != nil {
			f.tick++
			w.used = f.tick
			f.mu.Unlock()
			select {
			case <-w.ready:
			case <-ctx.Done():
				return nil, context.Cause(ctx)
			}
			// A read whose own context ended left the window; this one
			// fetches it again.
			if w.err != nil && isContextErr(w.err) && ctx.Err() == nil {
				continue
			}
			return w.data, w.err
		}
		run := []*window{}
		for i := idx; i <= last && f.windows[i] == nil; i++ {
			w := &window{ready: make(chan struct{})}
			f.windows[i] = w
			run = append(run, w)
		}
		size := f.size
		f.mu.Unlock()
		f.fetch(ctx, idx, run, size)
		return run[0].data, run[0].err
	}
}

func isContextErr(err error) bool {
	return errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded)
}

// fetch fills the windows of run, the first of which is window first, with
// one range download, and keeps them (or, on error, drops them, each
// carrying the error to the reads waiting for it).
func (f *File) fetch(ctx context.Context, first int64, run []*window, size int64) {
	start := first * FileWindow
	end := start + int64(len(run))*FileWindow
	if size >= 0 {
		end = min(end, size)
	}
	buf := make([]byte, max(end-start, 0))
	var n int64
	var err error
	if end > start {
		n, err = f.read(ctx, &sliceWriter{b: buf}, Range{Start: start, End: end})
	}
	if err == nil && n < end-start && size >= 0 {
		err = fmt.Errorf("read bytes %d-%d: %w: the reconstruction ends at byte %d, the file has %d", start, end, ErrVerify, start+n, size)
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if err == nil && n < end-start && (n > 0 || start == 0) {
		// An unknown size: a short range that starts inside the file ends
		// at its end. (One that starts past the end only bounds it.)
		f.size = start + n
	}
	for i, w := range run {
		if err != nil {
			w.err = err
			delete(f.windows, first+int64(i))
		} else {
			lo := min(int64(i)*FileWindow, n)
			w.data = buf[lo:min(lo+FileWindow, n):min(lo+FileWindow, n)]
			if len(w.data) == 0 {
				delete(f.windows, first+int64(i)) // past the end: nothing to keep
			} else {
				w.done = true
				f.tick++
				w.used = f.tick
				f.cached += int64(len(w.data))
			}
		}
		close(w.ready)
	}
	f.evict()
}

// evict drops the least recently used finished windows until the kept
// bytes are within FileCacheBytes. Called with f.mu held.
func (f *File) evict() {
	for f.cached > FileCacheBytes {
		var oldest int64 = -1
		for i, w := range f.windows {
			if w.done && (oldest < 0 || w.used < f.windows[oldest].used) {
				oldest = i
			}
		}
		if oldest < 0 {
			return
		}
		f.cached -= int64(len(f.windows[oldest].data))
		delete(f.windows, oldest)
	}
}

// WriteRange writes bytes [start, end) of the file (fewer where it ends
// first) to w, every byte checked before it is written, and returns the
// bytes written; on error, what was written must be discarded. A small
// range goes through the windows (ReadAt); a large one starts with the
// kept windows it begins in and streams the rest from one range download.
func (f *File) WriteRange(ctx context.Context, w io.Writer, start, end int64) (int64, error) {
	if start < 0 || end < start {
		return 0, fmt.Errorf("read: bad range [%d, %d)", start, end)
	}
	if size := f.Size(); size >= 0 {
		end = min(end, size)
	}
	if end <= start {
		return 0, nil
	}
	if end-start <= FileBigRead {
		buf := make([]byte, end-start)
		n, err := f.readWindows(ctx, buf, start)
		if err != nil {
			return 0, err
		}
		k, err := w.Write(buf[:n])
		return int64(k), err
	}
	pos := start
	for pos < end {
		data := f.kept(pos / FileWindow)
		at := pos % FileWindow
		if at >= int64(len(data)) {
			break
		}
		k, err := w.Write(data[at:min(int64(len(data)), at+end-pos)])
		pos += int64(k)
		if err != nil {
			return pos - start, err
		}
	}
	if pos < end {
		from := pos
		n, err := f.read(ctx, w, Range{Start: pos, End: end})
		pos += n
		if err != nil {
			return pos - start, err
		}
		f.mu.Lock()
		size := f.size
		if size < 0 && pos < end && (n > 0 || from == 0) {
			f.size = pos // as in fetch: a short range that starts inside the file ends at its end
		}
		f.mu.Unlock()
		if size >= 0 && pos != end {
			return pos - start, fmt.Errorf("read bytes %d-%d: %w: the reconstruction ends at byte %d, the file has %d", start, end, ErrVerify, pos, size)
		}
	}
	return pos - start, nil
}

// kept returns window idx's bytes if the File keeps it, else nil.
func (f *File) kept(idx int64) []byte {
	f.mu.Lock()
	defer f.mu.Unlock()
	if w := f.windows[idx]; w != nil && w.done {
		f.tick++
		w.used = f.tick
		return w.data
	}
	return nil
}

// sliceWriter fills b from the start; a write past its end is an error.
type sliceWriter struct {
	b []byte
	n int
}

func (s *sliceWriter) Write(p []byte) (int, error) {
	if len(p) > len(s.b)-s.n {
		return 0, fmt.Errorf("%w: more bytes than the range asked for", ErrVerify)
	}
	s.n += copy(s.b[s.n:], p)
	return len(p), nil
}
