package casserver

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"strings"

	"github.com/xetkit/xetkit/hub/store"
	"github.com/xetkit/xetkit/shard"
	"github.com/xetkit/xetkit/xethash"
	"github.com/xetkit/xetkit/xorb"
)

// xorbMeta is what the hub needs to know of a stored xorb.
type xorbMeta struct {
	chunks []xethash.Entry // hash and uncompressed size of each chunk
	// ends[i] is where chunk record i ends in the serialized xorb; nil
	// until the xorb file has been read (shards tell hashes, not records).
	ends []int64
	size int64 // serialized length, with ends
}

// recordsEnd is where the chunk records end: the footer's start.
func (m *xorbMeta) recordsEnd() int64 {
	if len(m.ends) == 0 {
		return m.size
	}
	return m.ends[len(m.ends)-1]
}

// unpacked returns the uncompressed size of chunks [start, end).
func (m *xorbMeta) unpacked(start, end uint32) uint64 {
	var n uint64
	for _, c := range m.chunks[start:end] {
		n += c.Size
	}
	return n
}

// recordStart returns where chunk record i begins.
func (m *xorbMeta) recordStart(i uint32) int64 {
	if i == 0 {
		return 0
	}
	return m.ends[i-1]
}

// fileMeta is a registered file: its terms and total size.
type fileMeta struct {
	terms []shard.Term
	size  uint64
}

// index is the hub's in-memory state, all of it derived from the store.
type index struct {
	// xorbs holds every stored xorb; the value is nil until something
	// (an upload, a shard, a read of the file) told the hub its chunks.
	xorbs map[xethash.Hash]*xorbMeta
	files map[xethash.Hash]*fileMeta
	// dedupe maps a chunk hash the global dedupe API answers for to the
	// xorb that holds it.
	dedupe map[xethash.Hash]xethash.Hash
	// group maps a xorb to the xorbs its shard registered, in order, so a
	// dedupe answer can cover the neighbouring content too.
	group map[xethash.Hash][]xethash.Hash
	// shards counts the stored shards.
	shards int
	// readers maps each file to the repositories whose uploads registered
	// it ("models/ns/name", as CAS tokens name them): only their tokens
	// may reconstruct it.
	readers map[xethash.Hash]map[string]bool
	// bySHA maps a file's SHA-256 (in a shard's stored form) to its file
	// hash, from the uploaded shards' metadata: how a commit's lfsFile
	// (named by SHA-256) finds its xet file.
	bySHA map[xethash.Hash]xethash.Hash
	// problems lists what could not be read from the store.
	problems []Problem

	// What of the store has been read, so that a sync reads only what is
	// new: the files of each shard read (nil for one unreadable), the
	// grant records read, and grants whose shard is not read yet.
	shardFiles map[string][]xethash.Hash
	grantNames map[string]bool
	pending    map[string][]string
}

// grant lets repo's tokens read the files of s.
func (idx *index) grant(repo string, s *shard.Shard) {
	for i := range s.Files {
		idx.grantFile(repo, s.Files[i].Hash)
	}
}

// grantFile lets repo's tokens read file f. Repository keys compare
// without case (records written before keys were lower case keep theirs).
func (idx *index) grantFile(repo string, f xethash.Hash) {
	if idx.readers[f] == nil {
		idx.readers[f] = map[string]bool{}
	}
	idx.readers[f][strings.ToLower(repo)] = true
}

// readable reports whether repo's tokens may read file f.
func (idx *index) readable(repo string, f xethash.Hash) bool {
	return idx.readers[f][strings.ToLower(repo)]
}

func newIndex() *index {
	return &index{
		xorbs:   map[xethash.Hash]*xorbMeta{},
		files:   map[xethash.Hash]*fileMeta{},
		dedupe:  map[xethash.Hash]xethash.Hash{},
		group:   map[xethash.Hash][]xethash.Hash{},
		readers: map[xethash.Hash]map[string]bool{},
		bySHA:   map[xethash.Hash]xethash.Hash{},

		shardFiles: map[string][]xethash.Hash{},
		grantNames: map[string]bool{},
		pending:    map[string][]string{},
	}
}

// rebuildIndex reads the store: every xorb's name, then every shard and
// the repositories it was uploaded to. A shard that cannot be read is left
// out and listed in problems (xetkit store check says more).
func rebuildIndex(st store.Store) (*index, error) {
	idx := newIndex()
	names, err := st.List(store.Xorbs)
	if err != nil {
		return nil, err
	}
	for _, n := range names {
		h, err := xethash.Parse(n)
		if err != nil || h.String() != n {
			idx.problems = append(idx.problems, Problem{Path: st.Where(store.Xorbs, n), Err: "not named by a xorb hash; ignored"})
			continue
		}
		idx.xorbs[h] = nil
	}
	d, err := readNews(st, idx.known)
	if err != nil {
		return nil, err
	}
	idx.apply(d, false)
	return idx, nil
}

