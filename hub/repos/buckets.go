package repos

import (
	bin "encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"slices"
	"strings"
	"time"

	"github.com/xetkit/xetkit/hub/internal/casapi"
	"github.com/xetkit/xetkit/hub/internal/sweep"
	"github.com/xetkit/xetkit/hub/pathindex"
	"github.com/xetkit/xetkit/hub/store"
	"github.com/xetkit/xetkit/xethash"
)

// Storage Buckets: mutable, unversioned storage of files by their Xet
// hash, with no git history. A bucket is a record under store.Buckets
// (named ns/name, in lower case) holding its visibility, its totals and
// the root of its files: a pathindex map from path to the file (its Xet
// hash, size, times and content type), whose pages are objects under
// store.BucketPages. A batch of changes writes the pages it touches and
// then swaps the record, so each batch is applied whole or not at all,
// and a crash leaves the bucket as it was before the batch or after it.
// Access follows a repository's: anyone reads a public bucket, the people
// of its namespace a private one, and those who may write the namespace
// change it. A bucket's CAS tokens are those of its Key
// ("buckets/ns/name"): what they upload is the bucket's to add.

// BucketType is the type of an ID that names a bucket.
const BucketType = "bucket"

// Bucket is a bucket's record.
type Bucket struct {
	ID      string    `json:"id"` // ns/name as created or moved to
	UID     string    `json:"uid"`
	Private bool      `json:"private"`
	Created time.Time `json:"created"`
	Updated time.Time `json:"updated,omitempty"`
	// Root is the pathindex map of its files (hex; "" when empty), Files
	// and Size their number and bytes.
	Root  string `json:"root,omitempty"`
	Files int64  `json:"files"`
	Size  int64  `json:"size"`
	// MovingTo is set while a move to that ns/name is under way: the
	// bucket takes no change meanwhile.
	MovingTo string `json:"movingTo,omitempty"`
	// Sweep is the last store gc sweep that rewrote the record.
	Sweep int64 `json:"sweep,omitempty"`

	read   []byte // the record as loaded (nil for a new one), for the swap
	moving bool   // MovingTo was set when it was loaded
}

// Bounds of buckets.
const (
	// MaxBucketBatch bounds the lines of one batch (the client sends at
	// most 1,000).
	MaxBucketBatch = 5000
	// maxContentType bounds a file's content type.
	maxContentType = 255
	// bucketPageCacheBytes bounds the decoded bucket pages kept in memory.
	bucketPageCacheBytes = 32 << 20
)

// bucketName is the name of bucket id's record under store.Buckets.
func bucketName(id ID) string { return strings.ToLower(id.NS + "/" + id.Name) }

// bucketPages keeps bucket pages in the hub's store.
type bucketPages struct{ s store.Store }

func (p bucketPages) Get(id pathindex.ID) ([]byte, error) {
	return store.Read(p.s, store.BucketPages, id.String())
}

func (p bucketPages) PutAll(pages map[pathindex.ID][]byte) error {
	objs := make([]store.Object, 0, len(pages))
	for id, b := range pages {
		objs = append(objs, store.Object{Kind: store.BucketPages, Name: id.String(), Data: b})
	}
	return p.s.PutAll(objs)
}

// loadBucket reads bucket id's record: errNoRepo when there is none.
func (s objects) loadBucket(id ID) (*Bucket, error) {
	var b Bucket
	raw, err := readRecord(s, store.Buckets, bucketName(id), &b)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, errNoRepo
	}
	if err != nil {
		return nil, err
	}
	b.read, b.moving = raw, b.MovingTo != ""
	return &b, nil
}

// saveBucket swaps bucket id's record for b (as loaded; nil read: a new
// one), once fence holds: store.ErrSwapped when another writer got there
// first. A record loaded while a move was under way is not saved.
func (s objects) saveBucket(id ID, b *Bucket, fence sweep.Fence) error {
	if b.moving {
		return refuse(Conflict, "bucket %s is being moved to %s: send the move again to finish it", id, b.MovingTo)
	}
	raw, err := json.MarshalIndent(b, "", "  ")
	if err != nil {
		return err
	}
	if err := fence.Holds(s); err != nil {
		return err
	}
	if err := s.Swap(store.Buckets, bucketName(id), b.read, raw); err != nil {
		return err
	}
	b.read = raw
	return nil
}

