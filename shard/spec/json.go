package spec

import (
	"strconv"
	"strings"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/agnivade/levenshtein"
	"github.com/xetkit/xetkit/formaterr"
	"github.com/xetkit/xetkit/internal/textf"
	"github.com/xetkit/xetkit/xethash"
)

// Parse decodes a ShardSpec from JSON strictly: an unknown key (keys are
// case-sensitive), a value of the wrong type, a missing required key, a
// duplicate key or trailing data is an error naming the key's path
// ("files[0].terms[2].chunkStart") and, for an unknown key, the closest
// known one. Errors are *formaterr.Error with the byte offset in the JSON
// where the offending token starts.
//
// It reads the JSON once, token by token, into the Spec, so a spec of a
// million chunks is checked without a tree of maps (and without
// encoding/json, whose weight the WebAssembly module does without).
func Parse(data []byte) (*Spec, error) {
	p := &parser{data: data}
	sp := &Spec{}
	if err := p.spec(sp); err != nil {
		return nil, err
	}
	p.space()
	if p.i < len(p.data) {
		return nil, formaterr.New("shard spec", int64(p.i), "data after the spec object")
	}
	return sp, nil
}

// member is a key an object may have.
type member struct {
	name     string
	required bool
	nullable bool // null may stand for it, as if it were absent
}

// The keys of each object, as Spec's json tags name them (a test checks).
var (
	specKeys   = []member{{"appId", false, true}, {"files", false, true}, {"xorbs", false, true}, {"footer", false, true}}
	fileKeys   = []member{{"hash", false, true}, {"sha256", false, true}, {"verification", false, false}, {"flags", false, true}, {"terms", false, true}}
	termKeys   = []member{{"xorb", true, false}, {"chunkStart", true, false}, {"chunkEnd", true, false}, {"unpackedBytes", false, true}, {"rangeHash", false, true}, {"flags", false, false}}
	xorbKeys   = []member{{"hash", false, true}, {"flags", false, false}, {"bytesInXorb", false, true}, {"bytesOnDisk", false, false}, {"chunks", false, true}}
	chunkKeys  = []member{{"hash", true, false}, {"unpackedBytes", true, false}, {"flags", false, false}, {"byteRangeStart", false, true}}
	footerKeys = []member{{"createdAt", false, false}, {"keyExpiry", false, false}, {"chunkHashKey", false, false}, {"lookupTables", false, false}, {"storedBytesOnDisk", false, true}, {"materializedBytes", false, true}, {"storedBytes", false, true}}
)

func (p *parser) spec(sp *Spec) error {
	return p.object(specKeys, func(key string) error {
		switch key {
		case "appId":
			sp.AppID = new(string)
			return p.str(sp.AppID)
		case "files":
			sp.Files = []File{} // [] is empty, not nil, as encoding/json has it
			return p.array(func() error {
				sp.Files = append(sp.Files, File{})
				return p.file(&sp.Files[len(sp.Files)-1])
			})
		case "xorbs":
			sp.Xorbs = []Xorb{}
			return p.array(func() error {
				sp.Xorbs = append(sp.Xorbs, Xorb{})
				return p.xorb(&sp.Xorbs[len(sp.Xorbs)-1])
			})
		}
		sp.Footer = &Footer{}
		return p.footer(sp.Footer)
	})
}

func (p *parser) file(f *File) error {
	return p.object(fileKeys, func(key string) error {
		switch key {
		case "hash":
			f.Hash = new(xethash.Hash)
			return p.hash(f.Hash, false)
		case "sha256":
			f.SHA256 = new(xethash.Hash)
			return p.hash(f.SHA256, true)
		case "verification":
			return p.bool(&f.Verification)
		case "flags":
			f.Flags = new(uint32)
			return p.u32(f.Flags)
		}
		f.Terms = []Term{}
		return p.array(func() error {
			f.Terms = append(f.Terms, Term{})
			return p.term(&f.Terms[len(f.Terms)-1])
		})
	})
}

func (p *parser) term(t *Term) error {
	return p.object(termKeys, func(key string) error {
		switch key {
		case "xorb":
			return p.hash(&t.Xorb, false)
		case "chunkStart":
			return p.u32(&t.ChunkStart)
		case "chunkEnd":
			return p.u32(&t.ChunkEnd)
		case "unpackedBytes":
			t.UnpackedBytes = new(uint32)
			return p.u32(t.UnpackedBytes)
		case "rangeHash":
			t.RangeHash = new(xethash.Hash)
			return p.hash(t.RangeHash, false)
		}
		return p.u32(&t.Flags)
	})
}

