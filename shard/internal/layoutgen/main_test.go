//go:build !js

package main

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/xetkit/xetkit/shard/internal/layouts"
)

// shardDir is where go generate runs the generator, from this package.
const shardDir = "../.."

// TestGeneratedIsCurrent: layout_gen.go, the generated regions of
// wasm/xetkit.d.ts and wasm/shardcolumns.js are what the table gives (go
// generate ./shard writes them).
func TestGeneratedIsCurrent(t *testing.T) {
	want, err := goSource(layouts.Records, layouts.Models)
	if err != nil {
		t.Fatal(err)
	}
	if got, err := os.ReadFile(filepath.Join(shardDir, goPath)); err != nil {
		t.Fatal(err)
	} else if string(got) != string(want) {
		t.Errorf("shard/%s is older than shard/internal/layouts: run go generate ./shard", goPath)
	}
	dts, err := os.ReadFile(filepath.Join(shardDir, dtsPath))
	if err != nil {
		t.Fatal(err)
	}
	if want, err := updateDTS(dts, layouts.Records, layouts.Models); err != nil {
		t.Fatal(err)
	} else if string(want) != string(dts) {
		t.Errorf("wasm/xetkit.d.ts is older than shard/internal/layouts: run go generate ./shard")
	}
	if want, err := jsSource(layouts.Records); err != nil {
		t.Fatal(err)
	} else if got, err := os.ReadFile(filepath.Join(shardDir, jsPath)); err != nil {
		t.Fatal(err)
	} else if string(got) != string(want) {
		t.Errorf("wasm/shardcolumns.js is older than shard/internal/layouts: run go generate ./shard")
	}
}

// TestRowColumnsFollowTheTable: the rows a parse ships as columns (terms,
// chunks, chunk lookups) become objects in JavaScript by the generated
// wasm/shardcolumns.js alone: its keys are each record's JSON keys in
// order with its Extra, and its columns the u32 fields (read here from
// the table, not the generator). The hand-written JavaScript around it
// names no u32 field of those records, so a new one needs no edit there.
func TestRowColumnsFollowTheTable(t *testing.T) {
	src, err := os.ReadFile(filepath.Join(shardDir, jsPath))
	if err != nil {
		t.Fatal(err)
	}
	list := func(name string) []string {
		m := regexp.MustCompile(`(?m)^export const ` + name + ` = \[(.*)\];$`).FindSubmatch(src)
		if m == nil {
			t.Errorf("%s: no %s", jsPath, name)
			return nil
		}
		var out []string
		for _, k := range regexp.MustCompile(`"(\w+)"`).FindAllSubmatch(m[1], -1) {
			out = append(out, string(k[1]))
		}
		return out
	}
	var fields []string // u32 fields of the column records, which hand code must not name
	records := 0
	for _, r := range layouts.Records {
		if r.Columns == "" {
			continue
		}
		records++
		var keys, u32 []string
		for _, f := range r.Fields {
			if f.InJSON() {
				keys = append(keys, f.Name)
			}
			if f.InJSON() && f.Kind == layouts.U32 {
				u32 = append(u32, f.Name)
			}
		}
		for _, e := range r.Extra {
			at := slices.Index(keys, e.After)
			if at < 0 {
				t.Fatalf("record %s: extra %s follows no key %s", r.Name, e.Name, e.After)
			}
			keys = slices.Insert(keys, at+1, e.Name)
		}
		fields = append(fields, u32...)
		if got := list(r.Name + "Keys"); !slices.Equal(got, keys) {
			t.Errorf("%s: %sKeys %v, the table %v", jsPath, r.Name, got, keys)
		}
		if got := list(r.Name + "Columns"); !slices.Equal(got, u32) {
			t.Errorf("%s: %sColumns %v, the table %v", jsPath, r.Name, got, u32)
		}
	}
	if records != 3 {
		t.Errorf("%d records have Columns; term, chunk and chunkLookup do", records)
	}
	comments := regexp.MustCompile(`(?s)/\*.*?\*/|//[^\n]*`)
	for _, file := range []string{"wasm/shardrecords.js", "web/chunkrows.js", "wasm/formats/shards.go"} {
		code, err := os.ReadFile(filepath.Join(shardDir, "..", file))
		if err != nil {
			t.Fatal(err)
		}
		code = comments.ReplaceAll(code, nil)
		for _, f := range fields {
			if m := regexp.MustCompile(`\.` + f + `\b|\b` + f + `\s*:|"` + f + `"`).Find(code); m != nil {
				t.Errorf("%s names the u32 field %s (%q): take it from the generated column lists", file, f, m)
			}
		}
	}
}

