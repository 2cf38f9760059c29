package pages

import (
	"bytes"
	"encoding/binary"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"net/url"
	"sort"
	"strings"

	"github.com/go-git/go-git/v5/utils/diff"
	"github.com/sergi/go-diff/diffmatchpatch"

	"github.com/xetkit/xetkit/hub/repos"
)

// What a file's page shows of its content beyond text: a .safetensors
// header, the first rows of a table, and the diff of a commit's files.

func urlQuery(s string) string { return url.QueryEscape(s) }
func urlPath(s string) string  { return url.PathEscape(s) }

// tensorTable is a .safetensors header: its tensors and metadata.
type tensorTable struct {
	Tensors  []tensor
	More     int // tensors left out
	Metadata map[string]string
	Error    string
}

type tensor struct {
	Name, DType, Shape string
	Bytes              int64
}

// Bounds on what a page reads of a .safetensors header.
const (
	maxHeaderBytes = 8 << 20
	maxTensorRows  = 1000
)

// safetensors reads the header of a .safetensors file: an 8-byte little
// endian length, then that many bytes of JSON.
func (c *call) safetensors(f repos.File) *tensorTable {
	t := &tensorTable{}
	content, size, err := c.s.repos.Open(f)
	if err != nil {
		t.Error = err.Error()
		return t
	}
	defer content.Close()
	var n [8]byte
	if _, err := content.ReadAt(n[:], 0); err != nil {
		t.Error = "the file is too short for a header"
		return t
	}
	hl := binary.LittleEndian.Uint64(n[:])
	if hl > maxHeaderBytes || int64(hl) > size-8 {
		t.Error = fmt.Sprintf("a header of %d bytes: longer than the file or than the %d bytes a page reads", hl, maxHeaderBytes)
		return t
	}
	b := make([]byte, hl)
	if _, err := content.ReadAt(b, 8); err != nil {
		t.Error = err.Error()
		return t
	}
	var head map[string]json.RawMessage
	if err := json.Unmarshal(b, &head); err != nil {
		t.Error = "the header is not JSON: " + err.Error()
		return t
	}
	names := make([]string, 0, len(head))
	for k := range head {
		if k == "__metadata__" {
			var meta map[string]string
			_ = json.Unmarshal(head[k], &meta)
			t.Metadata = meta
			continue
		}
		names = append(names, k)
	}
	sort.Strings(names)
	if len(names) > maxTensorRows {
		t.More, names = len(names)-maxTensorRows, names[:maxTensorRows]
	}
	for _, k := range names {
		var v struct {
			DType   string  `json:"dtype"`
			Shape   []int64 `json:"shape"`
			Offsets []int64 `json:"data_offsets"`
		}
		_ = json.Unmarshal(head[k], &v)
		shape := make([]string, len(v.Shape))
		for i, d := range v.Shape {
			shape[i] = fmt.Sprint(d)
		}
		tn := tensor{Name: k, DType: v.DType, Shape: "[" + strings.Join(shape, ", ") + "]"}
		if len(v.Offsets) == 2 {
			tn.Bytes = v.Offsets[1] - v.Offsets[0]
		}
		t.Tensors = append(t.Tensors, tn)
	}
	return t
}

// rowTable is the first rows of a table file.
type rowTable struct {
	Header []string
	Rows   [][]string
}

// maxPeekRows is how many rows a table file's page shows.
const maxPeekRows = 20

// csvRows reads the first rows of CSV (or, with sep a tab, TSV) from the
// start of a file; the last line, likely cut, is left out when more
// follows.
func csvRows(b []byte, sep rune) *rowTable {
	if i := bytes.LastIndexByte(b, '\n'); i >= 0 && len(b) >= maxPeekBytes {
		b = b[:i+1]
	}
	r := csv.NewReader(bytes.NewReader(b))
	r.Comma, r.LazyQuotes, r.FieldsPerRecord = sep, true, -1
	t := &rowTable{}
	for len(t.Rows) < maxPeekRows {
		rec, err := r.Read()
		if err != nil {
			break
		}
		if t.Header == nil {
			t.Header = rec
			continue
		}
		t.Rows = append(t.Rows, rec)
	}
	if t.Header == nil {
		return nil
	}
	return t
}

