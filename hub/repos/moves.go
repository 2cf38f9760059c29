package repos

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"strings"
	"time"

	"github.com/xetkit/xetkit/hub/internal/sweep"
	"github.com/xetkit/xetkit/hub/pathindex"
	"github.com/xetkit/xetkit/hub/store"
	"github.com/xetkit/xetkit/hub/tree"
	"github.com/xetkit/xetkit/xethash"
)

// Moves. A repository or bucket moved to a new name keeps its uid, and so
// its commits, discussions and files; its old name keeps a record under
// store.Moves (named by the old Key) of where it went. Reads by the old
// name are answered as Moved (the fronts redirect them) for as long as no
// repository or bucket is made under it; writes by it are refused, naming
// the new one. A name moved from twice leads on through each record whose
// uid is the moved one's, so a chain of renames still reaches it, and a
// stale record (its uid elsewhere) leads nowhere.
//
// A move is made in steps that each leave a state reads understand: the
// record is marked as moving (it takes no change from then on), the new
// name is let read every file the record's refs reach, the move record is
// written, the record is written under the new name, and the old one is
// removed. A move interrupted between two steps is finished by sending it
// again; meanwhile reads by the old name see the repository there, or,
// once its new record exists, are redirected.

// moveRecord is where a moved repository or bucket went.
type moveRecord struct {
	UID string    `json:"uid"` // the moved one's
	To  string    `json:"to"`  // its new ns/name
	At  time.Time `json:"at"`
	// Ended marks a name a repository or bucket was made under since: it
	// redirects no more, but a chain through it still leads on.
	Ended bool `json:"ended,omitempty"`
}

// maxMoveHops bounds the records a redirect follows.
const maxMoveHops = 16

// loadMove reads the move record of name id, and its bytes.
func (s *Service) loadMove(id ID) (*moveRecord, []byte, error) {
	var m moveRecord
	b, err := readRecord(s.store, store.Moves, id.Key(), &m)
	if err != nil {
		return nil, nil, err
	}
	return &m, b, nil
}

// holder is what a redirect needs of a repository or bucket: its uid, its
// name as recorded, and whether it is private.
type holder struct {
	uid, name string
	private   bool
	movingTo  string
}

// lookup finds the repository or bucket at id: errNoRepo when none.
func (s *Service) lookup(id ID) (holder, error) {
	if id.Type == BucketType {
		b, err := s.store.loadBucket(id)
		if err != nil {
			return holder{}, err
		}
		return holder{b.UID, b.ID, b.Private, b.MovingTo}, nil
	}
	rec, err := s.store.loadRepo(id)
	if err != nil {
		return holder{}, err
	}
	return holder{rec.UID, rec.ID, rec.Private, rec.MovingTo}, nil
}

// redirect is where the repository or bucket once at id is now, if id was
// moved from and no repository or bucket was made there since.
func (s *Service) redirect(id ID) (ID, bool) {
	m, _, err := s.loadMove(id)
	if err != nil || m.Ended {
		return ID{}, false
	}
	uid := m.UID
	for range maxMoveHops {
		to, err := ParseAnyID(id.Type, m.To)
		if err != nil {
			return ID{}, false
		}
		if h, err := s.lookup(to); err == nil && h.uid == uid {
			if named, err := ParseAnyID(id.Type, h.name); err == nil {
				to = named
			}
			return to, true
		}
		if m, _, err = s.loadMove(to); err != nil || m.UID != uid {
			return ID{}, false
		}
	}
	return ID{}, false
}

// finishedMove reports whether the record of uid at id, marked as moving
// to movingTo, has its new record there already (only the removal of the
// old one is left): then id redirects there.
func (s *Service) finishedMove(id ID, uid, movingTo string) (ID, bool) {
	to, err := ParseAnyID(id.Type, movingTo)
	if err != nil {
		return ID{}, false
	}
	h, err := s.lookup(to)
	return to, err == nil && h.uid == uid
}

