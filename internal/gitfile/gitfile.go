// Package gitfile is the Hub's rule for which files it keeps in git
// itself (regular files, committed inline) rather than in LFS or Xet: the
// hub applies it to preuploads and pushes, and the upload pipeline uses it
// to tell which files of a commit will not need their chunks stored.
package gitfile

import (
	"bytes"
	"unicode/utf8"
)

// Limit: a regular file is smaller than this (as on the Hugging Face Hub).
const Limit = 10 << 20

// Regular reports whether a file of size bytes whose first bytes are
// sample is kept as a regular file: smaller than Limit, and text.
func Regular(size int64, sample []byte) bool { return size < Limit && !binary(sample) }

// binary judges a file by its first bytes, as git does (a NUL byte) and
// more strictly: text must be UTF-8 (a character cut at the end of the
// sample aside).
func binary(sample []byte) bool {
	if bytes.IndexByte(sample, 0) >= 0 {
		return true
	}
	for cut := 0; cut < utf8.UTFMax && len(sample) > 0; cut++ {
		if utf8.Valid(sample) {
			return false
		}
		sample = sample[:len(sample)-1]
	}
	return !utf8.Valid(sample)
}
