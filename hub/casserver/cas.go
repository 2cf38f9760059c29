package casserver

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"sync"
	"syscall"

	"github.com/xetkit/xetkit/hub/internal/httpx"
	"github.com/xetkit/xetkit/hub/store"
	"github.com/xetkit/xetkit/shard"
	"github.com/xetkit/xetkit/xethash"
	"github.com/xetkit/xetkit/xorb"
)

// readBody reads a whole upload body of at most limit bytes, in one of
// user's upload slots, adding what it read to counter. It answers 503 when
// no slot is free to user, and 413 (returning false) for a larger body,
// before reading it when Content-Length already says so.
func (h *Server) readBody(w http.ResponseWriter, r *http.Request, user, what string, counter interface{ Add(int64) int64 }, limit int64) ([]byte, bool) {
	return h.readBodyInto(nil, w, r, user, what, counter, limit)
}

// xorbBuffers keep the memory of xorb bodies from one upload to the next:
// a fresh 64 MiB buffer per xorb costs the kernel a page fault per 4 KiB
// and the runtime a clearing pass, more than reading the body does.
var xorbBuffers = sync.Pool{New: func() any { return new([]byte) }}

// readBodyInto is readBody reading into buf's memory (grown as needed).
func (h *Server) readBodyInto(buf []byte, w http.ResponseWriter, r *http.Request, user, what string, counter interface{ Add(int64) int64 }, limit int64) ([]byte, bool) {
	ok, why := h.uploads.take(user)
	if !ok {
		w.Header().Set("Retry-After", "1")
		h.ans.Fail(w, http.StatusServiceUnavailable, "%s; try again shortly", why)
		return nil, false
	}
	defer h.uploads.give(user)
	if r.ContentLength > limit {
		h.ans.Fail(w, http.StatusRequestEntityTooLarge, "%s of %d bytes is larger than the %d-byte limit", what, r.ContentLength, limit)
		return nil, false
	}
	body := http.MaxBytesReader(w, r.Body, limit)
	// New memory grows with the bytes that arrive, not with what the
	// client announces: a stalled upload that claims 64 MiB takes at most
	// a MiB more than buf has. Once that much has come, the buffer takes
	// the announced size at once rather than doubling its way there (each
	// doubling copies everything read so far), or the limit for a body
	// over half of it: full xorbs differ by a few bytes, and a reused
	// buffer a few bytes short would be copied whole into a new one.
	if want := min(max(r.ContentLength, 0), 1<<20); cap(buf) < int(want) {
		buf = make([]byte, 0, want)
	}
	buf = buf[:0]
	for {
		if len(buf) == cap(buf) {
			if int64(len(buf)) < r.ContentLength {
				size := r.ContentLength
				if size > limit/2 {
					size = limit
				}
				buf = append(make([]byte, 0, size), buf...)
			} else {
				buf = append(buf, 0)[:len(buf)]
			}
		}
		n, err := body.Read(buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+n]
		counter.Add(int64(n))
		if err == io.EOF {
			return buf, true
		}
		if err != nil {
			var tooBig *http.MaxBytesError
			if errors.As(err, &tooBig) {
				h.ans.Fail(w, http.StatusRequestEntityTooLarge, "%s is larger than the %d-byte limit", what, limit)
			} else {
				h.ans.Fail(w, http.StatusBadRequest, "reading %s: %v", what, err)
			}
			return nil, false
		}
	}
}

// handleXorbUpload answers POST /v1/xorbs/default/{hash}: the body must be a
// well-formed xorb (with or without its footer) whose chunks hash to {hash}.
func (h *Server) handleXorbUpload(w http.ResponseWriter, r *http.Request) {
	claims, ok := h.authorize(w, r, scopeWrite)
	if !ok {
		return
	}
	if p := r.PathValue("prefix"); p != "default" {
		h.ans.Fail(w, http.StatusBadRequest, "unknown xorb prefix %q: the only prefix is \"default\"", p)
		return
	}
	want, ok := h.parseHashParam(w, r, "hash")
	if !ok {
		return
	}
	pooled := xorbBuffers.Get().(*[]byte)
	defer xorbBuffers.Put(pooled)
	body, ok := h.readBodyInto(*pooled, w, r, claims.user, "xorb", &h.stats.xorbBytesReceived, MaxXorbSize)
	*pooled = body
	if !ok {
		return
	}
	inserted, err := h.acceptXorb(want, body)
	if err != nil {
		h.ans.FailUpload(w, "storing xorb "+want.String(), err)
		return
	}
	httpx.WriteJSON(w, http.StatusOK, struct {
		WasInserted bool `json:"was_inserted"`
	}{inserted})
}

