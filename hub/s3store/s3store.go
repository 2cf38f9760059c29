// Package s3store is the hub's Store on an S3 bucket (AWS S3 or an
// S3-compatible server such as MinIO or versitygw), so that several hub
// processes can share one bucket.
//
// Every operation maps onto S3's conditional requests, which the server
// decides atomically across all its clients:
//
//   - Put writes with If-None-Match: * (a 412 means the object exists);
//   - Swap creates a record with If-None-Match: *, replaces it with
//     If-Match: ETag (the ETag read with the bytes the caller compared), and
//     removes it with a conditional DELETE carrying If-Match;
//   - PutTemp sends large objects as multipart uploads, which are invisible
//     until completed and aborted on any failure;
//   - Open reads with ranged GETs pinned to the ETag first seen, so a read
//     never mixes two versions of a record.
//
// # Key layout
//
// Object kind/name is stored under PREFIX/kind/ESCAPED, where ESCAPED is
// the name with every byte outside [A-Za-z0-9_.-], and a leading '.',
// percent-encoded. An escaped name has no '/' so it is one path segment,
// and kinds are never names: PREFIX/kind is only ever a folder and
// PREFIX/kind/ESCAPED only ever an object. No key is a folder of another,
// which servers that keep objects as files (versitygw's posix backend,
// MinIO in filesystem mode) require, and a name can never reach outside
// its kind ("..", "a/../b"). Temporary objects live under PREFIX/tmp/.
//
// # Conditional delete
//
// AWS S3 and versitygw (since 1.x) honour If-Match on DeleteObject. In
// versitygw's posix backend the ETag is compared before the file is
// removed but not under the lock its conditional PUTs take, so a replace
// that lands in that window is deleted with the record. For the hub the
// outcome is the one a replace followed by the delete gives (a deleted
// repository stays deleted), never a half-written record; what is lost is
// only the 412 the deleter should have had.
package s3store

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"

	"github.com/xetkit/xetkit/hub/store"
)

// Defaults of Options.
const (
	// DefaultPartSize is the part size of multipart uploads: each part is
	// held in memory while it is sent (the SDK signs and checksums a
	// seekable body over plain HTTP), so it bounds a temporary upload's
	// memory, and 16 MiB parts keep a 64 MiB LFS part to four requests.
	DefaultPartSize = 16 << 20
	// DefaultTimeout bounds one request, body included.
	DefaultTimeout = 5 * time.Minute
	// headBytes is what Open reads with its first GET: a record, commit or
	// tree page usually fits, so reading one costs one request.
	headBytes = 64 << 10
	// readAhead is what a read smaller than it fetches (see ReadAt).
	readAhead = 4 << 20
	// putParallel bounds the puts PutAll sends at once.
	putParallel = 8
)

// Options tune a Store; the zero value is the default.
type Options struct {
	// Client is the S3 client; nil: one built from the standard AWS
	// environment (see Open).
	Client *s3.Client
	// PartSize is the part size of multipart uploads (default
	// DefaultPartSize; S3 requires at least 5 MiB except for the last).
	PartSize int64
	// ListPageSize is how many keys one list request asks for (default
	// the server's own page, 1000 on S3).
	ListPageSize int32
	// Timeout bounds each request (default DefaultTimeout).
	Timeout time.Duration
}

// Store is a store.Store in bucket under prefix. Its methods are safe for
// concurrent use, and any number of Stores (in any number of processes)
// may share one bucket and prefix.
type Store struct {
	c      *s3.Client
	bucket string
	prefix string // "" or ending in "/"
	opt    Options

	// seen remembers the ETag of each record as last read or written by
	// this Store, so a Swap need not read the record again to learn it.
	// It is only a hint: the If-Match on the write is what decides.
	mu          sync.Mutex
	seen        map[string]version
	seenBytes   int
	recordKinds map[string]bool // kinds Swap was called on: records
}