// movedError is the answer to u's read of from, moved to to: Moved, or
// the NotFound of from when u may not see to.
func (s *Service) movedError(u *User, from, to ID) error {
	h, err := s.lookup(to)
	if err != nil || !maySeeIn(u, to.NS, h.private) {
		if from.Type == BucketType {
			return noBucket(from)
		}
		return noRepo(from)
	}
	what := from.Type + " repository"
	if from.Type == BucketType {
		what = "bucket"
	}
	return &Error{Kind: Moved, Msg: fmt.Sprintf("%s %s was moved to %s", what, from, to), MovedTo: &to, MovedFrom: from}
}

// movedWrite refuses a write to from, which was moved to to.
func movedWrite(from, to ID) error {
	what := from.Type + " repository"
	if from.Type == BucketType {
		what = "bucket"
	}
	return refuse(Conflict, "%s %s was moved to %s: write to %s (reads of %s are redirected there)", what, from, to, to, from)
}

// missingForWrite is the refusal of a write to id, which has no record:
// moved there, or not found.
func (s *Service) missingForWrite(id ID) error {
	if to, ok := s.redirect(id); ok {
		return movedWrite(id, to)
	}
	if id.Type == BucketType {
		return noBucket(id)
	}
	return noRepo(id)
}

// endRedirect marks the move record of id, under which a repository or
// bucket was just made, as ended. It is best effort: a record left as it
// was only redirects while nothing is at id, which there now is.
func (s *Service) endRedirect(id ID) {
	for range 3 {
		m, b, err := s.loadMove(id)
		if err != nil || m.Ended {
			return
		}
		m.Ended = true
		nb, err := json.Marshal(m)
		if err != nil {
			return
		}
		if err := s.store.Swap(store.Moves, id.Key(), b, nb); !errors.Is(err, store.ErrSwapped) {
			return
		}
	}
}

// putMove records that from (of uid) was moved to to.
func (s *Service) putMove(from, to ID, uid string) error {
	nb, err := json.Marshal(moveRecord{UID: uid, To: to.String(), At: s.now().UTC()})
	if err != nil {
		return err
	}
	for range 5 {
		_, old, err := s.loadMove(from)
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
		if err := s.store.Swap(store.Moves, from.Key(), old, nb); !errors.Is(err, store.ErrSwapped) {
			return err
		}
	}
	return fmt.Errorf("the move record of %s keeps changing", from)
}

// Move moves repository or bucket from to the name to (of the same type)
// for u, who must write both namespaces; to must be free (Conflict). A
// move only in the case of letters renames in place.
func (s *Service) Move(u *User, from, to ID) error {
	if from.Type != to.Type {
		return refuse(Invalid, "a %s cannot be moved to a %s", from.Type, to.Type)
	}
	what := "moving a repository"
	if from.Type == BucketType {
		what = "moving a bucket"
	}
	if err := mayWrite(u, from.NS, what); err != nil {
		return err
	}
	if err := mayWrite(u, to.NS, what); err != nil {
		return err
	}
	if from.String() == to.String() {
		return refuse(Invalid, "%s is already named %s", from, to)
	}
	fence, err := s.cas.Fence()
	if err != nil {
		return err
	}
	keys := []string{from.Key(), to.Key()}
	if keys[1] < keys[0] {
		keys[0], keys[1] = keys[1], keys[0]
	}
	for i, k := range keys {
		if i == 1 && k == keys[0] {
			break
		}
		l := s.repoLocks.of(k)
		l.Lock()
		defer l.Unlock()
	}
	if from.Type == BucketType {
		return s.moveBucket(u, from, to, fence)
	}
	rec, err := s.store.loadRepo(from)
	if errors.Is(err, errNoRepo) {
		return s.missingForWrite(from)
	}
	if err != nil {
		return err
	}
	if !MaySee(u, rec) {
		return noRepo(from)
	}
	if rec.moving && !strings.EqualFold(rec.MovingTo, to.String()) {
		return refuse(Conflict, "%s is being moved to %s: send that move again to finish it", from, rec.MovingTo)
	}
	if from.Key() == to.Key() { // letters' case alone
		rec.ID = to.String()
		return s.store.saveRepo(from, rec, fence)
	}
	there, err := s.store.loadRepo(to)
	switch {
	case err == nil && there.UID != rec.UID:
		return &Error{Kind: Conflict, Code: ErrExists.Code, Msg: fmt.Sprintf("%s %s already exists", to.Type, to)}
	case err != nil && !errors.Is(err, errNoRepo):
		return err
	}
	if !rec.moving {
		rec.MovingTo = to.String()
		if err := s.store.saveRepo(from, rec, fence); err != nil {
			return err
		}
	}
	files, err := s.reachedFiles(rec)
	if err != nil {
		return err
	}
	for f := range files {
		if err := s.cas.Grant(to.Key(), f); err != nil {
			return err
		}
	}
	if err := s.putMove(from, to, rec.UID); err != nil {
		return err
	}
	if there == nil {
		moved := *rec
		moved.ID, moved.MovingTo, moved.read, moved.moving = to.String(), "", nil, false
		if err := s.store.saveRepo(to, &moved, fence); err != nil {
			return err
		}
	}
	if err := s.store.removeRepo(from, rec); err != nil {
		return err
	}
	s.endRedirect(to)
	s.emitMove(from, to, rec)
	return nil
}

