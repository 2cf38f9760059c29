package shard

import (
	"slices"
	"strconv"
	"unsafe"

	"github.com/xetkit/xetkit/internal/jsonw"
	"github.com/xetkit/xetkit/xethash"
)

// Section is a byte range of the shard and what it holds: "header",
// "files", "cas", "fileLookup", "casLookup", "chunkLookup", "footer", or
// "trailing" for bytes after an upload-form shard's CAS info section.
type Section struct {
	Name   string `json:"name"`
	Offset int64  `json:"offset"`
	Size   int64  `json:"size"`
}

// sections lists where each part of s lies, in order. Lookup tables are
// listed only when they were read.
func (s *Shard) sections() []Section {
	l := s.Layout
	out := []Section{
		{"header", 0, HeaderSize},
		{"files", l.FileInfo, l.CASInfo - l.FileInfo},
		{"cas", l.CASInfo, l.AfterCAS - l.CASInfo},
	}
	if s.Footer == nil {
		if l.AfterCAS < l.Size {
			out = append(out, Section{"trailing", l.AfterCAS, l.Size - l.AfterCAS})
		}
		return out
	}
	f := s.Footer
	for _, t := range []struct {
		name string
		off  uint64
		n, w int
	}{
		{"fileLookup", f.FileLookupOffset, len(s.Lookups.Files), fileLookupLayout.size},
		{"casLookup", f.XorbLookupOffset, len(s.Lookups.Xorbs), xorbLookupLayout.size},
		{"chunkLookup", f.ChunkLookupOffset, len(s.Lookups.Chunks) + s.unreadChunkLookups, chunkLookupLayout.size},
	} {
		if t.n > 0 {
			out = append(out, Section{t.name, int64(t.off), int64(t.n * t.w)})
		}
	}
	return append(out, Section{"footer", l.Footer, l.Size - l.Footer})
}

func appendTrunc(dst []byte, v uint64) []byte {
	const digits = "0123456789abcdef"
	for shift := 60; shift >= 0; shift -= 4 {
		dst = append(dst, digits[v>>uint(shift)&15])
	}
	return dst
}

