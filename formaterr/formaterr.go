// Package formaterr is the error type of every binary-format reader in
// xetkit: it names the format, what is wrong, and the byte offset where it
// was found, so the CLI, the JavaScript API and the viewer can all point at
// the bad byte.
package formaterr

import "github.com/xetkit/xetkit/internal/textf"

// Error is a problem found in serialized data at a known byte offset.
type Error struct {
	Format string // "xorb", "shard", "chunks list", ...
	Offset int64  // byte offset from the start of the input
	Msg    string // what is wrong, without the offset
	Err    error  // optional cause
}

// Error formats the error as "<format>: <problem> at byte offset <n>".
func (e *Error) Error() string {
	s := textf.Sprintf("%s: %s at byte offset %d", e.Format, e.Msg, e.Offset)
	if e.Err != nil {
		s += ": " + e.Err.Error()
	}
	return s
}

// Unwrap returns the cause, if any.
func (e *Error) Unwrap() error { return e.Err }

// New returns an *Error with a formatted message.
func New(format string, offset int64, msg string, args ...any) *Error {
	return &Error{Format: format, Offset: offset, Msg: textf.Sprintf(msg, args...)}
}

// Wrap returns an *Error whose cause is err.
func Wrap(format string, offset int64, err error, msg string, args ...any) *Error {
	return &Error{Format: format, Offset: offset, Msg: textf.Sprintf(msg, args...), Err: err}
}

// Offset returns the byte offset of the first *Error in err's chain.
func Offset(err error) (int64, bool) {
	if fe := Find(err); fe != nil {
		return fe.Offset, true
	}
	return 0, false
}

// Find returns the first *Error in err's chain (errors.As's order), or
// nil. It walks the chain itself: errors.As brings internal/reflectlite
// into the core WebAssembly module.
func Find(err error) *Error {
	for err != nil {
		switch e := err.(type) {
		case *Error:
			return e
		case interface{ Unwrap() error }:
			err = e.Unwrap()
		case interface{ Unwrap() []error }:
			for _, w := range e.Unwrap() {
				if fe := Find(w); fe != nil {
					return fe
				}
			}
			return nil
		default:
			return nil
		}
	}
	return nil
}
