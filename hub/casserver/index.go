package casserver

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"slices"
	"strings"

	"github.com/xetkit/xetkit/hub/internal/casapi"
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
	// claims maps a SHA-256 to the uploads whose shards said a file has it
	// (the metadata section): the hub has not hashed those files, so a
	// claim is trusted only by its uploader, in its repository (find).
	claims map[xethash.Hash][]claim
	// verified maps a SHA-256 to the files the hub hashed to it: those it
	// ingested, and claims it checked.
	verified map[xethash.Hash][]xethash.Hash
	// refuted are claims found false (SHA-256, file): not hashed again.
	refuted map[[2]xethash.Hash]bool
	// problems lists what could not be read from the store.
	problems []Problem

	// What of the store has been read, so that a sync reads only what is
	// new: the files of each shard read (nil for one unreadable), the
	// grant and verification records read, and grants whose shard is not
	// read yet.
	shardFiles    map[string][]shardFile
	grantNames    map[string]bool
	verifiedNames map[string]bool
	pending       map[string][]grantee
}

// shardFile is a file a shard registers, and the SHA-256 the shard says
// it has (nil: none).
type shardFile struct {
	hash xethash.Hash
	sha  *xethash.Hash
}

// grantee is who uploaded a shard: the repository of the token, and its
// user ("" in records of before users were named).
type grantee struct{ repo, user string }

// claim is an upload's word that file has a SHA-256.
type claim struct {
	file xethash.Hash
	grantee
}

// grant lets g.repo's tokens read the files of the shard registered as
// files, and records what g's upload claims of them.
func (idx *index) grant(g grantee, files []shardFile) {
	for _, f := range files {
		idx.grantFile(g.repo, f.hash)
		if f.sha != nil {
			idx.addClaim(*f.sha, claim{f.hash, grantee{strings.ToLower(g.repo), g.user}})
		}
	}
}

// addClaim records c for sha once; the newest claim is last.
func (idx *index) addClaim(sha xethash.Hash, c claim) {
	list := idx.claims[sha]
	for i, old := range list {
		if old == c {
			list = append(list[:i], list[i+1:]...)
			break
		}
	}
	idx.claims[sha] = append(list, c)
}

// addVerified records that file's content has SHA-256 sha.
func (idx *index) addVerified(sha, file xethash.Hash) {
	if !slices.Contains(idx.verified[sha], file) {
		idx.verified[sha] = append(idx.verified[sha], file)
	}
	idx.verifiedNames[verifiedName(sha, file)] = true
}

