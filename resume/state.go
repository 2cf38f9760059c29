// Package resume keeps what an upload has stored, so that an upload
// interrupted (killed, a reload, a dropped network) and started again
// sends only what the CAS does not have yet.
//
// A State belongs to one hub and repository (a scope). The pipeline sees
// it as its "chunks already stored" (pipeline.StoredChunks): each xorb is
// recorded durably, unconfirmed, before it is sent, and confirmed once the
// CAS accepts it; a later upload of the same file references the chunks
// of confirmed xorbs instead of sending them, and those of unconfirmed
// ones once the CAS says it has them (a reload or a kill can stop an
// upload after the CAS took a xorb and before its answer came back). Records live in a Backend (a folder natively, Dir; the browser's
// storage through JavaScript), are bounded in total size (the oldest
// deleted first), and are dropped by Done once the upload is committed.
// They are never trusted blindly: a record that does not read back whole
// and consistent is ignored with a warning and deleted, and a xorb the
// CAS no longer has makes the hub refuse the upload's shard, upon which
// the pipeline forgets the xorbs it resumed and sends their chunks again.
package resume

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/xetkit/xetkit/shard"
	"github.com/xetkit/xetkit/xethash"
)

// DefaultMaxBytes bounds the records of a Backend, every scope together,
// unless Options.MaxBytes says otherwise: 64 MiB, about 1,300 records of
// full 64 MiB xorbs (48 bytes per chunk), so the last ~85 GiB uploaded
// can resume.
const DefaultMaxBytes = 64 << 20

// Options tune a State.
type Options struct {
	// MaxBytes bounds the bytes of records in the Backend, all scopes
	// together (default DefaultMaxBytes); past it the oldest records are
	// deleted first, whatever their scope.
	MaxBytes int64
	// Warn, if set, hears of records ignored (unreadable or corrupt:
	// they are deleted) and of a record that could not be written (the
	// upload goes on; it will resume less).
	Warn func(msg string)
	// Repo, if set, is kept beside the scope's records (as repoLabel) so
	// that Pending can say whose unfinished uploads they are.
	Repo *Repo
}

// Scope names the state of one repository on one hub: the same hub URL,
// repository type and name give the same scope.
func Scope(hub, repoType, repo string) string {
	if repoType == "" {
		repoType = "model"
	}
	sum := sha256.Sum256([]byte(strings.TrimRight(hub, "/") + "\n" + repoType + "\n" + repo))
	return hex.EncodeToString(sum[:16])
}

// State is what uploads to one scope have stored and not yet committed.
// It is safe for concurrent use.
type State struct {
	backend Backend
	scope   string
	opts    Options

	mu      sync.Mutex
	xorbs   map[xethash.Hash]*held
	chunks  map[xethash.Hash]chunkAt
	touched map[xethash.Hash]bool // found or stored since Open or Done
	all     []Entry               // the Backend's records, every scope, oldest first
	total   int64                 // their bytes
	last    int64                 // time of the last record named here
	warned  bool                  // a write failed (told once; later ones are still tried)
	gone    []Entry               // records dropped from all, to delete from the Backend (sweep)

	labelMu sync.Mutex  // held while the scope's repoLabel is written
	labeled atomic.Bool // it is (or could not be)

	confirming int        // records being rewritten as confirmed (st.mu)
	confirmed  *sync.Cond // signalled as each is
}

type held struct {
	info      *shard.Xorb
	name      string // record name, "" once removed from the Backend
	confirmed bool   // the CAS accepted it; its chunks are found
}

type chunkAt struct {
	x     *held
	index uint32
}