// version is a record's bytes and the ETag the server gave them.
type version struct {
	etag string
	data []byte
}

// maxSeenBytes bounds the bytes of the remembered records; past it the
// memory starts over.
const maxSeenBytes = 16 << 20

var (
	_ store.Collectable = (*Store)(nil)
	_ store.Presigner   = (*Store)(nil)
)

// Open opens the store at uri, "s3://BUCKET" or "s3://BUCKET/PREFIX". The
// bucket must exist. Without opt.Client the client comes from the
// standard AWS environment: AWS_ENDPOINT_URL_S3 or AWS_ENDPOINT_URL (the
// server; default AWS), AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY (or any
// other source of the SDK's default chain), AWS_REGION (default
// us-east-1). Requests use path-style addresses
// (http://host/BUCKET/KEY), which self-hosted servers need.
func Open(ctx context.Context, uri string, opt Options) (*Store, error) {
	bucket, prefix, err := ParseURL(uri)
	if err != nil {
		return nil, err
	}
	if opt.PartSize == 0 {
		opt.PartSize = DefaultPartSize
	}
	if opt.PartSize < 5<<20 {
		return nil, fmt.Errorf("s3 store: part size %d is below S3's minimum of 5 MiB", opt.PartSize)
	}
	if opt.Timeout <= 0 {
		opt.Timeout = DefaultTimeout
	}
	if opt.Client == nil {
		if opt.Client, err = envClient(ctx); err != nil {
			return nil, err
		}
	}
	s := &Store{c: opt.Client, bucket: bucket, prefix: prefix, opt: opt, seen: map[string]version{}, recordKinds: map[string]bool{}}
	hctx, cancel := context.WithTimeout(ctx, opt.Timeout)
	defer cancel()
	if _, err := s.c.HeadBucket(hctx, &s3.HeadBucketInput{Bucket: &bucket}); err != nil {
		return nil, fmt.Errorf("s3 store: bucket %s: %w", bucket, err)
	}
	return s, nil
}

// ParseURL splits "s3://BUCKET/PREFIX" into the bucket and the key prefix
// ("" or ending in "/").
func ParseURL(uri string) (bucket, prefix string, err error) {
	rest, ok := strings.CutPrefix(uri, "s3://")
	if !ok {
		return "", "", fmt.Errorf("s3 store %q: want s3://BUCKET/PREFIX", uri)
	}
	bucket, prefix, _ = strings.Cut(rest, "/")
	if bucket == "" {
		return "", "", fmt.Errorf("s3 store %q: no bucket", uri)
	}
	prefix = strings.Trim(prefix, "/")
	for _, seg := range strings.Split(prefix, "/") {
		if prefix != "" && (seg == "" || seg == "." || seg == "..") {
			return "", "", fmt.Errorf("s3 store %q: prefix has an empty, . or .. segment", uri)
		}
	}
	if prefix != "" {
		prefix += "/"
	}
	return bucket, prefix, nil
}

// envClient builds an S3 client from the standard AWS environment.
func envClient(ctx context.Context) (*s3.Client, error) {
	cfg, err := config.LoadDefaultConfig(ctx)
	if err != nil {
		return nil, fmt.Errorf("s3 store: AWS configuration: %w", err)
	}
	if cfg.Region == "" {
		cfg.Region = "us-east-1"
	}
	return NewClient(cfg), nil
}

// NewClient is an S3 client on cfg as the store wants it: path-style
// addresses, and checksums of requests and responses only where S3
// requires them (the store's reads are ranges, which carry none; its
// writes are checked by what they hold: hashes of content).
func NewClient(cfg aws.Config) *s3.Client {
	return s3.NewFromConfig(cfg, func(o *s3.Options) {
		o.UsePathStyle = true
		o.RequestChecksumCalculation = aws.RequestChecksumCalculationWhenRequired
		o.ResponseChecksumValidation = aws.ResponseChecksumValidationWhenRequired
	})
}

