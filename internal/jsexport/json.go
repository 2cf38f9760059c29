//go:build js && wasm

package jsexport

import (
	"errors"
	"strconv"
	"strings"
	"unicode/utf8"
)

// The declaration is JSON; it is read here rather than with encoding/json,
// whose weight the core module does without. decodeJSON reads JSON values into
// map[string]any, []any, string, bool or nil; the
// declaration is the module's own file (strings, arrays, objects and
// booleans only), so its errors need say no more than where.

type jsonReader struct {
	b []byte
	i int
}

var errJSON = errors.New("jsexport: bad JSON in the declaration")

func decodeJSON(b []byte) (any, error) {
	r := &jsonReader{b: b}
	v, err := r.value()
	if err == nil {
		if r.space(); r.i != len(r.b) {
			err = errJSON
		}
	}
	if err != nil {
		return nil, errors.New(err.Error() + " at byte " + strconv.Itoa(r.i))
	}
	return v, nil
}

func (r *jsonReader) space() {
	for r.i < len(r.b) && strings.IndexByte(" \t\r\n", r.b[r.i]) >= 0 {
		r.i++
	}
}

func (r *jsonReader) value() (any, error) {
	r.space()
	if r.i == len(r.b) {
		return nil, errJSON
	}
	switch c := r.b[r.i]; {
	case c == '{':
		r.i++
		m := map[string]any{}
		for first := true; ; first = false {
			if r.space(); r.i < len(r.b) && r.b[r.i] == '}' && first {
				r.i++
				return m, nil
			}
			r.space()
			k, err := r.str()
			if err != nil {
				return nil, err
			}
			if r.space(); r.i == len(r.b) || r.b[r.i] != ':' {
				return nil, errJSON
			}
			r.i++
			if m[k], err = r.value(); err != nil {
				return nil, err
			}
			if r.space(); r.i < len(r.b) && r.b[r.i] == ',' {
				r.i++
				continue
			}
			if r.i < len(r.b) && r.b[r.i] == '}' {
				r.i++
				return m, nil
			}
			return nil, errJSON
		}
	case c == '[':
		r.i++
		a := []any{}
		for first := true; ; first = false {
			if r.space(); r.i < len(r.b) && r.b[r.i] == ']' && first {
				r.i++
				return a, nil
			}
			v, err := r.value()
			if err != nil {
				return nil, err
			}
			a = append(a, v)
			if r.space(); r.i < len(r.b) && r.b[r.i] == ',' {
				r.i++
				continue
			}
			if r.i < len(r.b) && r.b[r.i] == ']' {
				r.i++
				return a, nil
			}
			return nil, errJSON
		}
	case c == '"':
		return r.str()
	case strings.HasPrefix(string(r.b[r.i:]), "true"):
		r.i += 4
		return true, nil
	case strings.HasPrefix(string(r.b[r.i:]), "false"):
		r.i += 5
		return false, nil
	case strings.HasPrefix(string(r.b[r.i:]), "null"):
		r.i += 4
		return nil, nil
	}
	return nil, errJSON // the declaration has no numbers
}

func (r *jsonReader) str() (string, error) {
	if r.i == len(r.b) || r.b[r.i] != '"' {
		return "", errJSON
	}
	r.i++
	var out []byte
	for r.i < len(r.b) {
		c := r.b[r.i]
		r.i++
		switch {
		case c == '"':
			return string(out), nil
		case c == '\\':
			if r.i == len(r.b) {
				return "", errJSON
			}
			e := r.b[r.i]
			r.i++
			if k := strings.IndexByte(`"\/bfnrt`, e); k >= 0 {
				out = append(out, "\"\\/\b\f\n\r\t"[k])
				continue
			}
			if e != 'u' || r.i+4 > len(r.b) {
				return "", errJSON
			}
			v, err := strconv.ParseUint(string(r.b[r.i:r.i+4]), 16, 32)
			if err != nil {
				return "", errJSON
			}
			r.i += 4
			out = utf8.AppendRune(out, rune(v))
		default:
			out = append(out, c)
		}
	}
	return "", errJSON
}
