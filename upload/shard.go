package upload

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"

	"github.com/xetkit/xetkit/shard"
	"github.com/xetkit/xetkit/xethash"
)

// addFileBlock records a finished file for the shard: its terms (runs of
// consecutive chunks of one xorb), a verification hash per term (§6.4) and
// its SHA-256. An empty file needs no registration (its hash is the zero
// hash, which every download resolves locally), and a file already in this
// session's shard is not listed twice.
func (s *session) addFileBlock(fh xethash.Hash, f *fileRun, digest [32]byte) {
	if len(f.refs) == 0 || s.seen[fh] {
		return
	}
	s.seen[fh] = true
	b := fileBlock{hash: fh, sha256: shard.SHA256Hash(digest)}
	var hashes []xethash.Hash
	flush := func() {
		if len(hashes) > 0 {
			b.verification = append(b.verification, xethash.Verification(hashes))
			hashes = hashes[:0]
		}
	}
	for i, r := range f.refs {
		n := len(b.terms)
		if n > 0 && b.terms[n-1].slot == r.slot && b.terms[n-1].end == r.index {
			b.terms[n-1].end++
			b.terms[n-1].unpacked += uint32(f.entries[i].Size)
		} else {
			flush()
			b.terms = append(b.terms, slotTerm{slot: r.slot, start: r.index, end: r.index + 1, unpacked: uint32(f.entries[i].Size)})
		}
		hashes = append(hashes, f.entries[i].Hash)
	}
	flush()
	s.files = append(s.files, b)
}

// uploadShards registers the session's files and new xorbs in as many
// upload-form shards as the size limit needs. Every xorb is already stored,
// so any split is valid.
func (s *session) uploadShards() error {
	empty := func() *shard.Shard {
		return &shard.Shard{Header: shard.Header{AppID: shard.DefaultAppID, Version: shard.HeaderVersion}}
	}
	const fixed = shard.HeaderSize + 2*shard.RecordSize // header and the two bookends
	cur, size := empty(), int64(fixed)
	send := func() error {
		if len(cur.Files) == 0 && len(cur.Xorbs) == 0 {
			return nil
		}
		b, err := cur.Marshal(shard.WriteOptions{})
		if err != nil {
			return err
		}
		cur, size = empty(), fixed
		return s.store.PutShard(s.ctx, b)
	}
	for _, sl := range s.slots {
		if sl.remote || sl.info == nil {
			continue
		}
		if size+sl.info.Size() > maxShardSize {
			if err := send(); err != nil {
				return err
			}
		}
		cur.Xorbs = append(cur.Xorbs, *sl.info)
		size += sl.info.Size()
	}
	for _, fb := range s.files {
		f := shard.File{Hash: fb.hash, Verification: fb.verification, SHA256: &fb.sha256}
		f.Terms = make([]shard.Term, len(fb.terms))
		for i, t := range fb.terms {
			f.Terms[i] = shard.Term{Xorb: s.slots[t.slot].hash, UnpackedBytes: t.unpacked, ChunkStart: t.start, ChunkEnd: t.end}
		}
		if size+f.Size() > maxShardSize {
			if err := send(); err != nil {
				return err
			}
		}
		cur.Files = append(cur.Files, f)
		size += f.Size()
	}
	return send()
}

// PutShard registers one upload-form shard: POST /v2/shards, which streams
// its progress as NDJSON and ends in a result or an error event, as the
// reference client prefers; a hub without it (404 or 501) gets
// POST /v1/shards, then and from then on.
func (c *Client) PutShard(ctx context.Context, b []byte) error {
	if !c.shardV1.Load() {
		err := c.call(ctx, "upload shard", scopeWrite, nil, func(base string) (*http.Request, error) {
			return postBytes(ctx, base+"/v2/shards", b)
		}, readShardEvents)
		var he *HTTPError
		if !errors.As(err, &he) || (he.Status != http.StatusNotFound && he.Status != http.StatusNotImplemented) {
			return err
		}
		c.shardV1.Store(true)
	}
	return c.call(ctx, "upload shard", scopeWrite, nil, func(base string) (*http.Request, error) {
		return postBytes(ctx, base+"/v1/shards", b)
	}, func(resp *http.Response) error {
		var r struct {
			Result *int `json:"result"`
		}
		return decodeJSON(resp, &r)
	})
}

// maxEventLine bounds one NDJSON event of a shard upload's answer.
const maxEventLine = 1 << 20

// readShardEvents reads a /v2/shards answer to its last event: "result" is
// success, "error" a refusal (retried when the hub says it may pass), and
// a stream that ends without either was cut short (retried).
func readShardEvents(resp *http.Response) error {
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 0, 4096), maxEventLine)
	for sc.Scan() {
		line := bytes.TrimSpace(sc.Bytes())
		if len(line) == 0 {
			continue
		}
		var ev struct {
			Type      string `json:"type"`
			Message   string `json:"message"`
			Retryable bool   `json:"retryable"`
		}
		if err := json.Unmarshal(line, &ev); err != nil {
			return fmt.Errorf("shard upload: an event that is not JSON: %q", line)
		}
		switch ev.Type {
		case "result":
			return nil
		case "error":
			herr := &HTTPError{Op: "upload shard", Method: resp.Request.Method, URL: redact(resp.Request),
				Status: resp.StatusCode, Message: ev.Message, Attempts: 1}
			if ev.Retryable {
				return transient(herr)
			}
			return herr
		}
		// "validating" and "committing" report progress; unknown types are
		// skipped, as the reference client does.
	}
	if err := sc.Err(); err != nil {
		return transient(fmt.Errorf("shard upload: reading the events: %w", err))
	}
	return transient(errors.New("shard upload: the answer ended without a result or error event"))
}