// Bucket is the store's bucket.
func (s *Store) Bucket() string { return s.bucket }

// Client is the store's S3 client.
func (s *Store) Client() *s3.Client { return s.c }

// Key is the key of object kind/name (see the package comment).
func (s *Store) Key(kind, name string) string { return s.prefix + kind + "/" + escape(name) }

// Where names object kind/name as s3://BUCKET/KEY.
func (s *Store) Where(kind, name string) string { return "s3://" + s.bucket + "/" + s.Key(kind, name) }

// tmpKind is the kind of temporary objects.
const tmpKind = store.Temp

// escape makes name one safe key segment: bytes outside [A-Za-z0-9_.-]
// and a leading '.' become %XX.
func escape(name string) string {
	var b strings.Builder
	for i := 0; i < len(name); i++ {
		c := name[i]
		if 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '_' || c == '-' || c == '.' && i > 0 {
			b.WriteByte(c)
		} else {
			fmt.Fprintf(&b, "%%%02X", c)
		}
	}
	return b.String()
}

// checkName refuses what the hub never stores: an empty name, a kind that
// is not one plain segment.
func checkName(kind, name string) error {
	if name == "" {
		return fmt.Errorf("s3 store: empty name of kind %q", kind)
	}
	if kind == "" || kind == tmpKind || strings.ContainsAny(kind, "/%") || kind[0] == '.' {
		return fmt.Errorf("s3 store: %q is not a kind of object", kind)
	}
	return nil
}

// ctx is a context for one request.
func (s *Store) ctx() (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.Background(), s.opt.Timeout)
}

// status is the HTTP status of a failed request, or 0.
func status(err error) int {
	var re *awshttp.ResponseError
	if errors.As(err, &re) {
		return re.HTTPStatusCode()
	}
	return 0
}

// lostRace reports a conditional write refused because the object is not
// as required: 412, or 409 when the server saw a concurrent conditional
// write to the same key (S3 answers ConditionalRequestConflict).
func lostRace(err error) bool {
	st := status(err)
	return st == http.StatusPreconditionFailed || st == http.StatusConflict
}

// fail names the object a request failed on.
func (s *Store) fail(op, key string, err error) error {
	return fmt.Errorf("s3 store: %s s3://%s/%s: %w", op, s.bucket, key, err)
}

// Put stores the parts as kind/name with If-None-Match: *, and reports
// whether it wrote (false: the object exists; also when the answer was
// lost and the object is there). S3 makes an object durable before it
// answers.
func (s *Store) Put(kind, name string, parts ...[]byte) (bool, error) {
	if err := checkName(kind, name); err != nil {
		return false, err
	}
	key := s.Key(kind, name)
	ctx, cancel := s.ctx()
	defer cancel()
	r := newPartsReader(parts)
	_, err := s.c.PutObject(ctx, &s3.PutObjectInput{
		Bucket: &s.bucket, Key: &key, Body: r, ContentLength: aws.Int64(r.size),
		IfNoneMatch: aws.String("*"),
	})
	if lostRace(err) {
		return false, nil
	}
	if err != nil && status(err) == 0 && s.exists(key) {
		// No answer, yet the object is there. A server may refuse a put
		// on an existing key before it reads the body (versitygw does)
		// and close the connection under the rest of it; the reset then
		// loses the 412 it sent. The object existing is what matters.
		return false, nil
	}
	if err != nil {
		return false, s.fail("put", key, err)
	}
	return true, nil
}

// exists reports whether object key is there, as far as a HEAD can tell.
func (s *Store) exists(key string) bool {
	ctx, cancel := s.ctx()
	defer cancel()
	_, err := s.c.HeadObject(ctx, &s3.HeadObjectInput{Bucket: &s.bucket, Key: &key})
	return err == nil
}