// noBucket is the miss of bucket id.
func noBucket(id ID) error { return missing(CodeRepoNotFound, "bucket %s not found", id) }

// BucketFile is one file of a bucket.
type BucketFile struct {
	Path string
	Xet  xethash.Hash
	Size int64
	// MTime is the file's modification time as the client gave it,
	// Uploaded when the batch that added it was applied (both to the
	// millisecond).
	MTime, Uploaded time.Time
	ContentType     string
}

// bucketFileVersion starts an encoded BucketFile.
const bucketFileVersion = 1

// encodeBucketFile is f as a value of the bucket's map (its path is the
// key): a version byte, the Xet hash, then the size, the two times in
// milliseconds and the content type.
func encodeBucketFile(f BucketFile) []byte {
	b := make([]byte, 0, 64+len(f.ContentType))
	b = append(b, bucketFileVersion)
	b = append(b, f.Xet[:]...)
	b = bin.AppendUvarint(b, uint64(f.Size))
	b = bin.AppendVarint(b, f.MTime.UnixMilli())
	b = bin.AppendVarint(b, f.Uploaded.UnixMilli())
	b = bin.AppendUvarint(b, uint64(len(f.ContentType)))
	return append(b, f.ContentType...)
}

// decodeBucketFile reads the file at path from its value.
func decodeBucketFile(path string, v []byte) (BucketFile, error) {
	f := BucketFile{Path: path}
	bad := fmt.Errorf("bucket file %q: a malformed entry", path)
	if len(v) < 1+len(f.Xet) || v[0] != bucketFileVersion {
		return f, bad
	}
	copy(f.Xet[:], v[1:])
	v = v[1+len(f.Xet):]
	size, n := bin.Uvarint(v)
	if n <= 0 || size > 1<<62 {
		return f, bad
	}
	v = v[n:]
	mt, n := bin.Varint(v)
	if n <= 0 {
		return f, bad
	}
	v = v[n:]
	up, n := bin.Varint(v)
	if n <= 0 {
		return f, bad
	}
	v = v[n:]
	ct, n := bin.Uvarint(v)
	if n <= 0 || ct != uint64(len(v)-n) {
		return f, bad
	}
	f.Size, f.MTime, f.Uploaded, f.ContentType = int64(size), time.UnixMilli(mt).UTC(), time.UnixMilli(up).UTC(), string(v[n:])
	return f, nil
}

// root is the bucket's map.
func (b *Bucket) root() (pathindex.ID, error) {
	id, err := pathindex.ParseID(b.Root)
	if err != nil {
		return id, fmt.Errorf("bucket %s: %w", b.ID, err)
	}
	return id, nil
}

// bucket loads bucket id for u to read: a private one u may not see is
// the same NotFound as a missing one, and a name it was moved from is
// Moved (a redirect) for one who may see where it went.
func (s *Service) bucket(u *User, id ID) (*Bucket, error) {
	b, err := s.store.loadBucket(id)
	if err == nil && b.moving {
		if to, ok := s.finishedMove(id, b.UID, b.MovingTo); ok {
			return nil, s.movedError(u, id, to)
		}
	}
	if errors.Is(err, errNoRepo) {
		if to, ok := s.redirect(id); ok {
			return nil, s.movedError(u, id, to)
		}
	}
	if err == nil && !maySeeIn(u, id.NS, b.Private) {
		err = errNoRepo
	}
	if errors.Is(err, errNoRepo) {
		return nil, noBucket(id)
	}
	return b, err
}

// maySeeIn reports whether u may see a repository or bucket of namespace
// ns that is private or not.
func maySeeIn(u *User, ns string, private bool) bool { return !private || u.Owns(ns) }

// Bucket loads bucket id for u to read.
func (s *Service) Bucket(u *User, id ID) (*Bucket, error) { return s.bucket(u, id) }