// TestGeneratorRefuses: tables the generated code could not honour are
// errors.
func TestGeneratorRefuses(t *testing.T) {
	models := []layouts.Model{{Type: "Entry", Doc: "Entry is a test."}}
	u32 := func(name, goName string) layouts.Field {
		return layouts.Field{Name: name, Kind: layouts.U32, Go: goName}
	}
	for _, c := range []struct {
		name    string
		records []layouts.Record
		want    string
	}{
		{"order", []layouts.Record{
			{Var: "aLayout", Name: "a", Model: "Entry", Fields: []layouts.Field{u32("x", "X"), u32("y", "Y")}},
			{Var: "bLayout", Name: "b", Model: "Entry", Fields: []layouts.Field{u32("y", "Y"), u32("x", "X")}},
		}, "comes before"},
		{"type", []layouts.Record{
			{Var: "aLayout", Name: "a", Model: "Entry", Fields: []layouts.Field{u32("x", "X")}},
			{Var: "bLayout", Name: "b", Model: "Entry", Fields: []layouts.Field{{Name: "x", Kind: layouts.U64, Go: "X"}}},
		}, "is uint64 here"},
		{"two docs", []layouts.Record{
			{Var: "aLayout", Name: "a", Model: "Entry", Fields: []layouts.Field{{Name: "x", Kind: layouts.U32, Go: "X", Doc: "one"}}},
			{Var: "bLayout", Name: "b", Model: "Entry", Fields: []layouts.Field{{Name: "x", Kind: layouts.U32, Go: "X", Doc: "two"}}},
		}, "two docs"},
		{"value without a model field", []layouts.Record{
			{Var: "aLayout", Name: "a", Model: "Entry", Fields: []layouts.Field{u32("x", "")}},
		}, "a model field for each"},
		{"reserved with a model field", []layouts.Record{
			{Var: "aLayout", Name: "a", Model: "Entry", Fields: []layouts.Field{u32("x", "X"), {Name: "r", Kind: layouts.Zero, Size: 4, Go: "R"}}},
		}, "a model field for each"},
		{"no struct", []layouts.Record{
			{Var: "aLayout", Name: "a", Model: "xethash.Hash", Fields: []layouts.Field{{Name: "h", Kind: layouts.Hash, Go: "H"}}},
		}, "not a struct of Models"},
		{"two values, no struct", []layouts.Record{
			{Var: "aLayout", Name: "a", Model: "xethash.Hash", Fields: []layouts.Field{{Name: "h", Kind: layouts.Hash}, {Name: "g", Kind: layouts.Hash}}},
		}, "2 values"},
		{"no variable", []layouts.Record{
			{Name: "a", Model: "Entry", Fields: []layouts.Field{u32("x", "X")}},
		}, "no Var"},
	} {
		if _, err := goSource(c.records, models); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want one saying %q", c.name, err, c.want)
		}
	}
	hash := layouts.Field{Name: "h", Kind: layouts.Hash, Go: "H"}
	for _, c := range []struct {
		name   string
		record layouts.Record
		want   string
	}{
		{"u64 column", layouts.Record{Var: "aLayout", Name: "a", Model: "Entry", Columns: "ACols", Fields: []layouts.Field{hash, {Name: "x", Kind: layouts.U64, Go: "X"}}}, "has no column"},
		{"second hash", layouts.Record{Var: "aLayout", Name: "a", Model: "Entry", Columns: "ACols", Fields: []layouts.Field{hash, {Name: "g", Kind: layouts.Hash, Go: "G"}}}, "has no column"},
		{"no hash", layouts.Record{Var: "aLayout", Name: "a", Model: "Entry", Columns: "ACols", Fields: []layouts.Field{u32("x", "X")}}, "needs its hash"},
		{"extra twice", layouts.Record{Var: "aLayout", Name: "a", Model: "Entry", Columns: "ACols", Extra: []layouts.Extra{{Name: "x", After: "h"}}, Fields: []layouts.Field{hash, u32("x", "X")}}, "comes twice"},
		{"extra after nothing", layouts.Record{Var: "aLayout", Name: "a", Model: "Entry", Columns: "ACols", Extra: []layouts.Extra{{Name: "y", After: "z"}}, Fields: []layouts.Field{hash, u32("x", "X")}}, "not a JSON key"},
	} {
		records := []layouts.Record{c.record}
		if _, err := goSource(records, models); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: Go: error %v, want one saying %q", c.name, err, c.want)
		}
		if _, err := jsSource(records); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: JavaScript: error %v, want one saying %q", c.name, err, c.want)
		}
	}

	undocumented := []layouts.Model{{Type: "Entry"}}
	records := []layouts.Record{{Var: "aLayout", Name: "a", Model: "Entry", Fields: []layouts.Field{u32("x", "X")}}}
	if _, err := goSource(records, undocumented); err == nil || !strings.Contains(err.Error(), "no doc") {
		t.Errorf("a model without a doc: error %v", err)
	}

	for _, c := range []struct{ name, dts, want string }{
		{"no region", "interface A {}\n", "no region for record a"},
		{"unknown record", "// <generated from shard layouts: a>\n// </generated>\n// <generated from shard layouts: b>\n// </generated>\n", `region "b": no such record`},
		{"unclosed", "// <generated from shard layouts: a>\n", "has no // </generated>"},
	} {
		if _, err := updateDTS([]byte(c.dts), records, models); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want one saying %q", c.name, err, c.want)
		}
	}
}