// Open loads the records of scope from b. A Backend that cannot be listed
// or read gives a State that knows nothing (with a warning): an upload
// then starts from the beginning, as it would with no state.
func Open(b Backend, scope string, opts Options) *State {
	if opts.MaxBytes <= 0 {
		opts.MaxBytes = DefaultMaxBytes
	}
	st := &State{backend: b, scope: scope, opts: opts,
		xorbs: map[xethash.Hash]*held{}, chunks: map[xethash.Hash]chunkAt{}, touched: map[xethash.Hash]bool{}}
	st.confirmed = sync.NewCond(&st.mu)
	entries, err := b.List()
	if err != nil {
		st.warn("cannot list the upload state, so this upload starts from the beginning: %v", err)
		return st
	}
	for _, e := range entries {
		if _, _, _, err := parseRecordName(e.Name); err == nil {
			st.all = append(st.all, e)
			st.total += e.Size
		}
	}
	slices.SortFunc(st.all, func(a, b Entry) int { return strings.Compare(a.Name, b.Name) })
	st.mu.Lock()
	st.evict()
	st.mu.Unlock()
	mine := slices.DeleteFunc(slices.Clone(st.all), func(e Entry) bool { return e.Scope != scope })
	for _, e := range mine {
		at, want, confirmed, _ := parseRecordName(e.Name)
		st.last = max(st.last, at)
		if e.Size > maxRecordSize {
			st.warn("ignoring a corrupt upload state record %s/%s (deleted): %d bytes, more than a record can hold", scope, e.Name, e.Size)
			st.remove(e.Name)
			continue
		}
		data, err := b.Read(scope, e.Name)
		if err != nil {
			st.warn("ignoring upload state record %s/%s: %v", scope, e.Name, err)
			continue
		}
		x, err := decodeRecord(want, data)
		if err != nil {
			st.warn("ignoring a corrupt upload state record %s/%s (deleted): %v", scope, e.Name, err)
			st.remove(e.Name)
			continue
		}
		st.add(x, e.Name, confirmed)
	}
	st.sweep()
	// Labelled now, while the caller waits anyway, rather than before the
	// first record, which a busy upload would wait for.
	st.label()
	return st
}

func (st *State) warn(format string, args ...any) {
	if st.opts.Warn != nil {
		st.opts.Warn(fmt.Sprintf(format, args...))
	}
}

// add remembers a xorb, recorded under name ("": not recorded), and
// once it is confirmed its chunks (a chunk already known keeps its place).
// A xorb recorded twice keeps one record: the confirmed one, else the
// newer.
func (st *State) add(x *shard.Xorb, name string, confirmed bool) {
	h := st.xorbs[x.Hash]
	if h == nil {
		h = &held{info: x}
		st.xorbs[x.Hash] = h
	}
	if name != "" && name != h.name {
		if h.confirmed && !confirmed {
			st.remove(name)
			return
		}
		if h.name != "" {
			st.remove(h.name)
		}
		h.name = name
	}
	if confirmed && !h.confirmed {
		h.confirmed = true
		for i, c := range h.info.Chunks {
			if _, ok := st.chunks[c.Hash]; !ok {
				st.chunks[c.Hash] = chunkAt{h, uint32(i)}
			}
		}
	}
}

// Find returns the recorded xorb that holds chunk, and the chunk's index
// in it. The xorb's CAS info goes into the upload's shard, as it would
// for a xorb sent in the same upload.
func (st *State) Find(chunk xethash.Hash) (*shard.Xorb, uint32, bool) {
	st.mu.Lock()
	defer st.mu.Unlock()
	at, ok := st.chunks[chunk]
	if !ok {
		return nil, 0, false
	}
	st.touched[at.x.info.Hash] = true
	return at.x.info, at.index, true
}

// Sending records, durably before it returns, that the xorb x describes
// (its chunk hashes unkeyed) is about to be sent: an unconfirmed record,
// so that an upload stopped before the CAS's answer comes back can ask
// the CAS whether it has the xorb instead of sending it again. A record
// that cannot be written is warned of once; the upload goes on without.
func (st *State) Sending(x *shard.Xorb) {
	st.mu.Lock()
	st.touched[x.Hash] = true
	if st.xorbs[x.Hash] != nil {
		st.mu.Unlock()
		return
	}
	at := st.next()
	st.mu.Unlock()
	st.write(x, at, false)
}

// Stored confirms that the CAS accepted the xorb x describes. Its chunks
// are found at once; its record is rewritten as confirmed in the
// background (Done and Forget wait for it): the unconfirmed one is durable
// already, and the worst a crash meanwhile does is leave it for the next
// upload to ask the CAS about. A xorb not recorded by Sending is recorded
// before Stored returns.
func (st *State) Stored(x *shard.Xorb) {
	st.mu.Lock()
	st.touched[x.Hash] = true
	st.confirm(x)
}

// Confirmed says that the CAS has an unconfirmed xorb after all (see
// Unconfirmed), as Stored does, without making it this upload's.
func (st *State) Confirmed(x *shard.Xorb) {
	st.mu.Lock()
	st.confirm(x)
}

