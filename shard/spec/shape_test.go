package spec

import (
	"encoding/json"
	"os"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/xetkit/xetkit/shard"
	"github.com/xetkit/xetkit/xethash"
)

// The JSON shapes of shards and their TypeScript types: Spec's json tags
// declare the ShardSpec (which Parse's key tables must match), the layout
// tables of package shard the ParsedShard that shard.AppendJSON writes.
// These tests check the key tables, and the TypeScript types of
// wasm/xetkit.d.ts against the Go types and against the JSON itself, key
// by key, both ways.

// jsonFields returns the JSON keys of struct t with their Go fields.
func jsonFields(t reflect.Type) map[string]reflect.StructField {
	out := map[string]reflect.StructField{}
	for i := range t.NumField() {
		f := t.Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name == "" || name == "-" {
			continue
		}
		out[name] = f
	}
	return out
}

func omitempty(f reflect.StructField) bool {
	return strings.Contains(f.Tag.Get("json"), ",omitempty")
}

var hashType = reflect.TypeOf(xethash.Hash{})

// TestKeysMatchSpec: the keys Parse knows for each object are the keys of
// its Go type's JSON and back; null is allowed where the Go field is a
// pointer or a slice; a required key is never one Go may leave out.
func TestKeysMatchSpec(t *testing.T) {
	for _, c := range []struct {
		keys []member
		typ  reflect.Type
	}{
		{specKeys, reflect.TypeOf(Spec{})}, {fileKeys, reflect.TypeOf(File{})}, {termKeys, reflect.TypeOf(Term{})},
		{xorbKeys, reflect.TypeOf(Xorb{})}, {chunkKeys, reflect.TypeOf(Chunk{})}, {footerKeys, reflect.TypeOf(Footer{})},
	} {
		fields := jsonFields(c.typ)
		for _, m := range c.keys {
			f, ok := fields[m.name]
			if !ok {
				t.Errorf("%s: Parse knows %q, the Go type has no such key", c.typ, m.name)
				continue
			}
			delete(fields, m.name)
			k := f.Type.Kind()
			if nullable := k == reflect.Pointer || k == reflect.Slice; m.nullable != nullable {
				t.Errorf("%s.%s: nullable %v in Parse, Go type %s", c.typ, m.name, m.nullable, f.Type)
			}
			if m.required && (k == reflect.Pointer || omitempty(f)) {
				t.Errorf("%s.%s: required in Parse, optional in Go (%s)", c.typ, m.name, f.Tag)
			}
		}
		for name := range fields {
			t.Errorf("%s.%s: in the Go type, unknown to Parse", c.typ, name)
		}
	}
}

// TestTypeScriptMatchesGo: the d.ts interfaces ShardSpec and FieldSpan
// (with every interface and inline object type they reach) have exactly
// the keys of Spec and shard.Field; a key TypeScript marks optional ("?") Go
// may leave out (omitempty or a pointer); one Go leaves out when empty is
// optional; "| null" stands where Go has a pointer or a slice, and where Go
// writes a nil pointer as null; and numbers,
// strings and booleans are where Go has them.
func TestTypeScriptMatchesGo(t *testing.T) {
	src, err := os.ReadFile("../../wasm/xetkit.d.ts")
	if err != nil {
		t.Fatal(err)
	}
	ts := stripComments(string(src))
	for _, c := range []struct {
		iface string
		typ   reflect.Type
	}{{"ShardSpec", reflect.TypeOf(Spec{})}, {"FieldSpan", reflect.TypeOf(shard.Field{})}} {
		body, ok := tsInterface(ts, c.iface)
		if !ok {
			t.Fatalf("no interface %s in xetkit.d.ts", c.iface)
		}
		compareTS(t, ts, c.iface, "{"+body+"}", c.typ)
	}
}