// jsonlRows reads the first objects of JSON Lines as a table: a column
// for each key the first rows have.
func jsonlRows(b []byte) *rowTable {
	var objs []map[string]json.RawMessage
	var keys []string
	seen := map[string]bool{}
	for _, line := range bytes.Split(b, []byte("\n")) {
		if len(objs) == maxPeekRows {
			break
		}
		var o map[string]json.RawMessage
		if json.Unmarshal(line, &o) != nil {
			continue
		}
		for k := range o {
			if !seen[k] {
				seen[k] = true
				keys = append(keys, k)
			}
		}
		objs = append(objs, o)
	}
	if len(objs) == 0 {
		return nil
	}
	sort.Strings(keys)
	t := &rowTable{Header: keys}
	for _, o := range objs {
		row := make([]string, len(keys))
		for i, k := range keys {
			var s string
			if json.Unmarshal(o[k], &s) != nil {
				s = string(o[k])
			}
			row[i] = s
		}
		t.Rows = append(t.Rows, row)
	}
	return t
}

// change is one file of a commit or pull request as its page shows it.
type change struct {
	Path     string
	Kind     string // added, deleted, modified
	Old, New *repos.File
	Lines    []diffLine // a text file's diff
	Note     string     // why there is no diff
}

// diffLine is one line of a diff: Op is "+", "-" or " ".
type diffLine struct {
	Op, Text string
}

// Bounds on the diffs a page shows.
const (
	maxDiffBytes = 256 << 10 // a side of a text file
	maxDiffLines = 2000      // lines of one file's diff
	diffContext  = 3         // unchanged lines around each change
)

// changes turns the service's file changes into what a page shows: a
// line diff for text files small enough, sizes and hashes otherwise.
func (c *call) changes(in []repos.FileChange) []change {
	out := make([]change, len(in))
	for i, fc := range in {
		ch := change{Path: fc.Path, Old: fc.Old, New: fc.New, Kind: "modified"}
		switch {
		case fc.Old == nil:
			ch.Kind = "added"
		case fc.New == nil:
			ch.Kind = "deleted"
		}
		old, okOld := c.diffSide(fc.Old)
		cur, okNew := c.diffSide(fc.New)
		if okOld && okNew {
			ch.Lines = lineDiff(old, cur)
			if len(ch.Lines) == 0 && ch.Kind == "modified" {
				ch.Note = "Only its mode changed."
			}
		} else {
			ch.Note = "A binary or big file: its size and hashes are shown."
		}
		out[i] = ch
	}
	return out
}

// diffSide reads one side of a diff: "" for a side that is not there;
// false for a file that is binary, in Xet, or too big to diff.
func (c *call) diffSide(f *repos.File) (string, bool) {
	if f == nil {
		return "", true
	}
	if f.Xet != "" || f.Size > maxDiffBytes {
		return "", false
	}
	b, err := c.read(*f, maxDiffBytes)
	if err != nil || !repos.Regular(int64(len(b)), b) {
		return "", false
	}
	return string(b), true
}

// lineDiff is a unified diff of two texts (go-git's line diff), unchanged
// runs cut down to diffContext lines around each change.
func lineDiff(a, b string) []diffLine {
	var all []diffLine
	for _, d := range diff.Do(a, b) {
		op := map[diffmatchpatch.Operation]string{diffmatchpatch.DiffInsert: "+", diffmatchpatch.DiffDelete: "-", diffmatchpatch.DiffEqual: " "}[d.Type]
		for _, l := range strings.SplitAfter(d.Text, "\n") {
			if l != "" {
				all = append(all, diffLine{op, strings.TrimSuffix(l, "\n")})
			}
		}
	}
	var out []diffLine
	near := func(i int) bool {
		for j := max(0, i-diffContext); j <= min(len(all)-1, i+diffContext); j++ {
			if all[j].Op != " " {
				return true
			}
		}
		return false
	}
	skipped := false
	for i, l := range all {
		if len(out) == maxDiffLines {
			out = append(out, diffLine{"…", fmt.Sprintf("%d more lines", len(all)-i)})
			break
		}
		if l.Op == " " && !near(i) {
			skipped = true
			continue
		}
		if skipped && len(out) > 0 {
			out = append(out, diffLine{"…", ""})
		}
		skipped = false
		out = append(out, l)
	}
	return out
}