// acceptXorb checks a xorb body (chunk records, with or without footer)
// against its hash and stores it, reporting whether it is new.
func (h *Server) acceptXorb(want xethash.Hash, body []byte) (bool, error) {
	x, err := xorb.ParsePartial(body)
	if err == nil && len(x.Records) > xorb.MaxChunks {
		err = fmt.Errorf("xorb holds %d chunks, more than the %d allowed", len(x.Records), xorb.MaxChunks)
	}
	if err == nil && len(x.Records) > 0 {
		last := x.Records[len(x.Records)-1]
		if n := last.UnpackedOffset + int64(last.UncompressedSize); n > xorb.MaxBytes {
			err = fmt.Errorf("xorb holds %d bytes of chunk data, more than the %d allowed", n, xorb.MaxBytes)
		}
	}
	if err == nil {
		err = x.Verify()
	}
	if err != nil {
		return false, &httpx.Refusal{Msg: fmt.Sprintf("bad xorb: %v", err)}
	}
	entries := x.Entries()
	if got := xethash.Xorb(entries); got != want {
		return false, &httpx.Refusal{Msg: fmt.Sprintf("xorb hash mismatch: the body's chunks hash to %s, not %s", got, want)}
	}
	// Stored with its footer, so that a reader of a few chunk records can
	// check them against the footer's hashes (a suffix range). The footer
	// is written after the body, not appended to a copy of it.
	footer, err := x.MissingFooter()
	if err != nil {
		return false, &httpx.Refusal{Msg: fmt.Sprintf("bad xorb: %v", err)}
	}
	inserted, err := h.store.Put(store.Xorbs, want.String(), body, footer)
	if err != nil {
		return false, err
	}
	size := int64(len(body) + len(footer))
	meta := &xorbMeta{chunks: entries, size: size, ends: make([]int64, len(x.Records))}
	for i, rec := range x.Records {
		meta.ends[i] = rec.End()
	}
	h.mu.Lock()
	if old := h.idx.xorbs[want]; old == nil || old.ends == nil {
		h.idx.xorbs[want] = meta
	}
	h.mu.Unlock()
	if inserted {
		h.stats.xorbsStored.Add(1)
		h.stats.xorbBytesStored.Add(size)
	} else {
		h.stats.xorbsExisting.Add(1)
	}
	return inserted, nil
}

// readShard authorizes a shard upload and reads its body (bounded by
// MaxShardSize), or answers the request itself. It returns who uploads it.
func (h *Server) readShard(w http.ResponseWriter, r *http.Request) (who grantee, body []byte, ok bool) {
	claims, ok := h.authorize(w, r, scopeWrite)
	if !ok {
		return grantee{}, nil, false
	}
	body, ok = h.readBody(w, r, claims.user, "shard", &h.stats.shardBytesReceived, MaxShardSize)
	return grantee{claims.repo, claims.user}, body, ok
}

// handleShardUpload answers POST /v1/shards with {"result": 1} for a new
// shard and 0 for one already stored.
func (h *Server) handleShardUpload(w http.ResponseWriter, r *http.Request) {
	who, body, ok := h.readShard(w, r)
	if !ok {
		return
	}
	inserted, err := h.acceptShard(who, body, nil)
	if err != nil {
		h.ans.FailUpload(w, "storing shard", err)
		return
	}
	result := 0
	if inserted {
		result = 1
	}
	httpx.WriteJSON(w, http.StatusOK, struct {
		Result int `json:"result"`
	}{result})
}

// handleShardUploadV2 answers POST /v2/shards: the same upload as v1, its
// progress streamed as NDJSON events ({"type": "validating", "verified",
// "total"}, {"type": "committing", "stage"}) that end in {"type":
// "result"} or, once the stream has begun, {"type": "error", "message",
// "retryable"}: the status is 200 by then, so the last frame is the answer.
func (h *Server) handleShardUploadV2(w http.ResponseWriter, r *http.Request) {
	who, body, ok := h.readShard(w, r)
	if !ok {
		return
	}
	w.Header().Set("Content-Type", "application/x-ndjson")
	w.WriteHeader(http.StatusOK)
	flusher, _ := w.(http.Flusher)
	event := func(v map[string]any) {
		b, _ := json.Marshal(v)
		_, _ = w.Write(append(b, '\n'))
		if flusher != nil {
			flusher.Flush()
		}
	}
	_, err := h.acceptShard(who, body, func(stage string, verified, total int) {
		if stage == "validating" {
			event(map[string]any{"type": stage, "verified": verified, "total": total})
		} else {
			event(map[string]any{"type": "committing", "stage": stage})
		}
	})
	if err != nil {
		var re *httpx.Refusal
		retryable := !errors.As(err, &re) && !errors.Is(err, syscall.ENOSPC) && !errors.Is(err, syscall.EDQUOT)
		if !retryable {
			h.ans.Rejected.Add(1)
		}
		event(map[string]any{"type": "error", "message": err.Error(), "retryable": retryable})
		return
	}
	event(map[string]any{"type": "result"})
}