// PutAll puts each object, a few at once; each is durable when its put
// returns, so all are when PutAll does.
func (s *Store) PutAll(objs []store.Object) error {
	var wg sync.WaitGroup
	errs := make([]error, len(objs))
	sem := make(chan struct{}, putParallel)
	for i, o := range objs {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			_, errs[i] = s.Put(o.Kind, o.Name, o.Data)
		}()
	}
	wg.Wait()
	return errors.Join(errs...)
}

// Open opens object or record kind/name. Its first GET reads up to 64 KiB
// and learns the size and ETag; later reads are ranged GETs with If-Match
// on that ETag, so a record replaced meanwhile is an error, never a mix.
func (s *Store) Open(kind, name string) (store.ObjectReader, error) {
	if err := checkName(kind, name); err != nil {
		return nil, err
	}
	s.mu.Lock()
	record := s.recordKinds[kind]
	s.mu.Unlock()
	return s.open(s.Key(kind, name), record)
}

func (s *Store) open(key string, remember bool) (store.ObjectReader, error) {
	ctx, cancel := s.ctx()
	defer cancel()
	out, err := s.c.GetObject(ctx, &s3.GetObjectInput{
		Bucket: &s.bucket, Key: &key, Range: aws.String("bytes=0-" + strconv.Itoa(headBytes-1)),
	})
	if st := status(err); st == http.StatusNotFound {
		return nil, fmt.Errorf("s3://%s/%s: %w", s.bucket, key, fs.ErrNotExist)
	} else if st == http.StatusRequestedRangeNotSatisfiable {
		return s.openEmpty(key)
	}
	if err != nil {
		return nil, s.fail("get", key, err)
	}
	defer out.Body.Close()
	o := &object{s: s, key: key, etag: aws.ToString(out.ETag)}
	if o.size, err = totalSize(out); err != nil {
		return nil, s.fail("get", key, err)
	}
	n := min(o.size, headBytes)
	o.head = make([]byte, n)
	if _, err := io.ReadFull(out.Body, o.head); err != nil {
		return nil, s.fail("get", key, fmt.Errorf("reading its first %d bytes: %w", n, err))
	}
	if remember && o.size <= headBytes {
		s.remember(key, version{o.etag, o.head})
	}
	return o, nil
}

// openEmpty opens an object a range could not be read from: an empty one
// (or one that vanished meanwhile).
func (s *Store) openEmpty(key string) (store.ObjectReader, error) {
	ctx, cancel := s.ctx()
	defer cancel()
	out, err := s.c.HeadObject(ctx, &s3.HeadObjectInput{Bucket: &s.bucket, Key: &key})
	if status(err) == http.StatusNotFound {
		return nil, fmt.Errorf("s3://%s/%s: %w", s.bucket, key, fs.ErrNotExist)
	}
	if err != nil {
		return nil, s.fail("head", key, err)
	}
	size := aws.ToInt64(out.ContentLength)
	if size != 0 {
		return nil, s.fail("get", key, fmt.Errorf("its first bytes could not be read, yet it holds %d", size))
	}
	s.remember(key, version{aws.ToString(out.ETag), []byte{}})
	return &object{s: s, key: key, etag: aws.ToString(out.ETag), head: []byte{}}, nil
}

// totalSize reads the object's size from a ranged GET's Content-Range
// ("bytes 0-99/100"), or its length when the server sent it whole.
func totalSize(out *s3.GetObjectOutput) (int64, error) {
	cr := aws.ToString(out.ContentRange)
	if cr == "" {
		return aws.ToInt64(out.ContentLength), nil
	}
	_, total, ok := strings.Cut(cr, "/")
	n, err := strconv.ParseInt(total, 10, 64)
	if !ok || err != nil || n < 0 {
		return 0, fmt.Errorf("Content-Range %q gives no size", cr)
	}
	return n, nil
}

// object is an open S3 object: its first bytes, read by Open, and ranged
// GETs for the rest.
type object struct {
	s    *Store
	key  string
	etag string
	size int64
	head []byte

	mu     sync.Mutex
	win    []byte // the bytes the last small read fetched
	winOff int64  // where they start
}

