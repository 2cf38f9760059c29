// Command layoutgen writes, from the record layouts that package
// shard/internal/layouts declares, the model types and layout tables of
// package shard (layout_gen.go) and the members of the regions of
// wasm/xetkit.d.ts marked
//
//	// <generated from shard layouts: RECORD>
//	// </generated>
//
// (RECORD a record's name: its JSON members; "RECORD columns": its numbers
// as the Uint32Array columns of a packed parse). For each record with
// Columns it also writes the list of its u32 fields into layout_gen.go
// (the columns wasm/formats fills) and the module wasm/shardcolumns.js
// (the columns' names and a maker of the row objects, for
// wasm/shardrecords.js and web/chunkrows.js). go generate ./shard runs it
// in the shard directory; TestGeneratedIsCurrent checks the outputs.
package main

import (
	"bytes"
	"fmt"
	"go/format"
	"os"
	"regexp"
	"slices"
	"strings"

	"github.com/xetkit/xetkit/shard/internal/layouts"
)

// The outputs, from the shard directory.
const (
	goPath  = "layout_gen.go"
	dtsPath = "../wasm/xetkit.d.ts"
	jsPath  = "../wasm/shardcolumns.js"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "layoutgen:", err)
		os.Exit(1)
	}
}

func run() error {
	src, err := goSource(layouts.Records, layouts.Models)
	if err != nil {
		return err
	}
	dts, err := os.ReadFile(dtsPath)
	if err != nil {
		return err
	}
	dts, err = updateDTS(dts, layouts.Records, layouts.Models)
	if err != nil {
		return err
	}
	js, err := jsSource(layouts.Records)
	if err != nil {
		return err
	}
	if err := os.WriteFile(goPath, src, 0o644); err != nil {
		return err
	}
	if err := os.WriteFile(jsPath, js, 0o644); err != nil {
		return err
	}
	return os.WriteFile(dtsPath, dts, 0o644)
}

// kindNames name the kinds in messages.
var kindNames = [...]string{
	layouts.Hash: "hash", layouts.U32: "u32", layouts.U64: "u64", layouts.Trunc: "truncated hash",
	layouts.Count: "count", layouts.Text: "text", layouts.Zero: "reserved", layouts.Fixed: "fixed",
}

// member is a field of a generated struct type.
type member struct{ name, typ, doc string }

// goTypes are the Go types of the kinds a model keeps.
var goTypes = map[layouts.Kind]string{
	layouts.Hash: "xethash.Hash", layouts.U32: "uint32", layouts.U64: "uint64", layouts.Trunc: "uint64", layouts.Text: "string",
}