// acceptShard checks an uploaded shard and stores it as who's upload (the
// CAS token's "models/ns/name" and user), reporting whether it is new. Besides being
// well formed, the shard must only name stored xorbs, describe them as
// they are, and carry for every file correct verification hashes and a
// file hash that matches its chunks: a client cannot register content it
// does not hold. progress, if set, hears of each file checked
// ("validating") and of the writes ("uploading", "syncing").
func (h *Server) acceptShard(who grantee, body []byte, progress func(stage string, verified, total int)) (bool, error) {
	if progress == nil {
		progress = func(string, int, int) {}
	}
	s, err := shard.Parse(body)
	if err != nil {
		return false, &httpx.Refusal{Msg: fmt.Sprintf("bad shard: %v", err)}
	}
	for _, f := range shard.ValidateUpload(s, h.now().Unix()) {
		// Let through what does not change what the shard registers: a
		// missing SHA-256 (optional metadata some clients leave out), and
		// the footer and lookup tables an upload needs not carry (a popular
		// client sends a footer whose empty tables sit at offset 0).
		if f.Severity == shard.Error && f.Rule != shard.RuleUploadSHA256 && f.Section != "footer" && f.Section != "lookups" {
			return false, &httpx.Refusal{Msg: fmt.Sprintf("shard rejected: %s (byte offset %d)", f.Message, f.Offset)}
		}
	}
	// The shard may name xorbs no ref reaches: a store gc's sweep must
	// not begin between the check and the shard being stored, or it may
	// delete them unseen (package sweep).
	fence, err := h.Fence()
	if err != nil {
		return false, err
	}
	if msg := h.checkShard(s, progress); msg != "" {
		return false, &httpx.Refusal{Msg: "shard rejected: " + msg}
	}
	progress("uploading", 0, 0)
	sum := sha256.Sum256(body)
	name := hex.EncodeToString(sum[:])
	inserted, err := h.store.Put(store.Shards, name, body)
	if err != nil {
		return false, err
	}
	progress("syncing", 0, 0)
	// The files are the token's repository's from now on, even when the
	// same shard came earlier through another repository, and what the
	// shard says of them is its uploader's word.
	g := grantRecord{repo: who.repo, target: name, user: who.user}
	grant := g.name()
	grantNew, err := h.store.Put(store.Grants, grant, g.bytes())
	if err != nil {
		return false, fmt.Errorf("recording the shard's repository: %w", err)
	}
	if err := fence.Holds(h.store); err != nil {
		// A sweep began meanwhile and may have missed the shard: take it
		// back (the client sends it again after the sweep, checked anew).
		if c, ok := h.store.(interface{ Remove(kind, name string) error }); ok {
			if grantNew {
				_ = c.Remove(store.Grants, grant)
			}
			if inserted {
				_ = c.Remove(store.Shards, name)
			}
		}
		return false, err
	}
	h.mu.Lock()
	if _, known := h.idx.shardFiles[name]; !known {
		h.idx.register(name, s)
	}
	h.idx.grant(who, h.idx.shardFiles[name])
	h.idx.grantNames[grant] = true
	h.mu.Unlock()
	if inserted {
		h.stats.shardsStored.Add(1)
	} else {
		h.stats.shardsExisting.Add(1)
	}
	return inserted, nil
}

