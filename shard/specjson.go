package shard

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/agnivade/levenshtein"
	"github.com/xetkit/xetkit/formaterr"
	"github.com/xetkit/xetkit/xethash"
)

// ParseSpec decodes a ShardSpec from JSON strictly: an unknown key (keys
// are case-sensitive, unlike encoding/json's default), a value of the wrong
// type, a missing required key, a duplicate key or trailing data is an error
// naming the key's path ("files[0].terms[2].chunkStart") and, for an unknown
// key, the closest known one. Errors are *formaterr.Error with the byte
// offset in the JSON.
func ParseSpec(data []byte) (*Spec, error) {
	w := specWalker{dec: json.NewDecoder(bytes.NewReader(data))}
	w.dec.UseNumber()
	if err := w.value(specSchema, "", false); err != nil {
		return nil, err
	}
	if _, err := w.dec.Token(); err != io.EOF {
		return nil, formaterr.New("shard spec", w.dec.InputOffset(), "data after the spec object")
	}
	// The walk has checked every key and value, so this cannot fail on
	// anything the walk would not have caught first.
	var sp Spec
	if err := json.Unmarshal(data, &sp); err != nil {
		return nil, formaterr.Wrap("shard spec", 0, err, "decoding")
	}
	return &sp, nil
}

type specKind int

const (
	kObject specKind = iota
	kArray
	kHash   // a XET hash string
	kDigest // a SHA-256 hex digest
	kU32
	kU64
	kBool
	kString
)

var kindNames = map[specKind]string{
	kObject: "an object", kArray: "an array", kHash: "a hash (64 hex digits)",
	kDigest: "a SHA-256 hex digest (64 hex digits)", kU32: "an unsigned 32-bit integer",
	kU64: "an unsigned 64-bit integer", kBool: "true or false", kString: "a string",
}

type specNode struct {
	kind   specKind
	fields []specField // kObject
	elem   *specNode   // kArray
}

type specField struct {
	name     string
	node     *specNode
	required bool
	nullable bool
}

var (
	nHash   = &specNode{kind: kHash}
	nDigest = &specNode{kind: kDigest}
	nU32    = &specNode{kind: kU32}
	nU64    = &specNode{kind: kU64}
	nBool   = &specNode{kind: kBool}
	nString = &specNode{kind: kString}

	chunkSchema = &specNode{kind: kObject, fields: []specField{
		{"hash", nHash, true, false},
		{"unpackedBytes", nU32, true, false},
		{"flags", nU32, false, false},
		{"byteRangeStart", nU32, false, true},
	}}
	xorbSchema = &specNode{kind: kObject, fields: []specField{
		{"hash", nHash, false, true},
		{"flags", nU32, false, false},
		{"bytesInXorb", nU32, false, true},
		{"bytesOnDisk", nU32, false, false},
		{"chunks", &specNode{kind: kArray, elem: chunkSchema}, false, true},
	}}
	termSchema = &specNode{kind: kObject, fields: []specField{
		{"xorb", nHash, true, false},
		{"chunkStart", nU32, true, false},
		{"chunkEnd", nU32, true, false},
		{"unpackedBytes", nU32, false, true},
		{"rangeHash", nHash, false, true},
		{"flags", nU32, false, false},
	}}
	fileSchema = &specNode{kind: kObject, fields: []specField{
		{"hash", nHash, false, true},
		{"sha256", nDigest, false, true},
		{"verification", nBool, false, false},
		{"flags", nU32, false, true},
		{"terms", &specNode{kind: kArray, elem: termSchema}, false, true},
	}}
	footerSchema = &specNode{kind: kObject, fields: []specField{
		{"createdAt", nU64, false, false},
		{"keyExpiry", nU64, false, false},
		{"chunkHashKey", nHash, false, false},
		{"lookupTables", nBool, false, false},
		{"storedBytesOnDisk", nU64, false, true},
		{"materializedBytes", nU64, false, true},
		{"storedBytes", nU64, false, true},
	}}
	specSchema = &specNode{kind: kObject, fields: []specField{
		{"appId", nString, false, true},
		{"files", &specNode{kind: kArray, elem: fileSchema}, false, true},
		{"xorbs", &specNode{kind: kArray, elem: xorbSchema}, false, true},
		{"footer", footerSchema, false, true},
	}}
)

// specWalker checks a JSON document against the schema token by token, so
// a spec of a million chunks is checked without building a tree of maps.
type specWalker struct{ dec *json.Decoder }