// modelMembers returns the fields of each model type: its hand-written
// ones around those its records keep, in byte order. Records sharing a
// model (the lookup tables) must agree on the order of the fields they
// share; a field kept by a struct field of the model ("Totals.StoredBytes")
// makes that struct field, of the type of its name.
func modelMembers(records []layouts.Record, models []layouts.Model) (map[string][]member, error) {
	kept := map[string][]member{}
	isModel := map[string]bool{}
	for _, m := range models {
		isModel[m.Type] = true
	}
	for _, r := range records {
		if r.Var == "" || r.Name == "" {
			return nil, fmt.Errorf("record %q (%s) has no Var or no Name", r.Name, r.Var)
		}
		if !isModel[r.Model] {
			// The model is the record's one value (or there is none).
			values := 0
			for _, f := range r.Fields {
				if f.Go != "" {
					return nil, fmt.Errorf("record %s: field %s names Go field %s, but the record's model %q is not a struct of Models", r.Name, f.Name, f.Go, r.Model)
				}
				if _, ok := goTypes[f.Kind]; ok {
					values++
				}
			}
			if values > 1 || values == 1 && r.Model == "" {
				return nil, fmt.Errorf("record %s: %d values for model %q: a record that is not a struct of Models has one value, of a type of its own", r.Name, values, r.Model)
			}
			continue
		}
		// last is, per type, the index of the field this record kept last;
		// a struct field (group) comes again for each of its fields.
		last := map[string]int{}
		add := func(typ string, m member, group bool) error {
			fields := kept[typ]
			at := slices.IndexFunc(fields, func(o member) bool { return o.name == m.name })
			prev, seen := last[typ]
			if !seen {
				prev = -1
			}
			switch {
			case at < 0:
				at = prev + 1
				kept[typ] = slices.Insert(fields, at, m)
			case fields[at].typ != m.typ:
				return fmt.Errorf("record %s: %s.%s is %s here, %s in another record", r.Name, typ, m.name, m.typ, fields[at].typ)
			case at < prev || at == prev && !group:
				return fmt.Errorf("record %s: %s.%s comes before a field it follows in another record", r.Name, typ, m.name)
			case m.doc != "" && fields[at].doc != "" && m.doc != fields[at].doc:
				return fmt.Errorf("record %s: %s.%s has two docs; give it one", r.Name, typ, m.name)
			case m.doc != "":
				fields[at].doc = m.doc
			}
			last[typ] = at
			return nil
		}
		for _, f := range r.Fields {
			goType, value := goTypes[f.Kind]
			if value != (f.Go != "") {
				return nil, fmt.Errorf("record %s: field %s of kind %s: a model field for each hash, number and text, none for counts, reserved and fixed bytes", r.Name, f.Name, kindNames[f.Kind])
			}
			if !value {
				continue
			}
			path := strings.Split(f.Go, ".")
			typ := r.Model
			for _, step := range path[:len(path)-1] {
				if !isModel[step] {
					return nil, fmt.Errorf("record %s: field %s: %s is not a struct of Models", r.Name, f.Name, step)
				}
				if err := add(typ, member{name: step, typ: step}, true); err != nil {
					return nil, err
				}
				typ = step
			}
			if err := add(typ, member{name: path[len(path)-1], typ: goType, doc: f.Doc}, false); err != nil {
				return nil, err
			}
		}
	}
	out := map[string][]member{}
	for _, m := range models {
		if len(kept[m.Type]) == 0 {
			return nil, fmt.Errorf("model %s keeps no field of a record", m.Type)
		}
		if m.Doc == "" {
			return nil, fmt.Errorf("model %s has no doc", m.Type)
		}
		var all []member
		for _, g := range m.Before {
			all = append(all, member{g.Name, g.Type, g.Doc})
		}
		all = append(all, kept[m.Type]...)
		for _, g := range m.After {
			all = append(all, member{g.Name, g.Type, g.Doc})
		}
		out[m.Type] = all
	}
	return out, nil
}

// goSource returns layout_gen.go.
func goSource(records []layouts.Record, models []layouts.Model) ([]byte, error) {
	members, err := modelMembers(records, models)
	if err != nil {
		return nil, err
	}
	var b bytes.Buffer
	b.WriteString("// Code generated by shard/internal/layoutgen from shard/internal/layouts; DO NOT EDIT.\n\n")
	b.WriteString("package shard\n\nimport (\n\t\"unsafe\"\n\n\t\"github.com/xetkit/xetkit/xethash\"\n)\n\n")
	for _, m := range models {
		comment(&b, "", m.Doc)
		fmt.Fprintf(&b, "type %s struct {\n", m.Type)
		for _, f := range members[m.Type] {
			switch {
			case f.doc == "":
				fmt.Fprintf(&b, "\t%s %s\n", f.name, f.typ)
			case strings.HasPrefix(f.doc, f.name+" "):
				comment(&b, "\t", f.doc)
				fmt.Fprintf(&b, "\t%s %s\n", f.name, f.typ)
			default:
				fmt.Fprintf(&b, "\t%s %s // %s\n", f.name, f.typ, f.doc)
			}
		}
		b.WriteString("}\n\n")
	}
	comment(&b, "", "The record layouts of the format (draft §9), as shard/internal/layouts declares them: each field says where the model keeps its value, for the code of layout.go that reads, writes, prints and spans records.")
	b.WriteString("var (\n")
	for _, r := range records {
		fmt.Fprintf(&b, "\t%s = newLayout(%q, %q,\n", r.Var, r.Name, r.Section)
		for _, f := range r.Fields {
			fmt.Fprintf(&b, "\t\t%s,\n", fieldExpr(r, f))
		}
		b.WriteString("\t)\n")
	}
	b.WriteString(")\n")
	for _, r := range records {
		if r.Columns == "" {
			continue
		}
		cols, err := columnsOf(r)
		if err != nil {
			return nil, err
		}
		b.WriteString("\n")
		comment(&b, "", fmt.Sprintf("%s are the u32 fields of the %s record, in byte order: the Uint32Array columns its rows go to JavaScript in, one a field, named by its JSON key (wasm/formats fills them, wasm/shardcolumns.js reads them).", r.Columns, r.Name))
		fmt.Fprintf(&b, "var %s = []Column[%s]{\n", r.Columns, r.Model)
		for _, f := range cols.u32 {
			fmt.Fprintf(&b, "\t{%q, %s},\n", f.Name, modelOffset(r, f))
		}
		b.WriteString("}\n")
	}
	src, err := format.Source(b.Bytes())
	if err != nil {
		return nil, fmt.Errorf("generated Go does not parse: %w", err)
	}
	return src, nil
}