// reachedFiles is every Xet file the refs of record rec reach, through
// all their history.
func (s *Service) reachedFiles(rec *Record) (map[xethash.Hash]bool, error) {
	r := &Reached{Commits: map[string]bool{}, Trees: map[tree.ID]bool{}, Blobs: map[string]bool{}, Files: map[xethash.Hash]bool{}}
	roots, err := rec.roots(s.store)
	if err != nil {
		return nil, err
	}
	for ref, head := range roots {
		if d := r.walk(s.store, s.trees, commitName(rec.UID, head), rec.ID+" "+ref); len(d) > 0 {
			return nil, fmt.Errorf("%s: %s", d[0].Path, d[0].Err)
		}
	}
	return r.Files, nil
}

// moveBucket is Move of a bucket; the caller holds both names' locks.
func (s *Service) moveBucket(u *User, from, to ID, fence sweep.Fence) error {
	b, err := s.store.loadBucket(from)
	if errors.Is(err, errNoRepo) {
		return s.missingForWrite(from)
	}
	if err != nil {
		return err
	}
	if !maySeeIn(u, from.NS, b.Private) {
		return noBucket(from)
	}
	if b.moving && !strings.EqualFold(b.MovingTo, to.String()) {
		return refuse(Conflict, "bucket %s is being moved to %s: send that move again to finish it", from, b.MovingTo)
	}
	if from.Key() == to.Key() {
		b.ID = to.String()
		return s.store.saveBucket(from, b, fence)
	}
	there, err := s.store.loadBucket(to)
	switch {
	case err == nil && there.UID != b.UID:
		return &Error{Kind: Conflict, Code: ErrExists.Code, Msg: fmt.Sprintf("bucket %s already exists", to)}
	case err != nil && !errors.Is(err, errNoRepo):
		return err
	}
	if !b.moving {
		b.MovingTo = to.String()
		if err := s.store.saveBucket(from, b, fence); err != nil {
			return err
		}
	}
	root, err := b.root()
	if err != nil {
		return err
	}
	files := map[xethash.Hash]bool{}
	err = s.bucketIndex.Pages(root, map[pathindex.ID]bool{}, func(v []byte) error {
		f, err := decodeBucketFile("", v)
		if err == nil && !f.Xet.IsZero() {
			files[f.Xet] = true
		}
		return err
	})
	if err != nil {
		return err
	}
	for f := range files {
		if err := s.cas.Grant(to.Key(), f); err != nil {
			return err
		}
	}
	if err := s.putMove(from, to, b.UID); err != nil {
		return err
	}
	if there == nil {
		moved := *b
		moved.ID, moved.MovingTo, moved.read, moved.moving = to.String(), "", nil, false
		if err := s.store.saveBucket(to, &moved, fence); err != nil {
			return err
		}
	}
	if err := s.store.Swap(store.Buckets, bucketName(from), b.read, nil); err != nil {
		return err
	}
	s.endRedirect(to)
	return nil
}