// CreateBucket makes bucket id for u, private or not: ErrExists if there
// is one. A bucket made under a name one was moved from ends that
// redirect.
func (s *Service) CreateBucket(u *User, id ID, private bool) error {
	if err := mayWrite(u, id.NS, "creating a bucket"); err != nil {
		return err
	}
	lock := s.repoLocks.of(id.Key())
	lock.Lock()
	defer lock.Unlock()
	if _, err := s.store.loadBucket(id); err == nil {
		return &Error{Kind: Conflict, Code: ErrExists.Code, Msg: fmt.Sprintf("You already created this bucket: %s", id)}
	} else if !errors.Is(err, errNoRepo) {
		return err
	}
	return s.createBucket(id, private)
}

// createBucket writes a new empty bucket id; the caller holds its lock.
func (s *Service) createBucket(id ID, private bool) error {
	now := s.now().UTC()
	b := &Bucket{ID: id.String(), UID: newUID(), Private: private, Created: now, Updated: now}
	raw, err := json.MarshalIndent(b, "", "  ")
	if err != nil {
		return err
	}
	// An empty bucket makes nothing needed: no gc fence to hold.
	if err := s.store.Swap(store.Buckets, bucketName(id), nil, raw); err != nil {
		if errors.Is(err, store.ErrSwapped) {
			return &Error{Kind: Conflict, Code: ErrExists.Code, Msg: fmt.Sprintf("You already created this bucket: %s", id)}
		}
		return err
	}
	s.endRedirect(id)
	return nil
}

// writableBucket loads bucket id for a change by u, who must write its
// namespace; with create, a bucket not there yet is made (public: the
// local hub's convenience, as for a repository's first commit).
func (s *Service) writableBucket(u *User, id ID, what string, create bool) (*Bucket, error) {
	if err := mayWrite(u, id.NS, what); err != nil {
		return nil, err
	}
	b, err := s.bucket(u, id)
	if e := As(err); e != nil && e.Kind == Moved {
		return nil, movedWrite(id, *e.MovedTo)
	}
	if errors.Is(err, ErrRepoNotFound) && create {
		lock := s.repoLocks.of(id.Key())
		lock.Lock()
		if _, err = s.store.loadBucket(id); errors.Is(err, errNoRepo) {
			err = s.createBucket(id, false)
		}
		lock.Unlock()
		if err != nil && !errors.Is(err, ErrExists) {
			return nil, err
		}
		b, err = s.bucket(u, id)
	}
	return b, err
}

// Buckets lists the buckets of namespace ns that u may see, whose names
// contain search (without case; "" all), by name.
func (s *Service) Buckets(u *User, ns, search string) ([]*Bucket, error) {
	names, err := s.store.List(store.Buckets)
	if err != nil {
		return nil, err
	}
	prefix := strings.ToLower(ns) + "/"
	search = strings.ToLower(search)
	var out []*Bucket
	for _, n := range names {
		name, ok := strings.CutPrefix(n, prefix)
		if !ok || strings.Contains(name, "/") || !strings.Contains(name, search) {
			continue
		}
		var b Bucket
		if _, err := readRecord(s.store, store.Buckets, n, &b); errors.Is(err, fs.ErrNotExist) {
			continue // deleted meanwhile
		} else if err != nil {
			return nil, err
		}
		if b.MovingTo != "" || !maySeeIn(u, ns, b.Private) {
			continue
		}
		out = append(out, &b)
	}
	return out, nil
}

// DeleteBucket deletes bucket id for u. Its files stay in the store until
// store gc finds nothing else holds them.
func (s *Service) DeleteBucket(u *User, id ID) error {
	if _, err := s.writableBucket(u, id, "deleting a bucket", false); err != nil {
		return err
	}
	lock := s.repoLocks.of(id.Key())
	lock.Lock()
	defer lock.Unlock()
	b, err := s.store.loadBucket(id)
	if errors.Is(err, errNoRepo) {
		return noBucket(id)
	}
	if err != nil {
		return err
	}
	if b.moving {
		return refuse(Conflict, "bucket %s is being moved to %s: send the move again to finish it", id, b.MovingTo)
	}
	return s.store.Swap(store.Buckets, bucketName(id), b.read, nil)
}

// ChangeBucketSettings applies v to bucket id's visibility for u.
func (s *Service) ChangeBucketSettings(u *User, id ID, v Visibility) error {
	if err := v.check(); err != nil {
		return err
	}
	return s.changeBucket(u, id, "changing a bucket's settings", false, func(b *Bucket, _ *pathindex.Index) error {
		b.Private = v.private(b.Private)
		return nil
	})
}