// modelOffset is the expression of where r's model keeps field f.
func modelOffset(r layouts.Record, f layouts.Field) string {
	if f.Go == "" {
		return "0" // the model is the value itself
	}
	var terms []string
	typ := r.Model
	for _, step := range strings.Split(f.Go, ".") {
		terms = append(terms, fmt.Sprintf("unsafe.Offsetof(%s{}.%s)", typ, step))
		typ = step
	}
	return strings.Join(terms, "+")
}

// fieldExpr is the call of layout.go that declares field f of record r.
func fieldExpr(r layouts.Record, f layouts.Field) string {
	off := modelOffset(r, f)
	var e string
	switch f.Kind {
	case layouts.Hash:
		e = fmt.Sprintf("hash(%q, %s)", f.Name, off)
	case layouts.U32:
		e = fmt.Sprintf("u32(%q, %s)", f.Name, off)
	case layouts.U64:
		e = fmt.Sprintf("u64(%q, %s)", f.Name, off)
	case layouts.Trunc:
		e = fmt.Sprintf("truncated(%q, %s)", f.Name, off)
	case layouts.Count:
		e = fmt.Sprintf("count(%q)", f.Name)
	case layouts.Text:
		e = fmt.Sprintf("text(%q, %d, %s)", f.Name, f.Size, off)
	case layouts.Zero:
		e = fmt.Sprintf("zero(%q, %d)", f.Name, f.Size)
	case layouts.Fixed:
		e = fmt.Sprintf("fixed(%q, %s[:])", f.Name, f.Source)
	}
	if f.Kept {
		e = "kept(" + e + ")"
	}
	return e
}

// comment writes text as // lines after indent (tabs), 76 columns wide
// with a tab taking 4.
func comment(b *bytes.Buffer, indent, text string) {
	width := 76 - len("// ") - 4*len(indent)
	line := ""
	for _, w := range strings.Fields(text) {
		if line != "" && len([]rune(line))+1+len([]rune(w)) > width {
			fmt.Fprintf(b, "%s// %s\n", indent, line)
			line = ""
		}
		if line != "" {
			line += " "
		}
		line += w
	}
	fmt.Fprintf(b, "%s// %s\n", indent, line)
}

var (
	regionStart = regexp.MustCompile(`^(\s*)// <generated from shard layouts: ([^>]+)>\s*$`)
	regionEnd   = regexp.MustCompile(`^\s*// </generated>\s*$`)
)

