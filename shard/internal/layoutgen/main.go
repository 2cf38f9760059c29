// Command layoutgen writes, from the record layouts that package
// shard/internal/layouts declares, the model types and layout tables of
// package shard (layout_gen.go) and the members of the regions of
// wasm/xetkit.d.ts marked
//
//	// <generated from shard layouts: RECORD>
//	// </generated>
//
// (RECORD a record's name: its JSON members; "RECORD columns": its numbers
// as the Uint32Array columns of a packed parse). go generate ./shard runs
// it in the shard directory; TestGeneratedIsCurrent checks both outputs.
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
	if err := os.WriteFile(goPath, src, 0o644); err != nil {
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
	src, err := format.Source(b.Bytes())
	if err != nil {
		return nil, fmt.Errorf("generated Go does not parse: %w", err)
	}
	return src, nil
}

// fieldExpr is the call of layout.go that declares field f of record r.
func fieldExpr(r layouts.Record, f layouts.Field) string {
	off := "0" // the model is the value itself
	if f.Go != "" {
		var terms []string
		typ := r.Model
		for _, step := range strings.Split(f.Go, ".") {
			terms = append(terms, fmt.Sprintf("unsafe.Offsetof(%s{}.%s)", typ, step))
			typ = step
		}
		off = strings.Join(terms, "+")
	}
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