func (p *parser) xorb(x *Xorb) error {
	return p.object(xorbKeys, func(key string) error {
		switch key {
		case "hash":
			x.Hash = new(xethash.Hash)
			return p.hash(x.Hash, false)
		case "flags":
			return p.u32(&x.Flags)
		case "bytesInXorb":
			x.BytesInXorb = new(uint32)
			return p.u32(x.BytesInXorb)
		case "bytesOnDisk":
			return p.u32(&x.BytesOnDisk)
		}
		x.Chunks = []Chunk{}
		return p.array(func() error {
			x.Chunks = append(x.Chunks, Chunk{})
			return p.chunk(&x.Chunks[len(x.Chunks)-1])
		})
	})
}

func (p *parser) chunk(c *Chunk) error {
	return p.object(chunkKeys, func(key string) error {
		switch key {
		case "hash":
			return p.hash(&c.Hash, false)
		case "unpackedBytes":
			return p.u32(&c.UnpackedBytes)
		case "flags":
			return p.u32(&c.Flags)
		}
		c.ByteRangeStart = new(uint32)
		return p.u32(c.ByteRangeStart)
	})
}

func (p *parser) footer(f *Footer) error {
	return p.object(footerKeys, func(key string) error {
		switch key {
		case "createdAt":
			return p.u64(&f.CreatedAt)
		case "keyExpiry":
			return p.u64(&f.KeyExpiry)
		case "chunkHashKey":
			return p.hash(&f.ChunkHashKey, false)
		case "lookupTables":
			return p.bool(&f.LookupTables)
		case "storedBytesOnDisk":
			f.StoredBytesOnDisk = new(uint64)
			return p.u64(f.StoredBytesOnDisk)
		case "materializedBytes":
			f.MaterializedBytes = new(uint64)
			return p.u64(f.MaterializedBytes)
		}
		f.StoredBytes = new(uint64)
		return p.u64(f.StoredBytes)
	})
}

// parser reads JSON text token by token; path is where it is in the spec,
// for messages.
type parser struct {
	data []byte
	i    int
	path []string
}

func (p *parser) where() string {
	s := strings.Join(p.path, "")
	if s == "" {
		return "the spec"
	}
	return strings.TrimPrefix(s, ".")
}

func (p *parser) fail(at int, msg string, args ...any) error {
	return formaterr.New("shard spec", int64(at), "%s: %s", p.where(), textf.Sprintf(msg, args...))
}

// bad is a syntax error at the current byte.
func (p *parser) bad(what string) error {
	if p.i >= len(p.data) {
		return p.fail(p.i, "bad JSON: unexpected end of input")
	}
	return p.fail(p.i, "bad JSON: %s, got %q", what, rune(p.data[p.i]))
}

func (p *parser) space() {
	for p.i < len(p.data) {
		switch p.data[p.i] {
		case ' ', '\t', '\n', '\r':
			p.i++
		default:
			return
		}
	}
}

// peek returns the next byte after white space (0 at the end).
func (p *parser) peek() byte {
	p.space()
	if p.i < len(p.data) {
		return p.data[p.i]
	}
	return 0
}

// literal consumes the word lit (true, false, null) if it is next.
func (p *parser) literal(lit string) bool {
	if strings.HasPrefix(string(p.data[p.i:min(len(p.data), p.i+len(lit))]), lit) {
		p.i += len(lit)
		return true
	}
	return false
}