// changeBucket loads bucket id for u's change, under its lock, lets
// change edit it, and saves it, again from the load if another process
// changed it meanwhile. The gc fence is taken first (see package sweep).
func (s *Service) changeBucket(u *User, id ID, what string, create bool, change func(b *Bucket, x *pathindex.Index) error) error {
	fence, err := s.cas.Fence()
	if err != nil {
		return err
	}
	if _, err := s.writableBucket(u, id, what, create); err != nil {
		return err
	}
	return s.changeBucketFenced(id, fence, func(b *Bucket) error { return change(b, s.bucketIndex) })
}

// BucketItem is a file or a folder of a bucket listing.
type BucketItem struct {
	Dir  bool
	Path string
	File BucketFile // a file's
}

// Next is where a listing resumes after it: past the file, or past
// everything in the folder ('0' is the character after '/').
func (it BucketItem) Next() string {
	if it.Dir {
		return it.Path + "0"
	}
	return it.Path + "\x00"
}

// BucketWalk calls fn with the files of bucket b whose paths start with
// prefix (as strings: "logs" finds logs/a and logs.json), in order of
// path from start (where an earlier walk's last item said to go on, "":
// the beginning), until fn returns false. Unless recursive, the files
// below the next '/' after the prefix (one right after it aside) are one
// folder instead, as a listing of a folder shows them.
func (s *Service) BucketWalk(b *Bucket, prefix string, recursive bool, start string, fn func(BucketItem) bool) error {
	root, err := b.root()
	if err != nil {
		return err
	}
	pos := max(start, prefix)
	for {
		var dir string
		stopped := false
		var bad error
		err := s.bucketIndex.Scan(root, pos, func(k string, v []byte) bool {
			if !strings.HasPrefix(k, prefix) {
				stopped = true
				return false
			}
			if !recursive {
				rest := k[len(prefix):]
				skip := 0
				if prefix != "" && !strings.HasSuffix(prefix, "/") && strings.HasPrefix(rest, "/") {
					skip = 1
				}
				if j := strings.IndexByte(rest[skip:], '/'); j >= 0 {
					dir = k[:len(prefix)+skip+j]
					return false
				}
			}
			f, err := decodeBucketFile(k, v)
			if err != nil {
				bad = err
				return false
			}
			if !fn(BucketItem{Path: k, File: f}) {
				stopped = true
				return false
			}
			return true
		})
		switch {
		case err != nil:
			return err
		case bad != nil:
			return bad
		case stopped || dir == "":
			return nil
		}
		it := BucketItem{Dir: true, Path: dir}
		if !fn(it) {
			return nil
		}
		pos = it.Next()
	}
}

// BucketFileAt is the file at path p of bucket b, if there is one.
func (s *Service) BucketFileAt(b *Bucket, p string) (BucketFile, bool, error) {
	root, err := b.root()
	if err != nil {
		return BucketFile{}, false, err
	}
	p = storedForm(p)
	v, ok, err := s.bucketIndex.Get(root, p)
	if err != nil || !ok {
		return BucketFile{}, false, err
	}
	f, err := decodeBucketFile(p, v)
	return f, err == nil, err
}

// OpenBucketFile opens a bucket file's bytes, rebuilt from Xet with every
// chunk checked; the empty file has none.
func (s *Service) OpenBucketFile(f BucketFile) (Content, int64, error) {
	if f.Size == 0 {
		return emptyContent{}, 0, nil
	}
	return s.Open(File{Path: f.Path, Size: f.Size, Xet: f.Xet.String()})
}

// emptyContent is the content of the empty file.
type emptyContent struct{}

func (emptyContent) ReadAt([]byte, int64) (int, error) { return 0, io.EOF }
func (emptyContent) Close() error                      { return nil }

// BucketOpKind is what a line of a batch does.
type BucketOpKind int

// The kinds of batch line.
const (
	BucketAdd    BucketOpKind = iota + 1 // a file uploaded through the bucket's CAS tokens, by Xet hash
	BucketCopy                           // a file of a repository or bucket the user may read, by Xet hash
	BucketDelete                         // the file at a path
)