// AppendJSON appends to dst the ParsedShard JSON (DESIGN.md) of s and its
// findings (nil gives []): the JSON "xetkit shard parse" prints and the
// JavaScript parseShard returns. Each record's keys are its fields as the
// layouts name them; hashes are XET strings, a truncated hash 16 hex
// digits, a SHA-256 its standard hex digest. Besides DESIGN.md's keys it
// carries "size", each file block's "size", "numEntries" and
// "unpackedBytes", each lookup entry's "file" or "xorb" (the block its
// entry starts, -1 for none), and "sections" (where each part lies), for a
// viewer's hex view.
//
// With rows false the many-row parts are left empty ([]): every xorb's
// "chunks", every file's "entries" and "verification" (still null where
// the file has none) and the chunk lookup table; "numChunks", "numEntries"
// and the footer's counts still count them. They are most of a big
// shard's JSON, which a viewer takes in pieces.
func AppendJSON(dst []byte, s *Shard, findings []Finding, rows bool) []byte {
	// One allocation of about the final size, rather than doubling
	// through a few hundred megabytes.
	est := 1024 + 400*len(s.Files) + 300*len(s.Xorbs) + 64*(len(s.Lookups.Files)+len(s.Lookups.Xorbs))
	if rows {
		est += 64 * len(s.Lookups.Chunks)
		for i := range s.Files {
			est += 190 * len(s.Files[i].Terms)
		}
		for i := range s.Xorbs {
			est += 150 * len(s.Xorbs[i].Chunks)
		}
	}
	w := jw{b: slices.Grow(dst, est)}
	w.s(`{"header":{`)
	headerLayout.appendJSON(&w, unsafe.Pointer(&s.Header), 0)
	w.s(`},"files":[`)
	for i := range s.Files {
		f := &s.Files[i]
		w.comma(i)
		w.s(`{"offset":`)
		w.i(f.Offset)
		w.s(`,"size":`)
		w.i(f.blockSize(s.termCount(i)))
		fileLayout.appendJSON(&w, unsafe.Pointer(f), s.termCount(i))
		w.s(`,"unpackedBytes":`)
		w.u(s.fileBytes(i))
		w.s(`,"entries":[`)
		if rows {
			for j := range f.Terms {
				w.comma(j)
				w.s(`{`)
				termLayout.appendJSON(&w, unsafe.Pointer(&f.Terms[j]), 0)
				w.s(`}`)
			}
		}
		w.s(`],"verification":`)
		if f.Verification == nil {
			w.s(`null`)
		} else {
			w.s(`[`)
			if rows {
				for j, h := range f.Verification {
					w.comma(j)
					w.hash(h)
				}
			}
			w.s(`]`)
		}
		w.s(`,"sha256":`)
		if f.SHA256 == nil {
			w.s(`null`)
		} else {
			w.hash(*f.SHA256)
		}
		w.s(`}`)
	}
	w.s(`],"xorbs":[`)
	for i := range s.Xorbs {
		x := &s.Xorbs[i]
		w.comma(i)
		w.s(`{"offset":`)
		w.i(x.Offset)
		xorbLayout.appendJSON(&w, unsafe.Pointer(x), s.chunkCount(i))
		w.s(`,"chunks":[`)
		if rows {
			for j := range x.Chunks {
				w.comma(j)
				w.s(`{`)
				chunkLayout.appendJSON(&w, unsafe.Pointer(&x.Chunks[j]), 0)
				w.s(`}`)
			}
		}
		w.s(`]}`)
	}
	l := &s.Lookups
	fileAt, xorbAt := s.fileEntries(), s.xorbEntries()
	w.s(`],"lookups":{"files":[`)
	w.lookups(fileLookupLayout, l.Files, "file", fileAt)
	w.s(`],"xorbs":[`)
	w.lookups(xorbLookupLayout, l.Xorbs, "xorb", xorbAt)
	w.s(`],"chunks":[`)
	if rows {
		w.lookups(chunkLookupLayout, l.Chunks, "xorb", xorbAt)
	}
	w.s(`]},"footer":`)
	if s.Footer == nil {
		w.s(`null`)
	} else {
		w.s(`{`)
		footerLayout.appendJSON(&w, unsafe.Pointer(s.Footer), 0)
		w.s(`}`)
	}
	w.s(`,"findings":[`)
	for i, f := range findings {
		w.comma(i)
		w.s(`{"severity":`)
		w.str(string(f.Severity))
		w.s(`,"offset":`)
		w.i(f.Offset)
		w.s(`,"section":`)
		w.str(f.Section)
		w.s(`,"rule":`)
		w.str(f.Rule)
		w.s(`,"message":`)
		w.str(f.Message)
		w.s(`}`)
	}
	w.s(`],"size":`)
	w.i(s.Layout.Size)
	w.s(`,"sections":[`)
	for i, sec := range s.sections() {
		w.comma(i)
		w.s(`{"name":`)
		w.str(sec.Name)
		w.s(`,"offset":`)
		w.i(sec.Offset)
		w.s(`,"size":`)
		w.i(sec.Size)
		w.s(`}`)
	}
	w.s(`]}`)
	return w.b
}

// lookups writes the entries of one lookup table, each with the block its
// entry starts (under the key owner, -1 for none); starts are the blocks'
// header records.
func (w *jw) lookups(l *layout, entries []LookupEntry, owner string, starts []int64) {
	for i := range entries {
		w.comma(i)
		w.s(`{`)
		l.appendJSON(w, unsafe.Pointer(&entries[i]), 0)
		w.key(owner)
		w.i(int64(entryOwner(starts, entries[i].Entry)))
		w.s(`}`)
	}
}

// jw appends JSON tokens.
type jw struct{ b []byte }

func (w *jw) s(lit string) { w.b = append(w.b, lit...) }
func (w *jw) u(v uint64)   { w.b = strconv.AppendUint(w.b, v, 10) }
func (w *jw) i(v int64)    { w.b = strconv.AppendInt(w.b, v, 10) }
func (w *jw) comma(i int) {
	if i > 0 {
		w.b = append(w.b, ',')
	}
}

// key writes `,"name":` (or `"name":` right after the opening brace).
func (w *jw) key(name string) {
	if w.b[len(w.b)-1] != '{' {
		w.b = append(w.b, ',')
	}
	w.b = append(w.b, '"')
	w.b = append(w.b, name...)
	w.b = append(w.b, '"', ':')
}

func (w *jw) hash(h xethash.Hash) {
	w.b = append(w.b, '"')
	w.b = h.AppendString(w.b)
	w.b = append(w.b, '"')
}

// str writes a JSON string, as encoding/json writes one.
func (w *jw) str(v string) { w.b = jsonw.AppendString(w.b, v) }