// object reads an object of the keys members lists, calling value for
// each key (positioned at its value) and checking for unknown, duplicate
// and missing keys; null stands for an absent key where a member allows it.
func (p *parser) object(members []member, value func(key string) error) error {
	if p.peek() != '{' {
		return p.want(p.i, "an object")
	}
	p.i++
	var seen uint64
	for first := true; ; first = false {
		if p.peek() == '}' && first {
			break
		}
		keyAt := p.i
		key, err := p.stringToken()
		if err != nil {
			return err
		}
		k := -1
		for j := range members {
			if members[j].name == key {
				k = j
			}
		}
		if k < 0 {
			return p.unknown(keyAt, key, members)
		}
		if seen&(1<<k) != 0 {
			return p.fail(keyAt, "key %q appears twice", key)
		}
		seen |= 1 << k
		if p.peek() != ':' {
			return p.bad("want ':' after an object key")
		}
		p.i++
		p.path = append(p.path, "."+key)
		valueAt := p.i
		if p.peek() == 'n' && p.literal("null") {
			if !members[k].nullable {
				return p.fail(valueAt, "null is not allowed here")
			}
		} else if err := value(key); err != nil {
			return err
		}
		p.path = p.path[:len(p.path)-1]
		switch p.peek() {
		case ',':
			p.i++
			continue
		case '}':
		default:
			return p.bad("want ',' or '}' in an object")
		}
		break
	}
	end := p.i
	p.i++
	for j, m := range members {
		if m.required && seen&(1<<j) == 0 {
			return p.fail(end, "required key %q is missing", m.name)
		}
	}
	return nil
}

// array reads an array, calling elem for each element.
func (p *parser) array(elem func() error) error {
	if p.peek() != '[' {
		return p.want(p.i, "an array")
	}
	p.i++
	if p.peek() == ']' {
		p.i++
		return nil
	}
	for n := 0; ; n++ {
		p.path = append(p.path, "["+strconv.Itoa(n)+"]")
		if p.peek() == 'n' && p.literal("null") {
			return p.fail(p.i-4, "null is not allowed here")
		}
		if err := elem(); err != nil {
			return err
		}
		p.path = p.path[:len(p.path)-1]
		switch p.peek() {
		case ',':
			p.i++
		case ']':
			p.i++
			return nil
		default:
			return p.bad("want ',' or ']' in an array")
		}
	}
}

// want fails on a value that is not what was wanted, describing it.
func (p *parser) want(at int, what string) error {
	got := ""
	switch c := p.peek(); {
	case c == '{':
		got = "an object"
	case c == '[':
		got = "an array"
	case c == '"':
		s, err := p.stringToken()
		if err != nil {
			return err
		}
		got = strconv.Quote(s)
	case c == 't' && p.literal("true"), c == 'f' && p.literal("false"):
		got = string(p.data[at:p.i])
	case c == '-' || '0' <= c && c <= '9':
		got = p.number()
	case c == 0:
		return p.bad("want a value")
	default:
		return p.bad("want a value")
	}
	return p.fail(at, "want %s, got %s", what, got)
}

// number consumes a JSON number and returns its text.
func (p *parser) number() string {
	start := p.i
	for p.i < len(p.data) && strings.IndexByte("+-.0123456789eE", p.data[p.i]) >= 0 {
		p.i++
	}
	return string(p.data[start:p.i])
}

func (p *parser) u32(dst *uint32) error {
	v, err := p.unsigned(32, "an unsigned 32-bit integer")
	*dst = uint32(v)
	return err
}

func (p *parser) u64(dst *uint64) error {
	v, err := p.unsigned(64, "an unsigned 64-bit integer")
	*dst = v
	return err
}

func (p *parser) unsigned(bits int, what string) (uint64, error) {
	if c := p.peek(); c != '-' && (c < '0' || c > '9') {
		return 0, p.want(p.i, what)
	}
	at := p.i
	text := p.number()
	v, err := strconv.ParseUint(text, 10, bits)
	if err != nil || (len(text) > 1 && text[0] == '0') {
		return 0, p.fail(at, "want %s, got %s", what, text)
	}
	return v, nil
}

func (p *parser) bool(dst *bool) error {
	p.space()
	at := p.i
	switch {
	case p.literal("true"):
		*dst = true
	case p.literal("false"):
		*dst = false
	default:
		return p.want(at, "true or false")
	}
	return nil
}

func (p *parser) str(dst *string) error {
	if p.peek() != '"' {
		return p.want(p.i, "a string")
	}
	s, err := p.stringToken()
	*dst = s
	return err
}

