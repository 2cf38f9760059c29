package repos

import (
	"bytes"
	"strings"

	"github.com/go-git/go-git/v5/plumbing/format/gitattributes"

	"github.com/xetkit/xetkit/hub/store"
	"github.com/xetkit/xetkit/hub/tree"
)

// A repository's big files are LFS pointers in git, which git-lfs turns
// into their bytes on checkout only for the paths .gitattributes marks
// filter=lfs. So a commit made here that adds a big file no line of
// .gitattributes covers also adds one for it, its exact path: a clone
// with git-lfs then gets every big file's bytes, whichever way it was
// uploaded. Pushed commits are kept as git sent them (git-lfs writes the
// lines itself: git lfs track).

// attributesPath is the file git reads its attributes from.
const attributesPath = ".gitattributes"

// lfsLine is the .gitattributes line that marks a path for git-lfs.
func lfsLine(path string) string {
	// A pattern with a space (or a leading "#" or "!") would mean other
	// things: those characters are escaped as patterns allow.
	var b strings.Builder
	for i, c := range path {
		switch {
		case c == ' ':
			b.WriteString("[[:space:]]")
		case (c == '#' || c == '!') && i == 0, c == '\\', c == '*', c == '?', c == '[':
			b.WriteRune('\\')
			b.WriteRune(c)
		default:
			b.WriteRune(c)
		}
	}
	// A leading "/" anchors the pattern at the top, as the path is.
	return "/" + b.String() + " filter=lfs diff=lfs merge=lfs -text\n"
}

// withAttributes returns ops (and their files) with .gitattributes given
// lines for the LFS files among them that its content at root (or as ops
// put it) does not mark for git-lfs; unchanged when every one is.
func (s *Service) withAttributes(root tree.ID, ops []Op, files []File) ([]Op, []File, error) {
	var content []byte
	at := -1 // the op putting .gitattributes, if the commit does
	for i, op := range ops {
		if op.Path == attributesPath && op.Kind == PutRegular {
			content, at = op.Content, i
		}
	}
	if at < 0 {
		e, ok, err := s.trees.Lookup(root, attributesPath)
		if err != nil {
			return nil, nil, err
		}
		if ok && !e.Dir && e.File.Xet == ([32]byte{}) {
			if content, err = store.Read(s.store, store.Blobs, entryOf("", e.File).SHA256); err != nil {
				return nil, nil, err
			}
		}
	}
	attrs, err := gitattributes.ReadAttributes(bytes.NewReader(content), nil, true)
	if err != nil {
		attrs = nil // a file git would not read either: lines are added to it all the same
	}
	m := gitattributes.NewMatcher(attrs)
	var add []string
	for _, op := range ops {
		if op.Kind != PutLFS {
			continue
		}
		res, _ := m.Match(strings.Split(op.Path, "/"), []string{"filter"})
		if f, ok := res["filter"]; ok && f.IsValueSet() && f.Value() == "lfs" {
			continue
		}
		add = append(add, lfsLine(op.Path))
	}
	if len(add) == 0 {
		return ops, files, nil
	}
	if len(content) > 0 && !bytes.HasSuffix(content, []byte("\n")) {
		content = append(content, '\n')
	}
	content = append(append([]byte(nil), content...), strings.Join(add, "")...)
	op, err := RegularOp(attributesPath, content)
	if err != nil {
		return nil, nil, err
	}
	ops, files = append([]Op(nil), ops...), append([]File(nil), files...)
	if at >= 0 {
		ops[at], files[at] = op, regularEntry(attributesPath, content)
	} else {
		ops, files = append(ops, op), append(files, regularEntry(attributesPath, content))
	}
	return ops, files, nil
}