// confirm is Stored and Confirmed; st.mu is held on entry, and released.
func (st *State) confirm(x *shard.Xorb) {
	h := st.xorbs[x.Hash]
	switch {
	case h != nil && h.confirmed:
		st.mu.Unlock()
	case h != nil && h.name != "":
		from := h.name
		at, _, _, _ := parseRecordName(from)
		st.add(h.info, "", true)
		st.confirming++
		st.mu.Unlock()
		go func() {
			if !st.rename(h, from, at) {
				st.write(h.info, at, true)
			}
			st.mu.Lock()
			st.confirming--
			st.confirmed.Broadcast()
			st.mu.Unlock()
		}()
	default:
		at := st.next()
		st.mu.Unlock()
		st.write(x, at, true)
	}
}

// next returns the time to name a new record by; st.mu is held.
func (st *State) next() int64 {
	st.last = max(time.Now().UnixNano(), st.last+1)
	return st.last
}

// write records x under the name for at, then remembers it (see add). A
// record that cannot be written is warned of once (a store can fail once
// and work again: each record is tried).
// Lookups are not held up while the record is written.
func (st *State) write(x *shard.Xorb, at int64, confirmed bool) {
	// The Backend is written without the lock: a JavaScript one waits
	// for the event loop, which may be waiting for the lock.
	x = &shard.Xorb{Hash: x.Hash, BytesInXorb: x.BytesInXorb, Chunks: slices.Clone(x.Chunks)}
	name := recordName(at, x.Hash, confirmed)
	data, err := encodeRecord(x)
	if err == nil {
		st.label()
		err = st.backend.Write(st.scope, name, data)
	}

	st.mu.Lock()
	defer st.sweep()
	defer st.mu.Unlock()
	if err != nil {
		if !st.warned {
			st.warn("cannot record a stored xorb, so an interrupted upload will resume less: %v", err)
		}
		st.warned = true
		name = ""
	} else {
		st.all = append(st.all, Entry{Scope: st.scope, Name: name, Size: int64(len(data))})
		st.total += int64(len(data))
	}
	st.add(x, name, confirmed)
	st.evict()
}

// rename confirms h's record, named from, by renaming it, where the
// Backend can (Renamer); false where it could not.
func (st *State) rename(h *held, from string, at int64) bool {
	r, ok := st.backend.(Renamer)
	if !ok {
		return false
	}
	to := recordName(at, h.info.Hash, true)
	if r.Rename(st.scope, from, to) != nil {
		return false
	}
	st.mu.Lock()
	defer st.sweep()
	defer st.mu.Unlock()
	i := slices.IndexFunc(st.all, func(e Entry) bool { return e.Scope == st.scope && e.Name == from })
	if i < 0 {
		// Evicted meanwhile: it goes under its new name.
		st.gone = append(st.gone, Entry{Scope: st.scope, Name: to})
		return true
	}
	st.all[i].Name = to
	h.name = to
	return true
}

// Unconfirmed returns the xorbs recorded as being sent whose acceptance
// was never heard of (the upload sending them was stopped): the CAS may
// have them or not. Until Confirmed, their chunks are not found.
func (st *State) Unconfirmed() []*shard.Xorb {
	st.mu.Lock()
	defer st.mu.Unlock()
	var out []*shard.Xorb
	for _, h := range st.xorbs {
		if !h.confirmed && h.name != "" {
			out = append(out, h.info)
		}
	}
	return out
}

// label writes the scope's repoLabel before its first record, so that no
// record is listed without it (concurrent first records wait for it). A
// label that cannot be written only leaves the listing without a name.
func (st *State) label() {
	if st.opts.Repo == nil || st.labeled.Load() {
		return
	}
	st.labelMu.Lock()
	defer st.labelMu.Unlock()
	if st.labeled.Load() {
		return
	}
	b, err := json.Marshal(st.opts.Repo)
	if err == nil {
		err = st.backend.Write(st.scope, repoLabel, b)
	}
	if err != nil {
		st.warn("cannot name the repository of the upload state: %v", err)
	}
	st.labeled.Store(true)
}

// unlabel queues the deletion of scope's repoLabel once no record of it
// is left; st.mu is held.
func (st *State) unlabel(scope string) {
	if slices.ContainsFunc(st.all, func(e Entry) bool { return e.Scope == scope }) {
		return
	}
	if scope == st.scope {
		st.labeled.Store(false)
	}
	st.gone = append(st.gone, Entry{Scope: scope, Name: repoLabel})
}