func (o *object) Size() int64  { return o.size }
func (o *object) Close() error { return nil }

// ReadAt reads len(p) bytes at off: from the bytes Open read or the
// window the last GET read, else with one ranged GET pinned to the ETag
// Open saw. A small read fetches readAhead bytes, kept for the reads that
// follow it: callers copy objects in 32 KiB pieces, and a request per
// piece would cost a round trip each.
func (o *object) ReadAt(p []byte, off int64) (int, error) {
	if off < 0 {
		return 0, fmt.Errorf("s3 store: read of s3://%s/%s at negative offset %d", o.s.bucket, o.key, off)
	}
	if off >= o.size {
		return 0, io.EOF
	}
	want := min(int64(len(p)), o.size-off)
	if off+want <= int64(len(o.head)) {
		n := copy(p, o.head[off:off+want])
		return n, eofIf(int64(n) < int64(len(p)))
	}
	if want >= readAhead {
		if err := o.get(p[:want], off); err != nil {
			return 0, err
		}
		return int(want), eofIf(want < int64(len(p)))
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	if off < o.winOff || off+want > o.winOff+int64(len(o.win)) {
		get := min(readAhead, o.size-off)
		if int64(cap(o.win)) < get {
			o.win = make([]byte, get)
		}
		o.win, o.winOff = o.win[:get], off
		if err := o.get(o.win, off); err != nil {
			o.win = o.win[:0]
			return 0, err
		}
	}
	n := copy(p, o.win[off-o.winOff:off-o.winOff+want])
	return n, eofIf(int64(n) < int64(len(p)))
}

// get fills dst with the bytes at off, in one ranged GET.
func (o *object) get(dst []byte, off int64) error {
	ctx, cancel := o.s.ctx()
	defer cancel()
	out, err := o.s.c.GetObject(ctx, &s3.GetObjectInput{
		Bucket: &o.s.bucket, Key: &o.key, IfMatch: &o.etag,
		Range: aws.String(fmt.Sprintf("bytes=%d-%d", off, off+int64(len(dst))-1)),
	})
	if err != nil {
		if status(err) == http.StatusPreconditionFailed {
			err = errors.New("the object changed while it was read")
		}
		return o.s.fail("get", o.key, err)
	}
	defer out.Body.Close()
	if n, err := io.ReadFull(out.Body, dst); err != nil {
		return o.s.fail("get", o.key, fmt.Errorf("%d of the %d bytes at offset %d: %w", n, len(dst), off, err))
	}
	return nil
}

func eofIf(short bool) error {
	if short {
		return io.EOF
	}
	return nil
}

// List returns the names of kind, sorted, gathering every page.
func (s *Store) List(kind string) ([]string, error) {
	if err := checkName(kind, "-"); err != nil {
		return nil, err
	}
	return s.list(s.prefix + kind + "/")
}

func (s *Store) list(prefix string) ([]string, error) {
	var names []string
	err := s.walk(prefix, func(name string, _ types.Object) { names = append(names, name) })
	slices.Sort(names) // keys sort as escaped names, not as names
	return names, err
}

// walk calls f with the name and listing entry of each object under
// prefix, a page at a time.
func (s *Store) walk(prefix string, f func(name string, o types.Object)) error {
	in := &s3.ListObjectsV2Input{Bucket: &s.bucket, Prefix: &prefix}
	if s.opt.ListPageSize > 0 {
		in.MaxKeys = aws.Int32(s.opt.ListPageSize)
	}
	for p := s3.NewListObjectsV2Paginator(s.c, in); p.HasMorePages(); {
		ctx, cancel := s.ctx()
		page, err := p.NextPage(ctx)
		cancel()
		if err != nil {
			return s.fail("list", prefix, err)
		}
		for _, o := range page.Contents {
			esc := strings.TrimPrefix(aws.ToString(o.Key), prefix)
			if strings.Contains(esc, "/") {
				continue // not written by this store
			}
			name, err := url.PathUnescape(esc)
			if err != nil {
				continue // not written by this store
			}
			f(name, o)
		}
	}
	return nil
}

// Written returns when each object of kind was written (its
// LastModified), by name, from the listing alone.
func (s *Store) Written(kind string) (map[string]time.Time, error) {
	if err := checkName(kind, "-"); err != nil {
		return nil, err
	}
	out := map[string]time.Time{}
	err := s.walk(s.prefix+kind+"/", func(name string, o types.Object) { out[name] = aws.ToTime(o.LastModified) })
	return out, err
}

// Remove deletes object kind/name (unconditionally: objects never
// change, and garbage collection decided no one needs it).
func (s *Store) Remove(kind, name string) error {
	if err := checkName(kind, name); err != nil {
		return err
	}
	key := s.Key(kind, name)
	ctx, cancel := s.ctx()
	defer cancel()
	if _, err := s.c.DeleteObject(ctx, &s3.DeleteObjectInput{Bucket: &s.bucket, Key: &key}); err != nil && status(err) != http.StatusNotFound {
		return s.fail("delete", key, err)
	}
	s.forget(key)
	return nil
}

// Swap replaces record kind/name with data if it holds old. The write is
// conditional on the ETag of the bytes compared with old (If-Match), or on
// there being none (If-None-Match: *), so of concurrent swaps from one
// state, in any processes, exactly one succeeds; the others get
// store.ErrSwapped.
func (s *Store) Swap(kind, name string, old, data []byte) error {
	if err := checkName(kind, name); err != nil {
		return err
	}
	s.mu.Lock()
	s.recordKinds[kind] = true // Open remembers what it reads of this kind
	s.mu.Unlock()
	key := s.Key(kind, name)
	var etag string
	if old != nil {
		// A remove always reads afresh: a conditional DELETE of a key
		// that is gone succeeds on some servers, so the read is what
		// tells that another remove won.
		cur, ok := s.recall(key)
		if !ok || !bytes.Equal(cur.data, old) || data == nil {
			var err error
			if cur, err = s.readRecord(key); errors.Is(err, fs.ErrNotExist) {
				return store.ErrSwapped
			} else if err != nil {
				return err
			}
		}
		if !bytes.Equal(cur.data, old) {
			return store.ErrSwapped
		}
		etag = cur.etag
	}
	ctx, cancel := s.ctx()
	defer cancel()
	var err error
	switch {
	case data == nil && old == nil:
		// Nothing to remove, if indeed there is nothing.
		_, err = s.readRecord(key)
		if errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		if err == nil {
			return store.ErrSwapped
		}
		return err
	case data == nil:
		_, err = s.c.DeleteObject(ctx, &s3.DeleteObjectInput{Bucket: &s.bucket, Key: &key, IfMatch: &etag})
		if err == nil {
			s.forget(key)
		}
	default:
		in := &s3.PutObjectInput{Bucket: &s.bucket, Key: &key, Body: bytes.NewReader(data), ContentLength: aws.Int64(int64(len(data)))}
		if old == nil {
			in.IfNoneMatch = aws.String("*")
		} else {
			in.IfMatch = &etag
		}
		var out *s3.PutObjectOutput
		if out, err = s.c.PutObject(ctx, in); err == nil {
			s.remember(key, version{aws.ToString(out.ETag), slices.Clone(data)})
		}
	}
	if lostRace(err) || status(err) == http.StatusNotFound {
		s.forget(key)
		return store.ErrSwapped
	}
	if err != nil {
		return s.fail("swap", key, err)
	}
	return nil
}

// readRecord reads a record whole with its ETag.
func (s *Store) readRecord(key string) (version, error) {
	o, err := s.open(key, false)
	if err != nil {
		return version{}, err
	}
	obj := o.(*object)
	b := obj.head
	if obj.size > int64(len(b)) {
		b = make([]byte, obj.size)
		if _, err := obj.ReadAt(b, 0); err != nil {
			return version{}, err
		}
	}
	v := version{obj.etag, b}
	s.remember(key, v)
	return v, nil
}

// remember keeps a record's version for the next Swap of it.
func (s *Store) remember(key string, v version) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.seenBytes+len(v.data) > maxSeenBytes {
		clear(s.seen)
		s.seenBytes = 0
	}
	s.seen[key] = v
	s.seenBytes += len(v.data)
}