// updateDTS returns the d.ts src with each marked region's members made
// from the records. Every record read into a struct model must have a
// region, so that no record's JSON goes undeclared.
func updateDTS(src []byte, records []layouts.Record, models []layouts.Model) ([]byte, error) {
	lines := strings.SplitAfter(string(src), "\n")
	var out []string
	placed := map[string]bool{}
	for i := 0; i < len(lines); i++ {
		out = append(out, lines[i])
		m := regionStart.FindStringSubmatch(strings.TrimSuffix(lines[i], "\n"))
		if m == nil {
			continue
		}
		indent, name := m[1], m[2]
		end := i + 1
		for end < len(lines) && !regionEnd.MatchString(strings.TrimSuffix(lines[end], "\n")) {
			if regionStart.MatchString(strings.TrimSuffix(lines[end], "\n")) {
				return nil, fmt.Errorf("%s: line %d: region %q opens inside another", dtsPath, end+1, name)
			}
			end++
		}
		if end == len(lines) {
			return nil, fmt.Errorf("%s: line %d: region %q has no // </generated>", dtsPath, i+1, name)
		}
		body, err := regionBody(records, name)
		if err != nil {
			return nil, fmt.Errorf("%s: line %d: %w", dtsPath, i+1, err)
		}
		for _, l := range body {
			out = append(out, indent+l+"\n")
		}
		placed[name] = true
		i = end - 1 // the end marker is copied next
	}
	for _, r := range records {
		isStruct := slices.ContainsFunc(models, func(m layouts.Model) bool { return m.Type == r.Model })
		if isStruct && !placed[r.Name] {
			return nil, fmt.Errorf("%s: no region for record %s (// <generated from shard layouts: %s>)", dtsPath, r.Name, r.Name)
		}
	}
	return []byte(strings.Join(out, "")), nil
}

// regionBody returns the members of region name: a record's JSON members,
// or with " columns" its numbers as columns (its hash travels in a
// column of its own, declared by hand).
func regionBody(records []layouts.Record, name string) ([]string, error) {
	record, columns := strings.CutSuffix(name, " columns")
	i := slices.IndexFunc(records, func(r layouts.Record) bool { return r.Name == record })
	if i < 0 {
		return nil, fmt.Errorf("region %q: no such record", name)
	}
	var out []string
	hashes := 0
	for _, f := range records[i].Fields {
		if !f.InJSON() {
			continue
		}
		if columns {
			switch f.Kind {
			case layouts.U32:
				out = append(out, f.Name+": Uint32Array<ArrayBuffer>;")
			case layouts.Hash:
				if hashes++; hashes > 1 {
					return nil, fmt.Errorf("region %q: a second hash field (%s) has no column", name, f.Name)
				}
			default:
				return nil, fmt.Errorf("region %q: field %s of kind %s has no column type", name, f.Name, kindNames[f.Kind])
			}
			continue
		}
		if f.TSDoc != "" {
			out = append(out, "/** "+f.TSDoc+" */")
		}
		typ := "number"
		if f.Kind == layouts.Hash || f.Kind == layouts.Trunc || f.Kind == layouts.Text {
			typ = "string"
		}
		out = append(out, f.Name+": "+typ+";")
	}
	return out, nil
}

// rowColumns is how the rows of a record with Columns reach JavaScript.
type rowColumns struct {
	key  *layouts.Field  // its hash (or truncated hash): a string the code making the columns supplies by hand
	u32  []layouts.Field // its u32 fields: a Uint32Array column each
	keys []string        // its objects' keys, in order: the JSON keys, each Extra after its After
	cols []string        // its typed array columns: the u32 ones, then Extra
}