// news is what of the store an index has not read yet: shards and grant
// records written since (by this process, or by another on the store).
type news struct {
	shards   map[string]*shard.Shard // by name; nil: unreadable
	grants   map[string]grantRecord  // by record name; zero: unreadable
	problems []Problem
}

// grantRecord is one grant: repo may read the files of shard target, or
// with grantFilePrefix the one file target names.
type grantRecord struct{ repo, target string }

// known reports whether the index has read the shard or grant record of
// that kind and name.
func (idx *index) known(kind, name string) bool {
	if kind == store.Shards {
		_, ok := idx.shardFiles[name]
		return ok
	}
	return idx.grantNames[name]
}

// readNews lists the shards and grant records of st and reads those that
// known says are new. It only reads the store.
func readNews(st store.Store, known func(kind, name string) bool) (*news, error) {
	d := &news{shards: map[string]*shard.Shard{}, grants: map[string]grantRecord{}}
	names, err := st.List(store.Grants)
	if err != nil {
		return nil, err
	}
	for _, n := range names {
		if known(store.Grants, n) {
			continue
		}
		b, err := store.Read(st, store.Grants, n)
		repo, target, ok := strings.Cut(strings.TrimSpace(string(b)), "\n")
		if err != nil || !ok || grantName(repo, target) != n {
			d.problems = append(d.problems, Problem{Path: st.Where(store.Grants, n), Err: "not a readable upload record; ignored"})
			d.grants[n] = grantRecord{}
			continue
		}
		d.grants[n] = grantRecord{repo, target}
	}
	if names, err = st.List(store.Shards); err != nil {
		return nil, err
	}
	for _, n := range names {
		if known(store.Shards, n) {
			continue
		}
		s, err := readShard(st, n)
		if err != nil {
			d.problems = append(d.problems, Problem{Path: st.Where(store.Shards, n), Err: err.Error() + "; ignored"})
		}
		d.shards[n] = s
	}
	return d, nil
}

// apply registers what readNews found. Shards written by another process
// were checked when it accepted them, so their xorbs are stored: with
// trustXorbs they count as stored here too.
func (idx *index) apply(d *news, trustXorbs bool) {
	idx.problems = append(idx.problems, d.problems...)
	for n, s := range d.shards {
		if _, ok := idx.shardFiles[n]; ok {
			continue // registered meanwhile by an upload here
		}
		if s == nil {
			idx.shardFiles[n] = nil
			continue
		}
		if trustXorbs {
			for i := range s.Xorbs {
				if _, ok := idx.xorbs[s.Xorbs[i].Hash]; !ok {
					idx.xorbs[s.Xorbs[i].Hash] = nil
				}
			}
		}
		idx.register(n, s)
	}
	for n, g := range d.grants {
		idx.grantNames[n] = true
		if g.repo == "" {
			continue
		}
		if fh, ok := strings.CutPrefix(g.target, grantFilePrefix); ok {
			if f, err := xethash.Parse(fh); err == nil {
				idx.grantFile(g.repo, f)
			}
			continue
		}
		for _, f := range idx.shardFiles[g.target] {
			idx.grantFile(g.repo, f)
		}
		if _, ok := idx.shardFiles[g.target]; !ok {
			// The grant came before its shard is registered: keep it for
			// then (registerGrants).
			idx.pending[g.target] = append(idx.pending[g.target], g.repo)
		}
	}
}

// readShard reads and parses the stored shard named n (its SHA-256).
func readShard(st store.Store, n string) (*shard.Shard, error) {
	b, err := store.Read(st, store.Shards, n)
	if err != nil {
		return nil, err
	}
	if sum := sha256.Sum256(b); hex.EncodeToString(sum[:]) != n {
		return nil, fmt.Errorf("its content has SHA-256 %x, not its name (damaged or truncated)", sum)
	}
	return shard.Parse(b)
}

// grantFilePrefix marks a grant record of one file (committed to the repo)
// rather than of a shard (uploaded to it).
const grantFilePrefix = "file:"

// grantName names the record that repo uploaded the shard named shardName
// (or, for grantFilePrefix + a file hash, committed that file).
func grantName(repo, shardName string) string {
	sum := sha256.Sum256([]byte(repo + "\x00" + shardName))
	return hex.EncodeToString(sum[:])
}

