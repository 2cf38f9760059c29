// Package textf formats messages as fmt.Sprintf and fmt.Errorf do, for the
// verbs xetkit's messages use (%d, %s, %q, %v, %x and %w, with the flags #
// and 0 and a width) and the values they print: integers, strings, byte
// slices, booleans, errors and Stringers. It exists for the weight of the
// core WebAssembly module: importing fmt brings its reflection-driven
// printer and os (about 170 KB of gzip), which the format packages that
// module holds (shard, xorb, xethash, formaterr) must do without.
package textf

import "strconv"

// Sprintf formats args by format. A verb it does not know, or a value it
// cannot print with that verb, prints as %!verb(?), as fmt marks a bad verb.
func Sprintf(format string, args ...any) string {
	return string(appendf(nil, format, args))
}

// Errorf returns an error whose message is Sprintf(format, args...). As
// with fmt.Errorf, the operand of a %w verb is the error it wraps (errors.Is
// and errors.As see it); with several %w, all of them.
func Errorf(format string, args ...any) error {
	e := &wrapError{msg: string(appendf(nil, format, args))}
	for i, verb := 0, 0; i < len(format); i++ {
		if format[i] != '%' {
			continue
		}
		j := i + 1
		for j < len(format) && (format[j] == '#' || format[j] == '0' || '1' <= format[j] && format[j] <= '9') {
			j++
		}
		if j < len(format) && format[j] == '%' {
			i = j
			continue
		}
		if j < len(format) && format[j] == 'w' && verb < len(args) {
			if err, ok := args[verb].(error); ok {
				e.wrapped = append(e.wrapped, err)
			}
		}
		verb++
		i = j
	}
	return e
}

type wrapError struct {
	msg     string
	wrapped []error
}

func (e *wrapError) Error() string   { return e.msg }
func (e *wrapError) Unwrap() []error { return e.wrapped }

// appendf appends format with args to dst.
func appendf(dst []byte, format string, args []any) []byte {
	next := 0
	for i := 0; i < len(format); i++ {
		c := format[i]
		if c != '%' || i+1 == len(format) {
			dst = append(dst, c)
			continue
		}
		i++
		var sharp, zero bool
		for ; i < len(format) && (format[i] == '#' || format[i] == '0'); i++ {
			sharp = sharp || format[i] == '#'
			zero = zero || format[i] == '0'
		}
		width := 0
		for ; i < len(format) && '0' <= format[i] && format[i] <= '9'; i++ {
			width = 10*width + int(format[i]-'0')
		}
		if i == len(format) {
			return append(dst, "%!(NOVERB)"...)
		}
		verb := format[i]
		if verb == '%' {
			dst = append(dst, '%')
			continue
		}
		if next >= len(args) {
			dst = append(dst, '%', '!', verb, '(', 'M', 'I', 'S', 'S', 'I', 'N', 'G', ')')
			continue
		}
		arg := args[next]
		next++
		start := len(dst)
		var ok bool
		dst, ok = appendValue(dst, verb, sharp, arg)
		if !ok {
			dst = append(dst[:start], '%', '!', verb, '(', '?', ')')
			continue
		}
		n := len(dst) - start
		if zero && sharp && verb == 'x' {
			n -= 2 // as in fmt, a zero-padded width counts the digits after 0x
		}
		if n < width {
			dst = pad(dst, start, width-n, zero)
		}
	}
	return dst
}

// pad inserts n bytes of padding before the value that starts at dst[start]:
// spaces, or zeros after its sign or 0x, as fmt pads.
func pad(dst []byte, start, n int, zero bool) []byte {
	at, fill := start, byte(' ')
	if zero {
		fill = '0'
		if at < len(dst) && dst[at] == '-' {
			at++
		}
		if at+1 < len(dst) && dst[at] == '0' && dst[at+1] == 'x' {
			at += 2
		}
	}
	dst = append(dst, make([]byte, n)...)
	copy(dst[at+n:], dst[at:len(dst)-n])
	for k := at; k < at+n; k++ {
		dst[k] = fill
	}
	return dst
}

// appendValue appends one value by verb; ok is false when the verb does not
// apply to it.
func appendValue(dst []byte, verb byte, sharp bool, arg any) ([]byte, bool) {
	if u, neg, isInt := integer(arg); isInt {
		switch verb {
		case 'd', 'v':
			if neg {
				dst = append(dst, '-')
			}
			return strconv.AppendUint(dst, u, 10), true
		case 'x':
			if neg {
				dst = append(dst, '-')
			}
			if sharp {
				dst = append(dst, "0x"...)
			}
			return strconv.AppendUint(dst, u, 16), true
		}
		return dst, false
	}
	var s string
	switch v := arg.(type) {
	case string:
		s = v
	case []byte:
		if verb == 'x' {
			const digits = "0123456789abcdef"
			for _, b := range v {
				dst = append(dst, digits[b>>4], digits[b&15])
			}
			return dst, true
		}
		s = string(v)
	case bool:
		if verb != 'v' && verb != 't' {
			return dst, false
		}
		return strconv.AppendBool(dst, v), true
	case error:
		if v == nil {
			s = "<nil>"
		} else {
			s = v.Error()
		}
	case interface{ String() string }:
		s = v.String()
	case []string:
		if verb != 'v' {
			return dst, false
		}
		dst = append(dst, '[')
		for i, e := range v {
			if i > 0 {
				dst = append(dst, ' ')
			}
			dst = append(dst, e...)
		}
		return append(dst, ']'), true
	case nil:
		if verb != 'v' {
			return dst, false
		}
		return append(dst, "<nil>"...), true
	default:
		return dst, false
	}
	switch verb {
	case 's', 'v', 'w':
		return append(dst, s...), true
	case 'q':
		return strconv.AppendQuote(dst, s), true
	}
	return dst, false
}

// integer returns an integer argument's magnitude and sign.
func integer(arg any) (u uint64, neg, ok bool) {
	var i int64
	switch v := arg.(type) {
	case int:
		i = int64(v)
	case int8:
		i = int64(v)
	case int16:
		i = int64(v)
	case int32:
		i = int64(v)
	case int64:
		i = v
	case uint:
		return uint64(v), false, true
	case uint8:
		return uint64(v), false, true
	case uint16:
		return uint64(v), false, true
	case uint32:
		return uint64(v), false, true
	case uint64:
		return v, false, true
	case uintptr:
		return uint64(v), false, true
	default:
		return 0, false, false
	}
	if i < 0 {
		return uint64(-i), true, true
	}
	return uint64(i), false, true
}