func (w *specWalker) fail(off int64, path, msg string, args ...any) error {
	where := path
	if where == "" {
		where = "the spec"
	}
	return formaterr.New("shard spec", off, "%s: %s", where, fmt.Sprintf(msg, args...))
}

func describe(tok json.Token) string {
	switch v := tok.(type) {
	case json.Delim:
		if v == '{' {
			return "an object"
		}
		return "an array"
	case string:
		return strconv.Quote(v)
	case json.Number:
		return v.String()
	case bool:
		return strconv.FormatBool(v)
	case nil:
		return "null"
	}
	return fmt.Sprint(tok)
}

func (w *specWalker) value(n *specNode, path string, nullable bool) error {
	off := w.dec.InputOffset()
	tok, err := w.dec.Token()
	if err != nil {
		if errors.Is(err, io.EOF) {
			err = io.ErrUnexpectedEOF
		}
		return formaterr.Wrap("shard spec", w.dec.InputOffset(), err, "%s: bad JSON", orSpec(path))
	}
	if tok == nil {
		if nullable {
			return nil
		}
		return w.fail(off, path, "null is not allowed here; want %s", kindNames[n.kind])
	}
	bad := func() error { return w.fail(off, path, "want %s, got %s", kindNames[n.kind], describe(tok)) }
	switch n.kind {
	case kObject:
		if tok != json.Delim('{') {
			return bad()
		}
		return w.object(n, path)
	case kArray:
		if tok != json.Delim('[') {
			return bad()
		}
		for i := 0; w.dec.More(); i++ {
			if err := w.value(n.elem, fmt.Sprintf("%s[%d]", path, i), false); err != nil {
				return err
			}
		}
		return w.close(path)
	case kHash, kDigest:
		s, ok := tok.(string)
		if !ok {
			return bad()
		}
		if _, err := xethash.Parse(s); err != nil {
			return w.fail(off, path, "want %s, got %q", kindNames[n.kind], s)
		}
	case kU32, kU64:
		num, ok := tok.(json.Number)
		if !ok {
			return bad()
		}
		bits := 32
		if n.kind == kU64 {
			bits = 64
		}
		if _, err := strconv.ParseUint(num.String(), 10, bits); err != nil {
			return bad()
		}
	case kBool:
		if _, ok := tok.(bool); !ok {
			return bad()
		}
	case kString:
		if _, ok := tok.(string); !ok {
			return bad()
		}
	}
	return nil
}

// close reads the '}' or ']' that ends a value.
func (w *specWalker) close(path string) error {
	if _, err := w.dec.Token(); err != nil {
		if errors.Is(err, io.EOF) {
			err = io.ErrUnexpectedEOF
		}
		return formaterr.Wrap("shard spec", w.dec.InputOffset(), err, "%s: bad JSON", orSpec(path))
	}
	return nil
}

func orSpec(path string) string {
	if path == "" {
		return "the spec"
	}
	return path
}

func (w *specWalker) object(n *specNode, path string) error {
	seen := make(map[string]bool, len(n.fields))
	for w.dec.More() {
		off := w.dec.InputOffset()
		tok, err := w.dec.Token()
		if err != nil {
			return formaterr.Wrap("shard spec", w.dec.InputOffset(), err, "%s: bad JSON", orSpec(path))
		}
		key := tok.(string) // object keys are always strings
		var field *specField
		for i := range n.fields {
			if n.fields[i].name == key {
				field = &n.fields[i]
			}
		}
		if field == nil {
			return w.unknown(off, path, key, n)
		}
		if seen[key] {
			return w.fail(off, path, "key %q appears twice", key)
		}
		seen[key] = true
		if err := w.value(field.node, join(path, key), field.nullable); err != nil {
			return err
		}
	}
	end := w.dec.InputOffset()
	if err := w.close(path); err != nil {
		return err
	}
	for _, f := range n.fields {
		if f.required && !seen[f.name] {
			return w.fail(end, path, "required key %q is missing", f.name)
		}
	}
	return nil
}

func join(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

// unknown reports an unknown key with the closest known key at that place.
func (w *specWalker) unknown(off int64, path, key string, n *specNode) error {
	names := make([]string, len(n.fields))
	for i, f := range n.fields {
		names[i] = f.name
	}
	msg := fmt.Sprintf("unknown key %q", key)
	if s := closest(key, names); s != "" {
		msg += fmt.Sprintf("; did you mean %q?", s)
	} else {
		msg += fmt.Sprintf(" (known keys: %s)", strings.Join(names, ", "))
	}
	return w.fail(off, path, "%s", msg)
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