func (s *Store) recall(key string) (version, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	v, ok := s.seen[key]
	return v, ok
}

func (s *Store) forget(key string) {
	s.mu.Lock()
	delete(s.seen, key)
	s.mu.Unlock()
}

// PutTemp stores exactly size bytes of r as temporary object name,
// replacing one of that name. Up to one part size goes in one PUT; more
// goes as a multipart upload, a part in memory at a time, completed only
// once every byte arrived and r has nothing more, and aborted otherwise,
// so the object is whole or absent.
func (s *Store) PutTemp(name string, r io.Reader, size int64) (int64, error) {
	if name == "" || size < 0 {
		return 0, fmt.Errorf("s3 store: temporary object %q of size %d", name, size)
	}
	key := s.prefix + tmpKind + "/" + escape(name)
	if size <= s.opt.PartSize {
		buf, n, err := readExactly(r, size)
		if err != nil {
			return n, err
		}
		ctx, cancel := s.ctx()
		defer cancel()
		_, err = s.c.PutObject(ctx, &s3.PutObjectInput{Bucket: &s.bucket, Key: &key, Body: bytes.NewReader(buf), ContentLength: aws.Int64(size)})
		if err != nil {
			return n, s.fail("put", key, err)
		}
		return n, nil
	}
	return s.multipart(key, r, size)
}