// identifier matches the names the generated JavaScript may use as they are.
var identifier = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// columnsOf returns how record r's rows go as columns. Every JSON field is
// a u32 column but one hash, which the hand-written code ships as a string
// of its own: another kind has no column yet, and is refused.
func columnsOf(r layouts.Record) (rowColumns, error) {
	var c rowColumns
	for i, f := range r.Fields {
		if !f.InJSON() {
			continue
		}
		switch {
		case f.Kind == layouts.U32:
			c.u32 = append(c.u32, f)
		case (f.Kind == layouts.Hash || f.Kind == layouts.Trunc) && c.key == nil:
			c.key = &r.Fields[i]
		default:
			return c, fmt.Errorf("record %s: field %s of kind %s has no column (a record with Columns ships one hash, the rest as u32 columns)", r.Name, f.Name, kindNames[f.Kind])
		}
		c.keys = append(c.keys, f.Name)
	}
	if c.key == nil {
		return c, fmt.Errorf("record %s: a record with Columns needs its hash (the key of a row)", r.Name)
	}
	for _, f := range c.u32 {
		c.cols = append(c.cols, f.Name)
	}
	for _, e := range r.Extra {
		at := slices.Index(c.keys, e.After)
		if at < 0 {
			return c, fmt.Errorf("record %s: extra column %s follows %q, which is not a JSON key of the record", r.Name, e.Name, e.After)
		}
		c.keys = slices.Insert(c.keys, at+1, e.Name)
		c.cols = append(c.cols, e.Name)
	}
	for i, k := range c.keys {
		if !identifier.MatchString(k) || slices.Contains(c.keys[:i], k) {
			return c, fmt.Errorf("record %s: column key %q is not an identifier, or comes twice", r.Name, k)
		}
	}
	return c, nil
}

// jsSource returns wasm/shardcolumns.js: for each record with Columns,
// NAMEKeys (its objects' keys in order), NAMEColumns (its u32 columns)
// and NAMERow(c), a maker of its row objects from the columns c (the u32
// ones and Extra as typed arrays). The makers are written out, not built
// with new Function at run time (which a page's Content-Security-Policy
// may forbid), so that every object is one literal of one shape.
func jsSource(records []layouts.Record) ([]byte, error) {
	var b strings.Builder
	b.WriteString(`// Code generated by shard/internal/layoutgen from shard/internal/layouts; DO NOT EDIT.

// The records whose rows a parse ships as columns (FileRows, ChunkRows,
// ChunkLookups: wasm/formats/shards.go fills a Uint32Array per u32 field,
// named by its JSON key), as wasm/shardrecords.js and the page read them:
// for each, the keys of its objects in order, its u32 columns, and a maker
// of its objects. A new u32 field of those records comes here from the
// table, with no code of its own.
`)
	for _, r := range records {
		if r.Columns == "" {
			continue
		}
		c, err := columnsOf(r)
		if err != nil {
			return nil, err
		}
		quoted := func(names []string) string {
			q := make([]string, len(names))
			for i, n := range names {
				q[i] = fmt.Sprintf("%q", n)
			}
			return "[" + strings.Join(q, ", ") + "]"
		}
		cols := c.cols
		u32 := cols[:len(c.u32)]
		fmt.Fprintf(&b, "\n/** The keys of a %s object, in order. */\n", r.Name)
		fmt.Fprintf(&b, "export const %sKeys = %s;\n", r.Name, quoted(c.keys))
		fmt.Fprintf(&b, "/** The Uint32Array columns of the %s rows: its u32 fields. */\n", r.Name)
		fmt.Fprintf(&b, "export const %sColumns = %s;\n\n", r.Name, quoted(u32))
		fmt.Fprintf(&b, "/**\n * %sRow(c) returns row(r, k): the %s object of row r of the columns c\n", r.Name, r.Name)
		fmt.Fprintf(&b, " * (%s: typed arrays), k its %s.\n */\n", strings.Join(cols, ", "), c.key.Name)
		fmt.Fprintf(&b, "export function %sRow(c) {\n", r.Name)
		// Locals c0, c1, … and the parameter k name the columns and the
		// key, so that no JSON key is ever a JavaScript name.
		var locals, members []string
		for i, name := range cols {
			locals = append(locals, fmt.Sprintf("c%d = c.%s", i, name))
		}
		for _, k := range c.keys {
			if k == c.key.Name {
				members = append(members, k+": k")
			} else {
				members = append(members, fmt.Sprintf("%s: c%d[r]", k, slices.Index(cols, k)))
			}
		}
		fmt.Fprintf(&b, "  const %s;\n", strings.Join(locals, ", "))
		fmt.Fprintf(&b, "  return (r, k) => ({ %s });\n}\n", strings.Join(members, ", "))
	}
	return []byte(b.String()), nil
}
