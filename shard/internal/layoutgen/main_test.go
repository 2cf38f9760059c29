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

// TestGeneratedIsCurrent: layout_gen.go and the generated regions of
// wasm/xetkit.d.ts are what the table gives (go generate ./shard writes
// them).
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
}

// TestRowColumnsCarryEveryField: the rows a parse ships as columns
// (terms, chunks, chunk lookups; wasm/formats/shards.go) are made into
// objects by hand in JavaScript, which knows no layout. Each object must
// have exactly its record's JSON keys, so a new field of those records
// fails here until the columns carry it too.
func TestRowColumnsCarryEveryField(t *testing.T) {
	jsonKeys := func(record string, extra ...string) []string {
		var keys []string
		for _, f := range layouts.Find(record).Fields {
			if f.InJSON() {
				keys = append(keys, f.Name)
			}
		}
		return append(keys, extra...)
	}
	var chunkColumns []string
	for _, f := range layouts.Find("chunk").Fields {
		if f.InJSON() && f.Kind == layouts.U32 {
			chunkColumns = append(chunkColumns, f.Name)
		}
	}
	objectKeys := regexp.MustCompile(`(\w+):`)
	listKeys := regexp.MustCompile(`"(\w+)"`)
	for _, c := range []struct {
		file, what, pattern string
		keys                *regexp.Regexp
		want                []string
	}{
		{"wasm/shardrecords.js", "term objects", `entries\[j\] = \{([^;]*)\};`, objectKeys, jsonKeys("term")},
		{"wasm/shardrecords.js", "chunk objects", `chunks\[j\] = \{([^;]*)\};`, objectKeys, jsonKeys("chunk")},
		{"wasm/shardrecords.js", "chunk lookup objects", `out\[i\] = \{([^;]*)\};`, objectKeys, jsonKeys("chunkLookup", "xorb")},
		{"wasm/shardrecords.js", "packed chunk columns", `columns = \{([^;]*)\};`, objectKeys, append([]string{"hashes"}, chunkColumns...)},
		{"wasm/shardrecords.js", "packed chunk column names", `for \(const name of \[("hashes"[^\]]*)\]\)`, listKeys, append([]string{"hashes"}, chunkColumns...)},
		{"web/chunkrows.js", "chunk objects of packed rows", `return \{ (hash: rowHash[^;]*)\};`, objectKeys, jsonKeys("chunk")},
	} {
		src, err := os.ReadFile(filepath.Join(shardDir, "..", c.file))
		if err != nil {
			t.Fatal(err)
		}
		m := regexp.MustCompile(c.pattern).FindSubmatch(src)
		if m == nil {
			t.Errorf("%s: no %s (%s): this test needs to learn where they are made now", c.file, c.what, c.pattern)
			continue
		}
		var got []string
		for _, k := range c.keys.FindAllSubmatch(m[1], -1) {
			got = append(got, string(k[1]))
		}
		slices.Sort(got)
		want := slices.Sorted(slices.Values(c.want))
		if !slices.Equal(got, want) {
			t.Errorf("%s: the %s have %v, the layouts give %v: carry a new field in the columns (wasm/formats/shards.go) and here", c.file, c.what, got, want)
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