// register adds a checked shard's files, xorbs and dedupe entries, and
// grants its files to the repositories whose grants came before it.
func (idx *index) register(name string, s *shard.Shard) {
	idx.shards++
	files := make([]xethash.Hash, len(s.Files))
	for i := range s.Files {
		files[i] = s.Files[i].Hash
	}
	idx.shardFiles[name] = files
	for _, repo := range idx.pending[name] {
		idx.grant(repo, s)
	}
	delete(idx.pending, name)
	// Keyed chunk hashes (not accepted from uploads) cannot be indexed.
	keyed := s.Footer != nil && !s.Footer.ChunkHashKey.IsZero()
	group := make([]xethash.Hash, 0, len(s.Xorbs))
	for i := range s.Xorbs {
		x := &s.Xorbs[i]
		group = append(group, x.Hash)
		if _, ok := idx.xorbs[x.Hash]; !ok {
			continue // registered before its xorb was stored: cannot happen for checked shards
		}
		if idx.xorbs[x.Hash] == nil && !keyed {
			m := &xorbMeta{chunks: make([]xethash.Entry, len(x.Chunks))}
			for j, c := range x.Chunks {
				m.chunks[j] = xethash.Entry{Hash: c.Hash, Size: uint64(c.UnpackedBytes)}
			}
			idx.xorbs[x.Hash] = m
		}
		if keyed {
			continue // its hashes cannot be indexed
		}
		for _, c := range x.Chunks {
			if c.Flags&shard.ChunkFlagGlobalDedup != 0 || shard.DedupEligible(c.Hash) {
				idx.addDedupe(c.Hash, x.Hash)
			}
		}
	}
	for _, x := range group {
		if _, ok := idx.group[x]; !ok {
			idx.group[x] = group
		}
	}
	for i := range s.Files {
		f := &s.Files[i]
		idx.files[f.Hash] = &fileMeta{terms: f.Terms, size: f.UnpackedBytes()}
		if f.SHA256 != nil {
			idx.bySHA[*f.SHA256] = f.Hash
		}
		// The first chunk of every file is eligible too (§10.3.1).
		if len(f.Terms) > 0 {
			t := f.Terms[0]
			if m := idx.xorbs[t.Xorb]; m != nil && int(t.ChunkStart) < len(m.chunks) {
				idx.addDedupe(m.chunks[t.ChunkStart].Hash, t.Xorb)
			}
		}
	}
}

func (idx *index) addDedupe(chunk, x xethash.Hash) {
	if _, ok := idx.dedupe[chunk]; !ok {
		idx.dedupe[chunk] = x
	}
}

// xorbMetaOf returns the metadata of a stored xorb with its record
// boundaries, reading the xorb file when they are not known yet. It returns
// nil, nil for a xorb that is not stored.
func (h *Server) xorbMetaOf(x xethash.Hash) (*xorbMeta, error) {
	h.mu.RLock()
	m, stored := h.idx.xorbs[x]
	h.mu.RUnlock()
	if m != nil && m.ends != nil {
		return m, nil
	}
	// A xorb the index lacks may have been stored by another process on
	// the store: the store, not the index, says whether it is there.
	b, err := store.Read(h.store, store.Xorbs, x.String())
	if errors.Is(err, fs.ErrNotExist) {
		if stored {
			// Deleted since the index learned of it (store gc, on
			// another process): no dedupe answer offers it any more.
			h.forgetXorb(x)
		}
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	px, err := xorb.ParsePartial(b)
	if err != nil {
		return nil, fmt.Errorf("stored xorb %s: %w", x, err)
	}
	loaded := &xorbMeta{size: int64(len(b)), ends: make([]int64, len(px.Records))}
	for i, r := range px.Records {
		loaded.ends[i] = r.End()
	}
	if m != nil && len(m.chunks) == len(px.Records) {
		loaded.chunks = m.chunks
	} else {
		if err := px.Verify(); err != nil {
			return nil, fmt.Errorf("stored xorb %s: %w", x, err)
		}
		loaded.chunks = px.Entries()
	}
	h.mu.Lock()
	h.idx.xorbs[x] = loaded
	h.mu.Unlock()
	return loaded, nil
}

// forgetXorb drops a xorb the store no longer holds from the index, and
// the dedupe entries that lead to it.
func (h *Server) forgetXorb(x xethash.Hash) {
	h.mu.Lock()
	defer h.mu.Unlock()
	delete(h.idx.xorbs, x)
	for c, held := range h.idx.dedupe {
		if held == x {
			delete(h.idx.dedupe, c)
		}
	}
}