func compareTS(t *testing.T, ts, path, tsType string, typ reflect.Type) {
	tsType = strings.TrimSpace(tsType)
	nullable := strings.HasSuffix(tsType, "| null")
	tsType = strings.TrimSpace(strings.TrimSuffix(tsType, "| null"))
	k := typ.Kind()
	if nullable && k != reflect.Pointer && k != reflect.Slice {
		t.Errorf("%s: %q is nullable, Go %s is not", path, tsType, typ)
	}
	for typ.Kind() == reflect.Pointer {
		typ = typ.Elem()
	}
	if strings.HasSuffix(tsType, "[]") {
		if typ.Kind() != reflect.Slice {
			t.Errorf("%s: TypeScript array, Go %s", path, typ)
			return
		}
		compareTS(t, ts, path+"[]", strings.TrimSuffix(tsType, "[]"), typ.Elem())
		return
	}
	if body, ok := tsInterface(ts, tsType); ok {
		tsType = "{" + body + "}"
	}
	switch {
	case strings.HasPrefix(tsType, "{"):
		if typ.Kind() != reflect.Struct {
			t.Errorf("%s: TypeScript object, Go %s", path, typ)
			return
		}
		fields := jsonFields(typ)
		for _, m := range tsMembers(tsType[1 : len(tsType)-1]) {
			f, ok := fields[m.name]
			if !ok {
				t.Errorf("%s.%s: in xetkit.d.ts, not in Go's %s", path, m.name, typ)
				continue
			}
			delete(fields, m.name)
			if m.optional && !omitempty(f) && f.Type.Kind() != reflect.Pointer {
				t.Errorf("%s.%s: optional in xetkit.d.ts, always present in Go (%s)", path, m.name, f.Tag)
			}
			if omitempty(f) && !m.optional {
				t.Errorf("%s.%s: Go leaves it out when empty, xetkit.d.ts does not mark it optional", path, m.name)
			}
			if f.Type.Kind() == reflect.Pointer && !omitempty(f) && !m.optional && !strings.HasSuffix(m.typ, "| null") {
				t.Errorf("%s.%s: Go writes null for it, xetkit.d.ts allows no null", path, m.name)
			}
			compareTS(t, ts, path+"."+m.name, m.typ, f.Type)
		}
		for name := range fields {
			t.Errorf("%s.%s: in Go's %s, not in xetkit.d.ts", path, name, typ)
		}
	case tsType == "number":
		if k := typ.Kind(); k < reflect.Int || k > reflect.Float64 {
			t.Errorf("%s: TypeScript number, Go %s", path, typ)
		}
	case tsType == "boolean":
		if typ.Kind() != reflect.Bool {
			t.Errorf("%s: TypeScript boolean, Go %s", path, typ)
		}
	case tsType == "string" || strings.HasPrefix(tsType, `"`):
		if typ.Kind() != reflect.String && typ != hashType {
			t.Errorf("%s: TypeScript string, Go %s", path, typ)
		}
	default:
		t.Errorf("%s: TypeScript type %q is not understood by this test", path, tsType)
	}
}

var commentRE = regexp.MustCompile(`(?s)/\*.*?\*/|//[^\n]*`)

func stripComments(s string) string { return commentRE.ReplaceAllString(s, "") }

// tsInterface returns the body of "export interface name {…}".
func tsInterface(ts, name string) (string, bool) {
	i := strings.Index(ts, "export interface "+name+" {")
	if i < 0 {
		return "", false
	}
	open := i + len("export interface "+name+" ")
	depth := 0
	for j := open; j < len(ts); j++ {
		switch ts[j] {
		case '{':
			depth++
		case '}':
			if depth--; depth == 0 {
				return ts[open+1 : j], true
			}
		}
	}
	return "", false
}

type tsMember struct {
	name     string
	optional bool
	typ      string
}

// tsMembers splits an object type's body into its members.
func tsMembers(body string) []tsMember {
	var out []tsMember
	depth, start := 0, 0
	flush := func(end int) {
		m := strings.TrimSpace(body[start:end])
		start = end + 1
		name, typ, ok := strings.Cut(m, ":")
		if !ok {
			return
		}
		name = strings.TrimSpace(name)
		out = append(out, tsMember{name: strings.TrimSuffix(name, "?"), optional: strings.HasSuffix(name, "?"), typ: strings.TrimSpace(typ)})
	}
	for j := range len(body) {
		switch body[j] {
		case '{', '(', '<':
			depth++
		case '}', ')', '>':
			depth--
		case ';', '\n':
			if depth == 0 {
				flush(j)
			}
		}
	}
	flush(len(body))
	return slices.DeleteFunc(out, func(m tsMember) bool { return m.name == "" })
}