// hash reads a hash string: a XET hash, or with digest a SHA-256 hex
// digest, which the shard stores in the same byte order.
func (p *parser) hash(dst *xethash.Hash, digest bool) error {
	what := "a hash (64 hex digits)"
	if digest {
		what = "a SHA-256 hex digest (64 hex digits)"
	}
	if p.peek() != '"' {
		return p.want(p.i, what)
	}
	at := p.i
	s, err := p.stringToken()
	if err != nil {
		return err
	}
	h, err := xethash.Parse(s)
	if err != nil {
		return p.fail(at, "want %s, got %q", what, s)
	}
	*dst = h
	return nil
}

// stringToken reads a JSON string (after white space).
func (p *parser) stringToken() (string, error) {
	if p.peek() != '"' {
		return "", p.bad("want a string")
	}
	p.i++
	var out []byte
	for start := p.i; ; {
		if p.i >= len(p.data) {
			return "", p.bad("want the end of a string")
		}
		c := p.data[p.i]
		switch {
		case c == '"':
			out = append(out, p.data[start:p.i]...)
			p.i++
			if !utf8.Valid(out) {
				out = validUTF8(out)
			}
			return string(out), nil
		case c < 0x20:
			return "", p.bad("want no control character in a string")
		case c == '\\':
			out = append(out, p.data[start:p.i]...)
			r, err := p.escape()
			if err != nil {
				return "", err
			}
			out = utf8.AppendRune(out, r)
			start = p.i
		default:
			p.i++
		}
	}
}

// validUTF8 replaces each byte of b that is not part of a UTF-8 sequence
// with U+FFFD, as encoding/json reads such a string.
func validUTF8(b []byte) []byte {
	var out []byte
	for len(b) > 0 {
		r, n := utf8.DecodeRune(b)
		if r == utf8.RuneError && n == 1 {
			out = utf8.AppendRune(out, utf8.RuneError)
		} else {
			out = append(out, b[:n]...)
		}
		b = b[n:]
	}
	return out
}

// escape reads one escape sequence of a string (a surrogate pair as one).
func (p *parser) escape() (rune, error) {
	p.i++ // the backslash
	if p.i >= len(p.data) {
		return 0, p.bad("want an escape")
	}
	c := p.data[p.i]
	p.i++
	if i := strings.IndexByte(`"\/bfnrt`, c); i >= 0 {
		return rune("\"\\/\b\f\n\r\t"[i]), nil
	}
	if c != 'u' {
		p.i--
		return 0, p.bad("want an escape")
	}
	r, ok := p.hex4()
	if !ok {
		return 0, p.bad("want 4 hex digits after \\u")
	}
	if utf16.IsSurrogate(r) && p.i+1 < len(p.data) && p.data[p.i] == '\\' && p.data[p.i+1] == 'u' {
		save := p.i
		p.i += 2
		if r2, ok := p.hex4(); ok {
			if pair := utf16.DecodeRune(r, r2); pair != utf8.RuneError {
				return pair, nil
			}
		}
		p.i = save
	}
	if utf16.IsSurrogate(r) {
		return utf8.RuneError, nil
	}
	return r, nil
}

func (p *parser) hex4() (rune, bool) {
	if p.i+4 > len(p.data) {
		return 0, false
	}
	v, err := strconv.ParseUint(string(p.data[p.i:p.i+4]), 16, 32)
	if err != nil {
		return 0, false
	}
	p.i += 4
	return rune(v), true
}

// unknown reports an unknown key with the closest known key at that place.
func (p *parser) unknown(at int, key string, members []member) error {
	names := make([]string, len(members))
	for i, m := range members {
		names[i] = m.name
	}
	msg := textf.Sprintf("unknown key %q", key)
	if s := closest(key, names); s != "" {
		msg += textf.Sprintf("; did you mean %q?", s)
	} else {
		msg += textf.Sprintf(" (known keys: %s)", strings.Join(names, ", "))
	}
	return p.fail(at, "%s", msg)
}

// closest returns the name nearest to key: an exact match but for case
// first, then the smallest edit distance if it is small enough to be a typo.
func closest(key string, names []string) string {
	for _, n := range names {
		if strings.EqualFold(n, key) {
			return n
		}
	}
	best, bestDist := "", -1
	for _, n := range names {
		if d := levenshtein.ComputeDistance(strings.ToLower(key), strings.ToLower(n)); bestDist < 0 || d < bestDist {
			best, bestDist = n, d
		}
	}
	if bestDist < 0 || bestDist > max(2, len(key)/3) {
		return ""
	}
	return best
}
