// Package repopath holds the one rule, shared by the Hub client and the
// local Hub, for what a path inside a repository may be.
package repopath

import (
	"errors"
	"fmt"
	"strings"
)

// Check refuses a path in a repository that is empty, starts with
// '/', has empty, "." or ".." segments, a backslash or a control character,
// or lies inside .git: what a Hub refuses too.
func Check(p string) error {
	switch {
	case p == "":
		return errors.New("empty path")
	case len(p) > 1024:
		return fmt.Errorf("path of %d bytes is longer than 1024", len(p))
	case strings.HasPrefix(p, "/"):
		return fmt.Errorf("path %q starts with '/': paths are relative to the repository root", p)
	case strings.ContainsRune(p, '\\'):
		return fmt.Errorf("path %q contains a backslash", p)
	}
	for _, r := range p {
		if r < 0x20 || r == 0x7f {
			return fmt.Errorf("path %q contains a control character", p)
		}
	}
	for _, seg := range strings.Split(p, "/") {
		switch seg {
		case "":
			return fmt.Errorf("path %q has an empty segment", p)
		case ".", "..":
			return fmt.Errorf("path %q has a %q segment", p, seg)
		}
	}
	if p == ".git" || strings.HasPrefix(p, ".git/") {
		return fmt.Errorf("path %q is inside .git", p)
	}
	return nil
}