// readExactly reads size bytes of r and checks that r ends there.
func readExactly(r io.Reader, size int64) ([]byte, int64, error) {
	buf := make([]byte, size)
	n, err := io.ReadFull(r, buf)
	if err == io.ErrUnexpectedEOF || err == io.EOF {
		return nil, int64(n), &store.SizeError{Got: int64(n), Want: size}
	}
	if err != nil {
		return nil, int64(n), err
	}
	var one [1]byte
	if m, _ := io.ReadFull(r, one[:]); m > 0 {
		return nil, int64(n) + 1, &store.SizeError{Got: size + 1, Want: size}
	}
	return buf, int64(n), nil
}

// multipart sends size bytes of r as a multipart upload to key.
func (s *Store) multipart(key string, r io.Reader, size int64) (n int64, err error) {
	ctx := context.Background()
	cctx, cancel := s.ctx()
	up, err := s.c.CreateMultipartUpload(cctx, &s3.CreateMultipartUploadInput{Bucket: &s.bucket, Key: &key})
	cancel()
	if err != nil {
		return 0, s.fail("start multipart upload", key, err)
	}
	defer func() {
		if err != nil {
			actx, cancel := context.WithTimeout(ctx, s.opt.Timeout)
			_, _ = s.c.AbortMultipartUpload(actx, &s3.AbortMultipartUploadInput{Bucket: &s.bucket, Key: &key, UploadId: up.UploadId})
			cancel()
		}
	}()
	var done []types.CompletedPart
	buf := make([]byte, s.opt.PartSize)
	for part := int32(1); n < size; part++ {
		m := min(s.opt.PartSize, size-n)
		got, rerr := io.ReadFull(r, buf[:m])
		n += int64(got)
		if rerr == io.ErrUnexpectedEOF || rerr == io.EOF {
			return n, &store.SizeError{Got: n, Want: size}
		}
		if rerr != nil {
			return n, rerr
		}
		pctx, cancel := s.ctx()
		out, err := s.c.UploadPart(pctx, &s3.UploadPartInput{
			Bucket: &s.bucket, Key: &key, UploadId: up.UploadId, PartNumber: aws.Int32(part),
			Body: bytes.NewReader(buf[:m]), ContentLength: aws.Int64(m),
		})
		cancel()
		if err != nil {
			return n, s.fail(fmt.Sprintf("upload part %d of", part), key, err)
		}
		done = append(done, types.CompletedPart{ETag: out.ETag, PartNumber: aws.Int32(part),
			ChecksumCRC32: out.ChecksumCRC32, ChecksumCRC32C: out.ChecksumCRC32C, ChecksumCRC64NVME: out.ChecksumCRC64NVME,
			ChecksumSHA1: out.ChecksumSHA1, ChecksumSHA256: out.ChecksumSHA256})
	}
	var one [1]byte
	if m, _ := io.ReadFull(r, one[:]); m > 0 {
		return n + 1, &store.SizeError{Got: size + 1, Want: size}
	}
	cctx, cancel = s.ctx()
	defer cancel()
	_, err = s.c.CompleteMultipartUpload(cctx, &s3.CompleteMultipartUploadInput{
		Bucket: &s.bucket, Key: &key, UploadId: up.UploadId,
		MultipartUpload: &types.CompletedMultipartUpload{Parts: done},
	})
	if err != nil {
		return n, s.fail("complete multipart upload", key, err)
	}
	return n, nil
}