// find answers q from what the index holds: the newest of q.User's own
// uploads to q.Repo that claims q.SHA256 (with q.Own), else a file hashed
// to it that q.Repo may read. When neither is there it returns the files
// of q.Repo that others claim have q.SHA256, which the caller may hash.
func (idx *index) find(q casapi.Lookup) (file xethash.Hash, found bool, unchecked []xethash.Hash) {
	repo := strings.ToLower(q.Repo)
	list := idx.claims[q.SHA256]
	if q.Own && q.User != "" {
		for i := len(list) - 1; i >= 0; i-- {
			c := list[i]
			if c.repo == repo && c.user == q.User && idx.files[c.file] != nil && !idx.refuted[[2]xethash.Hash{q.SHA256, c.file}] {
				return c.file, true, nil
			}
		}
	}
	for _, f := range idx.verified[q.SHA256] {
		if idx.files[f] != nil && idx.readable(repo, f) {
			return f, true, nil
		}
	}
	for _, c := range list {
		f := c.file
		if idx.files[f] != nil && idx.readable(repo, f) && !idx.refuted[[2]xethash.Hash{q.SHA256, f}] && !slices.Contains(unchecked, f) {
			unchecked = append(unchecked, f)
		}
	}
	return xethash.Hash{}, false, unchecked
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
		xorbs:    map[xethash.Hash]*xorbMeta{},
		files:    map[xethash.Hash]*fileMeta{},
		dedupe:   map[xethash.Hash]xethash.Hash{},
		group:    map[xethash.Hash][]xethash.Hash{},
		readers:  map[xethash.Hash]map[string]bool{},
		claims:   map[xethash.Hash][]claim{},
		verified: map[xethash.Hash][]xethash.Hash{},
		refuted:  map[[2]xethash.Hash]bool{},

		shardFiles:    map[string][]shardFile{},
		grantNames:    map[string]bool{},
		verifiedNames: map[string]bool{},
		pending:       map[string][]grantee{},
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

// news is what of the store an index has not read yet: shards, grant
// and verification records written since (by this process, or by another
// on the store).
type news struct {
	shards   map[string]*shard.Shard // by name; nil: unreadable
	grants   map[string]grantRecord  // by record name; zero: unreadable
	verified map[string][2]xethash.Hash
	problems []Problem
}

// grantRecord is one grant: repo may read the files of shard target (as
// uploaded by user, whose claims of them are then trusted by that user),
// or with grantFilePrefix the one file target names.
type grantRecord struct{ repo, target, user string }

// name is the record's name: the SHA-256 of its fields.
func (g grantRecord) name() string {
	key := g.repo + "\x00" + g.target
	if g.user != "" {
		key += "\x00" + g.user
	}
	sum := sha256.Sum256([]byte(key))
	return hex.EncodeToString(sum[:])
}

// bytes is the record's content: its fields a line each.
func (g grantRecord) bytes() []byte {
	b := g.repo + "\n" + g.target
	if g.user != "" {
		b += "\n" + g.user
	}
	return []byte(b)
}

// parseGrant reads grant record n: "repo\ntarget", then "\nuser" in
// records of an upload since users were named.
func parseGrant(n string, b []byte) (grantRecord, bool) {
	f := strings.Split(strings.TrimSpace(string(b)), "\n")
	if len(f) == 2 {
		f = append(f, "")
	}
	if len(f) != 3 {
		return grantRecord{}, false
	}
	g := grantRecord{f[0], f[1], f[2]}
	return g, g.repo != "" && g.name() == n
}

// verifiedName names the record that the hub hashed file's content to
// sha: "sha.file", both in hex. The name is the whole record.
func verifiedName(sha, file xethash.Hash) string { return sha.String() + "." + file.String() }

// parseVerified reads a verification record's name.
func parseVerified(n string) (sha, file xethash.Hash, ok bool) {
	a, b, found := strings.Cut(n, ".")
	var err1, err2 error
	sha, err1 = xethash.Parse(a)
	file, err2 = xethash.Parse(b)
	return sha, file, found && err1 == nil && err2 == nil && verifiedName(sha, file) == n
}

// known reports whether the index has read the record of that kind and
// name.
func (idx *index) known(kind, name string) bool {
	switch kind {
	case store.Shards:
		_, ok := idx.shardFiles[name]
		return ok
	case store.Verified:
		return idx.verifiedNames[name]
	}
	return idx.grantNames[name]
}

// readNews lists the shards, grant and verification records of st and
// reads those that known says are new. It only reads the store.
func readNews(st store.Store, known func(kind, name string) bool) (*news, error) {
	d := &news{shards: map[string]*shard.Shard{}, grants: map[string]grantRecord{}, verified: map[string][2]xethash.Hash{}}
	names, err := st.List(store.Grants)
	if err != nil {
		return nil, err
	}
	for _, n := range names {
		if known(store.Grants, n) {
			continue
		}
		b, err := store.Read(st, store.Grants, n)
		g, ok := parseGrant(n, b)
		if err != nil || !ok {
			d.problems = append(d.problems, Problem{Path: st.Where(store.Grants, n), Err: "not a readable upload record; ignored"})
			d.grants[n] = grantRecord{}
			continue
		}
		d.grants[n] = g
	}
	if names, err = st.List(store.Verified); err != nil {
		return nil, err
	}
	for _, n := range names {
		if known(store.Verified, n) {
			continue
		}
		sha, file, ok := parseVerified(n)
		if !ok {
			d.problems = append(d.problems, Problem{Path: st.Where(store.Verified, n), Err: "not named SHA-256.file hash; ignored"})
			continue
		}
		d.verified[n] = [2]xethash.Hash{sha, file}
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
	for _, v := range d.verified {
		idx.addVerified(v[0], v[1])
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
		who := grantee{g.repo, g.user}
		if files, ok := idx.shardFiles[g.target]; ok {
			idx.grant(who, files)
		} else {
			// The grant came before its shard is registered: keep it for
			// then (register).
			idx.pending[g.target] = append(idx.pending[g.target], who)
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

// register adds a checked shard's files, xorbs and dedupe entries, and
// grants its files to the repositories whose grants came before it.
func (idx *index) register(name string, s *shard.Shard) {
	idx.shards++
	files := make([]shardFile, len(s.Files))
	for i := range s.Files {
		files[i] = shardFile{s.Files[i].Hash, s.Files[i].SHA256}
	}
	idx.shardFiles[name] = files
	for _, who := range idx.pending[name] {
		idx.grant(who, files)
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
			m := &xorbMeta{chunks: make([]xethash.Entry, len(x.Chunks)), size: int64(x.BytesOnDisk)}
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
