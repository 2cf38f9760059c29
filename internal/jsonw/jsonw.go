// Package jsonw writes JSON as encoding/json's Marshal does for the shapes
// xetkit's results have: structs (by their json tags, with omitempty and
// "-"), pointers, slices, strings, booleans, integers and values that are
// encoding.TextMarshalers (hashes). It exists for the weight of the core
// WebAssembly module, which does without encoding/json; natively and in
// the full module the same writer serves, so both give the same bytes.
package jsonw

import (
	"encoding"
	"reflect"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Marshal returns the JSON of v. A value of a kind it does not write (a
// map, a channel, a function, a float) panics: results are declared
// types, so that is a bug.
func Marshal(v any) []byte { return appendValue(nil, reflect.ValueOf(v)) }

var textMarshaler = reflect.TypeFor[encoding.TextMarshaler]()

func appendValue(b []byte, v reflect.Value) []byte {
	if !v.IsValid() {
		return append(b, "null"...)
	}
	if v.Type().Implements(textMarshaler) && (v.Kind() != reflect.Pointer || !v.IsNil()) {
		t, err := v.Interface().(encoding.TextMarshaler).MarshalText()
		if err != nil {
			panic("jsonw: " + err.Error())
		}
		return AppendString(b, string(t))
	}
	switch v.Kind() {
	case reflect.Pointer, reflect.Interface:
		if v.IsNil() {
			return append(b, "null"...)
		}
		return appendValue(b, v.Elem())
	case reflect.Struct:
		b = append(b, '{')
		first := true
		t := v.Type()
		for i := range t.NumField() {
			f := t.Field(i)
			name, opts, _ := strings.Cut(f.Tag.Get("json"), ",")
			if !f.IsExported() || name == "-" {
				continue
			}
			if name == "" {
				name = f.Name
			}
			fv := v.Field(i)
			if opts == "omitempty" && fv.IsZero() && fv.Kind() != reflect.Struct {
				continue
			}
			if !first {
				b = append(b, ',')
			}
			first = false
			b = AppendString(b, name)
			b = append(b, ':')
			b = appendValue(b, fv)
		}
		return append(b, '}')
	case reflect.Slice, reflect.Array:
		if v.Kind() == reflect.Slice && v.IsNil() {
			return append(b, "null"...)
		}
		b = append(b, '[')
		for i := range v.Len() {
			if i > 0 {
				b = append(b, ',')
			}
			b = appendValue(b, v.Index(i))
		}
		return append(b, ']')
	case reflect.String:
		return AppendString(b, v.String())
	case reflect.Bool:
		return strconv.AppendBool(b, v.Bool())
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return strconv.AppendInt(b, v.Int(), 10)
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		return strconv.AppendUint(b, v.Uint(), 10)
	}
	panic("jsonw: cannot write a " + v.Type().String())
}

// AppendString appends s as a JSON string, as encoding/json writes one:
// invalid UTF-8 as U+FFFD, control characters and <, >, & escaped, U+2028
// and U+2029 too.
func AppendString(b []byte, s string) []byte {
	const hex = "0123456789abcdef"
	b = append(b, '"')
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			switch {
			case c == '"' || c == '\\':
				b = append(b, '\\', c)
			case c == '\n':
				b = append(b, '\\', 'n')
			case c == '\r':
				b = append(b, '\\', 'r')
			case c == '\t':
				b = append(b, '\\', 't')
			case c < 0x20 || c == '<' || c == '>' || c == '&':
				b = append(b, '\\', 'u', '0', '0', hex[c>>4], hex[c&15])
			default:
				b = append(b, c)
			}
			i++
			continue
		}
		r, n := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && n == 1:
			b = append(b, `\ufffd`...)
		case r == '\u2028' || r == '\u2029':
			b = append(b, '\\', 'u', '2', '0', '2', hex[r&15])
		default:
			b = append(b, s[i:i+n]...)
		}
		i += n
	}
	return append(b, '"')
}