// evict drops the oldest records while they are over the bound; st.mu is
// held.
func (st *State) evict() {
	for st.total > st.opts.MaxBytes && len(st.all) > 0 {
		e := st.all[0]
		if e.Scope == st.scope {
			st.remove(e.Name)
			continue
		}
		st.all = st.all[1:]
		st.total -= e.Size
		st.gone = append(st.gone, e)
		st.unlabel(e.Scope)
	}
}

// remove drops one of the scope's records (deleted from the Backend by
// the next sweep); st.mu is held. What is known of its xorb stays in
// memory: the xorb is stored all the same.
func (st *State) remove(name string) {
	if i := slices.IndexFunc(st.all, func(e Entry) bool { return e.Scope == st.scope && e.Name == name }); i >= 0 {
		st.total -= st.all[i].Size
		st.all = slices.Delete(st.all, i, i+1)
	}
	st.gone = append(st.gone, Entry{Scope: st.scope, Name: name})
	st.unlabel(st.scope)
	_, x, _, _ := parseRecordName(name)
	if h := st.xorbs[x]; h != nil && h.name == name {
		h.name = ""
	}
}

// sweep deletes from the Backend the records remove and evict dropped. It
// runs without st.mu: a JavaScript Backend waits for the event loop, and
// the chunk loop's Find must not wait with it.
func (st *State) sweep() {
	st.mu.Lock()
	gone := st.gone
	st.gone = nil
	st.mu.Unlock()
	// Records side by side (a committed upload drops all of its own at
	// once), then the labels of the scopes they emptied.
	var wg sync.WaitGroup
	for _, e := range gone {
		if e.Name != repoLabel {
			wg.Go(func() {
				if err := st.backend.Remove(e.Scope, e.Name); err != nil {
					st.warn("cannot delete upload state record %s/%s: %v", e.Scope, e.Name, err)
				}
			})
		}
	}
	wg.Wait()
	for _, e := range gone {
		if e.Name == repoLabel {
			st.dropLabel(e.Scope)
		}
	}
}

// dropLabel deletes scope's repoLabel unless a record of the scope came
// since it was queued (label, under the same labelMu, wrote it again).
func (st *State) dropLabel(scope string) {
	st.labelMu.Lock()
	defer st.labelMu.Unlock()
	st.mu.Lock()
	kept := slices.ContainsFunc(st.all, func(e Entry) bool { return e.Scope == scope }) ||
		(scope == st.scope && st.labeled.Load())
	st.mu.Unlock()
	if kept {
		return
	}
	if err := st.backend.Remove(scope, repoLabel); err != nil {
		st.warn("cannot delete upload state record %s/%s: %v", scope, repoLabel, err)
	}
}

// Forget drops xorbs the CAS turned out not to have: their chunks are no
// longer found, and their records are deleted.
func (st *State) Forget(xorbs ...xethash.Hash) {
	st.mu.Lock()
	defer st.sweep()
	defer st.mu.Unlock()
	st.settle()
	for _, x := range xorbs {
		h := st.xorbs[x]
		if h == nil {
			continue
		}
		if h.name != "" {
			st.remove(h.name)
		}
		delete(st.xorbs, x)
		delete(st.touched, x)
		for _, c := range h.info.Chunks {
			if at, ok := st.chunks[c.Hash]; ok && at.x == h {
				delete(st.chunks, c.Hash)
			}
		}
	}
}

// Done drops the records of every xorb found or stored since Open (or
// the last Done): the upload that used them is committed, so there is
// nothing left to resume. Records of other, unfinished uploads to the
// same repository stay.
func (st *State) Done() {
	st.mu.Lock()
	st.settle()
	touched := slices.Collect(maps.Keys(st.touched))
	st.mu.Unlock()
	st.Forget(touched...)
	if st.labeled.Load() {
		// Open labelled the scope: gone with its last record.
		st.mu.Lock()
		st.unlabel(st.scope)
		st.mu.Unlock()
		st.sweep()
	}
}

// Settle returns once the records of the xorbs Stored was told of are
// written (or could not be).
func (st *State) Settle() {
	st.mu.Lock()
	defer st.mu.Unlock()
	st.settle()
}

// settle waits, st.mu held, until no record is being rewritten as
// confirmed: one that lands after its xorb is forgotten would outlive it.
func (st *State) settle() {
	for st.confirming > 0 {
		st.confirmed.Wait()
	}
}

// Xorbs returns how many xorbs the State knows in its scope, confirmed
// or not.
func (st *State) Xorbs() int {
	st.mu.Lock()
	defer st.mu.Unlock()
	return len(st.xorbs)
}