// BucketOp is one line of a batch.
type BucketOp struct {
	Kind BucketOpKind
	Path string
	// XetHash names an added or copied file; MTime is its modification
	// time (zero: when the batch is applied), ContentType its type.
	XetHash     string
	MTime       time.Time
	ContentType string
	// Source is a copy's repository or bucket.
	Source ID
}

// BucketFailure is a line of a batch that was not applied, and why: Op
// is its index among the batch's operations.
type BucketFailure struct {
	Op          int
	Path, Error string
}

// BucketBatch applies u's batch to bucket id (made if it does not exist
// yet, the local hub's convenience): each line that can be applied is, in
// one swap of the record, and the others are returned with the reason. A
// later line for a path replaces an earlier one. An added file must be one
// uploaded through the bucket's CAS tokens; a copied one, one that the
// source (a repository or bucket u may read) holds, which the bucket may
// read from then on: no byte is copied. Deleting a path that holds no
// file is no failure. An error is a failure of the whole batch (nothing
// applied).
func (s *Service) BucketBatch(u *User, id ID, ops []BucketOp) ([]BucketFailure, error) {
	if len(ops) > MaxBucketBatch {
		return nil, refuse(Invalid, "a batch of %d lines; at most %d", len(ops), MaxBucketBatch)
	}
	fence, err := s.cas.Fence()
	if err != nil {
		return nil, err
	}
	if _, err := s.writableBucket(u, id, "changing a bucket", true); err != nil {
		return nil, err
	}
	now := s.now().UTC().Truncate(time.Millisecond)
	var failed []BucketFailure
	type line struct {
		op   int
		path string
		file *BucketFile // nil: a delete
		from string      // the Key of the repository or bucket that holds the file
	}
	lines := make([]line, 0, len(ops))
	// The Xet hashes each source is asked for, at once.
	asks := map[string][]xethash.Hash{}
	sourceErr := map[string]error{}
	for i, op := range ops {
		fail := func(p, msg string) { failed = append(failed, BucketFailure{i, p, msg}) }
		p, err := normalizePath(op.Path)
		if err != nil {
			fail(op.Path, As(err).Msg)
			continue
		}
		if op.Kind == BucketDelete {
			lines = append(lines, line{op: i, path: p})
			continue
		}
		if op.Kind != BucketAdd && op.Kind != BucketCopy {
			fail(p, "unknown operation")
			continue
		}
		h, err := xethash.Parse(op.XetHash)
		if err != nil || h.String() != op.XetHash {
			fail(p, fmt.Sprintf("xetHash %q is not a Xet hash (64 lowercase hex digits)", op.XetHash))
			continue
		}
		if len(op.ContentType) > maxContentType {
			fail(p, fmt.Sprintf("a content type of %d bytes; at most %d", len(op.ContentType), maxContentType))
			continue
		}
		mtime := op.MTime
		if mtime.IsZero() {
			mtime = now
		}
		src := id
		if op.Kind == BucketCopy {
			src = op.Source
			if _, seen := sourceErr[src.Key()]; !seen {
				sourceErr[src.Key()] = s.mayCopyFrom(u, src)
			}
			if err := sourceErr[src.Key()]; err != nil {
				if e := As(err); e != nil {
					fail(p, e.Msg)
					continue
				}
				return nil, err
			}
		}
		f := &BucketFile{Path: p, Xet: h, MTime: mtime.UTC().Truncate(time.Millisecond), Uploaded: now, ContentType: op.ContentType, Size: -1}
		lines = append(lines, line{op: i, path: p, file: f, from: src.Key()})
		if !h.IsZero() { // the empty file is in every bucket
			asks[src.Key()] = append(asks[src.Key()], h)
		}
	}
	// Sizes of the files, from the CAS: -1 for those the source does not
	// hold.
	sizes := map[[2]string]int64{}
	for key, hs := range asks {
		for i, n := range s.cas.Sizes(key, hs) {
			sizes[[2]string{key, hs[i].String()}] = n
		}
	}
	changes := map[string]int{} // path → index in ch: a later line wins
	var ch []pathindex.Change
	grants := map[xethash.Hash]bool{}
	for _, l := range lines {
		var value []byte
		if f := l.file; f != nil {
			if f.Xet.IsZero() {
				f.Size = 0
			} else if f.Size = sizes[[2]string{l.from, f.Xet.String()}]; f.Size < 0 {
				what := "was uploaded to this bucket: upload it through its xet-write-token first"
				if l.from != id.Key() {
					what = "is held by " + l.from
				}
				failed = append(failed, BucketFailure{l.op, l.path, fmt.Sprintf("no file with xet hash %s %s", f.Xet, what)})
				continue
			} else if l.from != id.Key() {
				grants[f.Xet] = true
			}
			value = encodeBucketFile(*f)
		}
		if j, ok := changes[l.path]; ok {
			ch[j].Value = value
			continue
		}
		changes[l.path] = len(ch)
		ch = append(ch, pathindex.Change{Key: l.path, Value: value})
	}
	// A copy lets the bucket read the file before the bucket names it.
	for h := range grants {
		if err := s.cas.Grant(id.Key(), h); err != nil {
			return nil, err
		}
	}
	slices.SortStableFunc(failed, func(a, b BucketFailure) int { return a.Op - b.Op })
	if len(ch) == 0 {
		return failed, nil
	}
	err = s.changeBucketFenced(id, fence, func(b *Bucket) error {
		root, err := b.root()
		if err != nil {
			return err
		}
		files, size := b.Files, b.Size
		for _, c := range ch {
			old, had, err := s.bucketIndex.Get(root, c.Key)
			if err != nil {
				return err
			}
			if had {
				f, err := decodeBucketFile(c.Key, old)
				if err != nil {
					return err
				}
				files, size = files-1, size-f.Size
			}
			if c.Value != nil {
				f, _ := decodeBucketFile(c.Key, c.Value)
				files, size = files+1, size+f.Size
			}
		}
		next, err := s.bucketIndex.Apply(root, ch)
		if err != nil {
			return err
		}
		b.Root, b.Files, b.Size, b.Updated = next.String(), files, size, now
		return nil
	})
	return failed, err
}

