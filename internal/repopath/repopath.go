// Package repopath holds the one rule, shared by the Hub client and the
// local Hub, for what a path inside a repository may be.
package repopath

import (
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"
)

// MaxLen is the longest path, in bytes, a repository holds.
const MaxLen = 1024

// Check refuses a path in a repository that a Hub refuses: empty, longer
// than MaxLen, not UTF-8, starting or ending with '/', with empty, "." or
// ".." segments, a backslash, a control character, an invisible or
// direction-changing character (which make two different paths look the
// same), or a segment that names .git in any case or with trailing dots
// or spaces (which some file systems drop).
func Check(p string) error {
	switch {
	case p == "":
		return errors.New("empty path")
	case len(p) > MaxLen:
		return fmt.Errorf("path of %d bytes is longer than %d", len(p), MaxLen)
	case !utf8.ValidString(p):
		return fmt.Errorf("path %q is not valid UTF-8", p)
	case strings.HasPrefix(p, "/"):
		return fmt.Errorf("path %q starts with '/': paths are relative to the repository root", p)
	case strings.HasSuffix(p, "/"):
		return fmt.Errorf("path %q ends with '/': a file path names a file, not a folder", p)
	case strings.ContainsRune(p, '\\'):
		return fmt.Errorf("path %q contains a backslash", p)
	}
	for _, r := range p {
		if what := refusedRune(r); what != "" {
			return fmt.Errorf("path %q contains %s (U+%04X)", p, what, r)
		}
	}
	for _, seg := range strings.Split(p, "/") {
		switch seg {
		case "":
			return fmt.Errorf("path %q has an empty segment", p)
		case ".", "..":
			return fmt.Errorf("path %q has a %q segment", p, seg)
		}
		if strings.EqualFold(strings.TrimRight(seg, ". "), ".git") {
			return fmt.Errorf("path %q has a segment %q: .git is reserved, in any case", p, seg)
		}
	}
	return nil
}

// refusedRune names why r may not appear in a path, or returns "".
func refusedRune(r rune) string {
	switch {
	case r < 0x20 || r == 0x7f || (r >= 0x80 && r <= 0x9f):
		return "a control character"
	case r == 0x061c || r == 0x200e || r == 0x200f || (r >= 0x202a && r <= 0x202e) || (r >= 0x2066 && r <= 0x2069):
		return "a bidirectional formatting character"
	case (r >= 0x200b && r <= 0x200d) || (r >= 0x2060 && r <= 0x2064) || r == 0xfeff || r == 0x00ad || r == 0x180e:
		return "an invisible character"
	}
	return ""
}
