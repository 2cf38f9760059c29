package shard

import (
	"os"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/xetkit/xetkit/xethash"
)

// The shard's JSON shapes are declared once, by the Go types' json tags:
// Parsed (whose JSON AppendParsedJSON writes; read_test.go checks it
// against encoding/json) and Spec. These tests check the hand-written
// schema ParseSpec walks and the TypeScript types of wasm/xetkit.d.ts
// against them, key by key, both ways.

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

// TestSpecSchemaMatchesSpec: every key of the schema is a key of Spec's
// JSON and back; null is allowed where the Go field is a pointer or a
// slice; a required key is never one Go may leave out; and the kinds agree.
func TestSpecSchemaMatchesSpec(t *testing.T) {
	var walk func(path string, n *specNode, typ reflect.Type)
	walk = func(path string, n *specNode, typ reflect.Type) {
		for typ.Kind() == reflect.Pointer {
			typ = typ.Elem()
		}
		switch n.kind {
		case kObject:
			if typ.Kind() != reflect.Struct {
				t.Errorf("%s: schema object, Go %s", path, typ)
				return
			}
			fields := jsonFields(typ)
			for _, sf := range n.fields {
				f, ok := fields[sf.name]
				if !ok {
					t.Errorf("%s.%s: in the schema, not in %s", path, sf.name, typ)
					continue
				}
				delete(fields, sf.name)
				k := f.Type.Kind()
				if nullable := k == reflect.Pointer || k == reflect.Slice; sf.nullable != nullable {
					t.Errorf("%s.%s: schema nullable %v, Go type %s", path, sf.name, sf.nullable, f.Type)
				}
				if sf.required && (k == reflect.Pointer || omitempty(f)) {
					t.Errorf("%s.%s: required in the schema, optional in Go (%s)", path, sf.name, f.Tag)
				}
				walk(path+"."+sf.name, sf.node, f.Type)
			}
			for name := range fields {
				t.Errorf("%s.%s: in %s, not in the schema", path, name, typ)
			}
		case kArray:
			if typ.Kind() != reflect.Slice {
				t.Errorf("%s: schema array, Go %s", path, typ)
				return
			}
			walk(path+"[]", n.elem, typ.Elem())
		case kHash, kDigest:
			if typ != hashType {
				t.Errorf("%s: schema hash, Go %s", path, typ)
			}
		case kU32, kU64:
			if want := map[specKind]reflect.Kind{kU32: reflect.Uint32, kU64: reflect.Uint64}[n.kind]; typ.Kind() != want {
				t.Errorf("%s: schema %s, Go %s", path, kindNames[n.kind], typ)
			}
		case kBool:
			if typ.Kind() != reflect.Bool {
				t.Errorf("%s: schema boolean, Go %s", path, typ)
			}
		case kString:
			if typ.Kind() != reflect.String {
				t.Errorf("%s: schema string, Go %s", path, typ)
			}
		}
	}
	walk("spec", specSchema, reflect.TypeOf(Spec{}))
}

// TestTypeScriptMatchesGo: the d.ts interfaces ShardSpec, ParsedShard and
// FieldSpan (with every interface and inline object type they reach) have
// exactly the keys of Spec, Parsed and Field; a key TypeScript marks optional ("?") Go
// may leave out (omitempty or a pointer); one Go leaves out when empty is
// optional; "| null" stands where Go has a pointer or a slice, and where Go
// writes a nil pointer as null; and numbers,
// strings and booleans are where Go has them.
func TestTypeScriptMatchesGo(t *testing.T) {
	src, err := os.ReadFile("../wasm/xetkit.d.ts")
	if err != nil {
		t.Fatal(err)
	}
	ts := stripComments(string(src))
	for _, c := range []struct {
		iface string
		typ   reflect.Type
	}{{"ShardSpec", reflect.TypeOf(Spec{})}, {"ParsedShard", reflect.TypeOf(Parsed{})}, {"FieldSpan", reflect.TypeOf(Field{})}} {
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