// mayCopyFrom refuses u copies from repository or bucket src it may not
// read (NotFound, saying nothing of a private one's being there).
func (s *Service) mayCopyFrom(u *User, src ID) error {
	var err error
	if src.Type == BucketType {
		_, err = s.bucket(u, src)
	} else {
		_, err = s.Repo(u, src)
	}
	if e := As(err); e != nil && e.Kind == Moved {
		return refuse(NotFound, "%s %s was moved to %s: copy from there", src.Type, src, e.MovedTo)
	}
	return err
}

// changeBucketFenced is changeBucket's loop for a change checked under
// fence already (a batch checks its files first).
func (s *Service) changeBucketFenced(id ID, fence sweep.Fence, change func(b *Bucket) error) error {
	lock := s.repoLocks.of(id.Key())
	lock.Lock()
	defer lock.Unlock()
	for try := 0; ; try++ {
		b, err := s.store.loadBucket(id)
		if errors.Is(err, errNoRepo) {
			return noBucket(id)
		}
		if err != nil {
			return err
		}
		if err := change(b); err != nil {
			return err
		}
		err = s.store.saveBucket(id, b, fence)
		if !errors.Is(err, store.ErrSwapped) || try == 20 {
			return err
		}
	}
}

// BucketToken issues u a CAS token of bucket id: one that writes (the
// bucket is made if it is not there) or one that reads. One who reads the
// bucket only because it is public gets a token that reads only while it
// is.
func (s *Service) BucketToken(u *User, id ID, write bool) (string, int64, error) {
	var err error
	if write {
		_, err = s.writableBucket(u, id, "uploading to a bucket", true)
	} else {
		_, err = s.bucket(u, id)
	}
	if err != nil {
		return "", 0, err
	}
	q := casapi.TokenRequest{Repo: id.Key(), Write: write, Public: !u.Owns(id.NS)}
	if u != nil {
		q.User = u.Name
	}
	tok, exp := s.cas.Token(q)
	return tok, exp, nil
}

// bucketPublic reports whether bucket id exists and is public.
func (s *Service) bucketPublic(id ID) bool {
	b, err := s.store.loadBucket(id)
	return err == nil && !b.Private
}
