package githttp

import (
	"bytes"
	"fmt"
	"strconv"
	"strings"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/xetkit/xetkit/hub/repos"
)

// A push's objects are checked as git's fsck does (receive.fsckObjects)
// before anything of them is kept: commits and tags of the right form,
// trees whose entries have names a checkout can write (no "", ".", "..",
// ".git" in any case or spelling a file system takes for it, no "/"), a
// mode git writes, in git's order, each once.

// errBadObject is an object of a push that fsck refuses.
type errBadObject struct {
	id  plumbing.Hash
	msg string
}

func (e *errBadObject) Error() string { return fmt.Sprintf("object %s: %s", e.id, e.msg) }

// fsck checks one object of type t and id with body b.
func fsck(t plumbing.ObjectType, id plumbing.Hash, b []byte) error {
	bad := func(format string, args ...any) error { return &errBadObject{id, fmt.Sprintf(format, args...)} }
	switch t {
	case plumbing.BlobObject:
		return nil
	case plumbing.TreeObject:
		return fsckTree(b, bad)
	case plumbing.CommitObject:
		return fsckCommit(b, bad)
	case plumbing.TagObject:
		return bad("an annotated tag: this hub keeps lightweight tags only (git tag NAME, without -a)")
	}
	return bad("an object of type %v", t)
}

// fsckCommit checks a commit's headers: a tree, parents, an author and a
// committer, in that order, each well formed.
func fsckCommit(b []byte, bad func(string, ...any) error) error {
	head, _, ok := bytes.Cut(b, []byte("\n\n"))
	if !ok {
		head = bytes.TrimSuffix(b, []byte("\n"))
	}
	lines := strings.Split(string(head), "\n")
	want := "tree"
	for i, line := range lines {
		key, val, _ := strings.Cut(line, " ")
		switch {
		case i == 0 && key != "tree":
			return bad("a commit whose first line is not its tree")
		case key == "tree" && i == 0, key == "parent" && (want == "parent" || want == "tree"):
			if !repos.LowerHex(val, 40) {
				return bad("a commit naming %s %q", key, val)
			}
			want = "parent"
		case key == "author" && want == "parent":
			if !isIdent(val) {
				return bad("a commit with a malformed author %q", val)
			}
			want = "committer"
		case key == "committer" && want == "committer":
			if !isIdent(val) {
				return bad("a commit with a malformed committer %q", val)
			}
			want = "extra"
		case want == "extra" && key != "" && !strings.HasPrefix(line, " "):
			// encoding, gpgsig, mergetag and the like, and their lines
		case want == "extra" && strings.HasPrefix(line, " "):
		default:
			return bad("a commit with a %q line out of place", key)
		}
	}
	if want != "extra" {
		return bad("a commit without an author and a committer")
	}
	return nil
}

// isIdent reports whether s is "Name <email> seconds +zone".
func isIdent(s string) bool {
	lt, gt := strings.IndexByte(s, '<'), strings.IndexByte(s, '>')
	if lt < 0 || gt < lt || strings.ContainsAny(s[:lt], "<>\n") || strings.ContainsAny(s[lt+1:gt], "<>\n") {
		return false
	}
	f := strings.Fields(s[gt+1:])
	if len(f) != 2 || len(f[1]) != 5 || (f[1][0] != '+' && f[1][0] != '-') {
		return false
	}
	_, err := strconv.ParseUint(f[0], 10, 64)
	return err == nil && isDigits(f[1][1:])
}

func isDigits(s string) bool {
	for _, c := range s {
		if c < '0' || c > '9' {
			return false
		}
	}
	return s != ""
}

// The modes git writes in a tree.
var treeModes = map[string]bool{"100644": true, "100755": true, "120000": true, "40000": true, "160000": true}

// fsckTree checks a tree's entries.
func fsckTree(b []byte, bad func(string, ...any) error) error {
	prev := ""
	seen := map[string]bool{}
	for len(b) > 0 {
		sp := bytes.IndexByte(b, ' ')
		nul := bytes.IndexByte(b, 0)
		if sp <= 0 || nul < sp || len(b) < nul+21 {
			return bad("a tree that is cut short or malformed")
		}
		mode, name := string(b[:sp]), string(b[sp+1:nul])
		b = b[nul+21:]
		if !treeModes[mode] {
			return bad("a tree entry %q of mode %s (git writes 100644, 100755, 120000, 40000, 160000)", name, mode)
		}
		if err := checkName(name); err != "" {
			return bad("a tree entry %q: %s", name, err)
		}
		if seen[name] {
			return bad("a tree that names %q twice", name)
		}
		seen[name] = true
		key := name
		if mode == "40000" {
			key += "/"
		}
		if key < prev {
			return bad("a tree whose entries are not in git's order (%q after %q)", name, prev)
		}
		prev = key
	}
	return nil
}

// checkName says what is wrong with a tree entry's name, or "".
func checkName(name string) string {
	switch {
	case name == "":
		return "an empty name"
	case name == "." || name == "..":
		return "a name a path cannot hold"
	case strings.ContainsRune(name, '/'):
		return "a name with a '/'"
	case isDotGit(name):
		return "a name a checkout would take for .git"
	}
	return ""
}

// isDotGit reports whether a file system could take name for ".git": in
// any case, with trailing dots or spaces (Windows), as its 8.3 short name
// (git~1), or with the code points HFS+ ignores (macOS).
func isDotGit(name string) bool {
	n := strings.ToLower(name)
	for _, ignorable := range []string{"\u200c", "\u200d", "\u200e", "\u200f", "\u202a", "\u202b", "\u202c", "\u202d", "\u202e", "\u206a", "\u206b", "\u206c", "\u206d", "\u206e", "\u206f", "\ufeff"} {
		n = strings.ReplaceAll(n, ignorable, "")
	}
	n = strings.TrimRight(n, ". ")
	return n == ".git" || n == "git~1"
}