// checkShard returns what is wrong with an uploaded shard, or "". It
// tells progress of each file checked.
func (h *Server) checkShard(s *shard.Shard, progress func(stage string, verified, total int)) string {
	var key xethash.KeyedChunker
	if s.Footer != nil && !s.Footer.ChunkHashKey.IsZero() {
		key = xethash.NewKeyedChunker(s.Footer.ChunkHashKey)
	}
	// The CAS info must describe each xorb exactly as stored.
	for i := range s.Xorbs {
		sx := &s.Xorbs[i]
		m, err := h.xorbMetaOf(sx.Hash)
		if err != nil {
			return fmt.Sprintf("xorb %s: %v", sx.Hash, err)
		}
		if m == nil {
			return fmt.Sprintf("CAS info at byte %d lists xorb %s, which has not been uploaded (upload every xorb before the shard)", sx.Offset, sx.Hash)
		}
		if len(sx.Chunks) != len(m.chunks) {
			return fmt.Sprintf("CAS info at byte %d gives xorb %s %d chunks; it has %d", sx.Offset, sx.Hash, len(sx.Chunks), len(m.chunks))
		}
		var start uint64
		for j, c := range sx.Chunks {
			real := m.chunks[j]
			if c.Hash != key.Hash(real.Hash) || uint64(c.UnpackedBytes) != real.Size || uint64(c.ByteRangeStart) != start {
				return fmt.Sprintf("CAS info entry at byte %d (xorb %s chunk %d) does not match the stored xorb", sx.ChunkOffset(j), sx.Hash, j)
			}
			start += real.Size
		}
		if uint64(sx.BytesInXorb) != start {
			return fmt.Sprintf("CAS info at byte %d gives xorb %s %d unpacked bytes; its chunks hold %d", sx.Offset, sx.Hash, sx.BytesInXorb, start)
		}
		// Bytes on disk may be left 0, or count the xorb as stored (with
		// its footer) or as a client sent it without one.
		if n := int64(sx.BytesOnDisk); n != 0 && n != m.size && n != m.recordsEnd() {
			return fmt.Sprintf("CAS info at byte %d gives xorb %s %d bytes on disk; it has %d (%d without its footer)", sx.Offset, sx.Hash, sx.BytesOnDisk, m.size, m.recordsEnd())
		}
	}
	progress("validating", 0, len(s.Files))
	for i := range s.Files {
		if msg := h.checkFile(&s.Files[i]); msg != "" {
			return msg
		}
		progress("validating", i+1, len(s.Files))
	}
	return ""
}

// checkFile checks one file block against the stored xorbs.
func (h *Server) checkFile(f *shard.File) string {
	if len(f.Terms) > 0 && len(f.Verification) != len(f.Terms) {
		return fmt.Sprintf("file %s at byte %d has no verification entries; this hub requires them", f.Hash, f.Offset)
	}
	var chunks []xethash.Entry
	for i, t := range f.Terms {
		m, err := h.xorbMetaOf(t.Xorb)
		if err != nil {
			return fmt.Sprintf("xorb %s: %v", t.Xorb, err)
		}
		at := f.EntryOffset(i)
		if m == nil {
			return fmt.Sprintf("file %s term %d (byte %d) names xorb %s, which is not stored", f.Hash, i, at, t.Xorb)
		}
		if t.ChunkStart >= t.ChunkEnd || int(t.ChunkEnd) > len(m.chunks) {
			return fmt.Sprintf("file %s term %d (byte %d): chunk range [%d, %d) is not inside xorb %s, which has %d chunks",
				f.Hash, i, at, t.ChunkStart, t.ChunkEnd, t.Xorb, len(m.chunks))
		}
		if got := m.unpacked(t.ChunkStart, t.ChunkEnd); got != uint64(t.UnpackedBytes) {
			return fmt.Sprintf("file %s term %d (byte %d): unpacked size %d, but chunks [%d, %d) of xorb %s hold %d bytes",
				f.Hash, i, at, t.UnpackedBytes, t.ChunkStart, t.ChunkEnd, t.Xorb, got)
		}
		run := m.chunks[t.ChunkStart:t.ChunkEnd]
		hashes := make([]xethash.Hash, len(run))
		for j, c := range run {
			hashes[j] = c.Hash
		}
		// The correct value is not revealed: it would let a client claim
		// chunks it does not have.
		if xethash.Verification(hashes) != f.Verification[i] {
			return fmt.Sprintf("file %s term %d: wrong verification hash at byte %d", f.Hash, i, f.VerificationOffset(i))
		}
		chunks = append(chunks, run...)
	}
	if xethash.File(chunks) != f.Hash {
		return fmt.Sprintf("file hash %s at byte %d does not match the chunks its terms name", f.Hash, f.Offset)
	}
	return ""
}

// prefixOK reports whether a dedupe query prefix is one the hub answers:
// the contract's "default-merkledb", and "default", which a popular client
// sends.
func prefixOK(p string) bool { return p == "default-merkledb" || p == "default" }