// TestTypeScriptMatchesJSON: the d.ts interface ParsedShard (with what it
// reaches) has exactly the keys of the JSON shard.AppendJSON writes, of
// the right types, on a stored shard with every part present.
func TestTypeScriptMatchesJSON(t *testing.T) {
	src, err := os.ReadFile("../../wasm/xetkit.d.ts")
	if err != nil {
		t.Fatal(err)
	}
	ts := stripComments(string(src))
	x := xethash.MustParse(strings.Repeat("1", 64))
	sum := xethash.MustParse(strings.Repeat("2", 64))
	sp := &Spec{
		Files:  []File{{SHA256: &sum, Verification: true, Terms: []Term{{Xorb: x, ChunkStart: 0, ChunkEnd: 1}}}},
		Xorbs:  []Xorb{{Hash: &x, Chunks: []Chunk{{Hash: sum, UnpackedBytes: 5}}}},
		Footer: &Footer{LookupTables: true},
	}
	b, err := Build(sp)
	if err != nil {
		t.Fatal(err)
	}
	s, err := shard.Parse(b)
	if err != nil {
		t.Fatal(err)
	}
	var v any
	if err := json.Unmarshal(shard.AppendJSON(nil, s, []shard.Finding{{Severity: shard.Info, Rule: "r", Message: "m"}}, true), &v); err != nil {
		t.Fatal(err)
	}
	body, ok := tsInterface(ts, "ParsedShard")
	if !ok {
		t.Fatal("no interface ParsedShard in xetkit.d.ts")
	}
	compareJSON(t, ts, "ParsedShard", "{"+body+"}", v)
}

// compareJSON checks the JSON value v against the TypeScript type tsType.
func compareJSON(t *testing.T, ts, path, tsType string, v any) {
	tsType = strings.TrimSpace(tsType)
	nullable := strings.HasSuffix(tsType, "| null")
	tsType = strings.TrimSpace(strings.TrimSuffix(tsType, "| null"))
	if v == nil {
		if !nullable {
			t.Errorf("%s: JSON null, TypeScript %q allows none", path, tsType)
		}
		return
	}
	if strings.HasSuffix(tsType, "[]") {
		a, ok := v.([]any)
		if !ok {
			t.Errorf("%s: TypeScript array, JSON %T", path, v)
			return
		}
		if len(a) == 0 {
			t.Errorf("%s: an empty array checks nothing; the test shard should fill it", path)
		}
		for i, e := range a {
			compareJSON(t, ts, path+"["+string(rune('0'+i%10))+"]", strings.TrimSuffix(tsType, "[]"), e)
		}
		return
	}
	if body, ok := tsInterface(ts, tsType); ok {
		tsType = "{" + body + "}"
	}
	switch {
	case strings.HasPrefix(tsType, "{"):
		obj, ok := v.(map[string]any)
		if !ok {
			t.Errorf("%s: TypeScript object, JSON %T", path, v)
			return
		}
		for _, m := range tsMembers(tsType[1 : len(tsType)-1]) {
			e, ok := obj[m.name]
			if !ok {
				if !m.optional {
					t.Errorf("%s.%s: in xetkit.d.ts, not in the JSON", path, m.name)
				}
				continue
			}
			delete(obj, m.name)
			compareJSON(t, ts, path+"."+m.name, m.typ, e)
		}
		for name := range obj {
			t.Errorf("%s.%s: in the JSON, not in xetkit.d.ts", path, name)
		}
	case tsType == "number":
		if _, ok := v.(float64); !ok {
			t.Errorf("%s: TypeScript number, JSON %T", path, v)
		}
	case tsType == "boolean":
		if _, ok := v.(bool); !ok {
			t.Errorf("%s: TypeScript boolean, JSON %T", path, v)
		}
	case tsType == "string" || strings.HasPrefix(tsType, `"`):
		if _, ok := v.(string); !ok {
			t.Errorf("%s: TypeScript string, JSON %T", path, v)
		}
	default:
		t.Errorf("%s: TypeScript type %q is not understood by this test", path, tsType)
	}
}