// OpenTemp opens temporary object name.
func (s *Store) OpenTemp(name string) (store.ObjectReader, error) {
	return s.open(s.prefix+tmpKind+"/"+escape(name), false)
}

// RemoveTemp removes temporary object name, if there is one.
func (s *Store) RemoveTemp(name string) {
	ctx, cancel := s.ctx()
	defer cancel()
	key := s.prefix + tmpKind + "/" + escape(name)
	_, _ = s.c.DeleteObject(ctx, &s3.DeleteObjectInput{Bucket: &s.bucket, Key: &key})
}

// partsReader reads byte slices one after another, seekably (the SDK
// rewinds a body to retry and to sign it) and without joining them.
type partsReader struct {
	parts [][]byte
	size  int64
	off   int64
}

func newPartsReader(parts [][]byte) *partsReader {
	r := &partsReader{parts: parts}
	for _, p := range parts {
		r.size += int64(len(p))
	}
	return r
}

func (r *partsReader) Read(p []byte) (int, error) {
	if r.off >= r.size {
		return 0, io.EOF
	}
	n := 0
	for n < len(p) && r.off < r.size {
		m := 0
		base := int64(0)
		for _, part := range r.parts {
			if r.off < base+int64(len(part)) {
				m = copy(p[n:], part[r.off-base:])
				break
			}
			base += int64(len(part))
		}
		n += m
		r.off += int64(m)
	}
	return n, nil
}

func (r *partsReader) Seek(off int64, whence int) (int64, error) {
	switch whence {
	case io.SeekCurrent:
		off += r.off
	case io.SeekEnd:
		off += r.size
	}
	if off < 0 {
		return 0, errors.New("s3 store: seek before the start")
	}
	r.off = off
	return off, nil
}

// PresignGet returns a presigned GET of object kind/name, valid for ttl:
// a client reads any byte range of that one object with it, straight
// from the S3 server. Signing needs no request.
func (s *Store) PresignGet(kind, name string, ttl time.Duration) (string, error) {
	if err := checkName(kind, name); err != nil {
		return "", err
	}
	key := s.Key(kind, name)
	ctx, cancel := s.ctx()
	defer cancel()
	req, err := s3.NewPresignClient(s.c).PresignGetObject(ctx, &s3.GetObjectInput{Bucket: &s.bucket, Key: &key}, s3.WithPresignExpires(ttl))
	if err != nil {
		return "", s.fail("presign", key, err)
	}
	return req.URL, nil
}
