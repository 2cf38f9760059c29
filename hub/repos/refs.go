package repos

import (
	"cmp"
	"regexp"
	"sort"
	"strings"
)

// Branches and tags. A branch moves with commits; a tag names one commit
// for good: creating one that exists is Conflict, as is a branch that
// exists, and the default branch cannot be deleted. Refs that git could
// not keep apart (differing in case, or one a folder of the other) are
// Conflict too.

// Prefixes of the refs kept among the branches that are not branches.
const (
	prRefPrefix      = "refs/pr/"
	convertRefPrefix = "refs/convert/"
)

// refName is a branch or tag name as git takes them, less what would make
// it ambiguous here (a leading "refs/", a 40-hex name that reads as a
// commit id).
var refName = regexp.MustCompile(`^[A-Za-z0-9_][A-Za-z0-9._/-]{0,199}$`)

// checkRefName refuses a name no ref may have.
func checkRefName(kind, name string) error {
	if !refName.MatchString(name) || strings.Contains(name, "..") || strings.Contains(name, "//") || strings.HasSuffix(name, "/") ||
		strings.HasSuffix(name, ".lock") || strings.HasPrefix(name, "refs/") || commitIDPattern.MatchString(name) || name == "HEAD" {
		return refuse(Invalid, "invalid %s name %q", kind, name)
	}
	return nil
}

// fullRef is a ref's name as git knows it: refs/heads/ before a branch,
// refs/tags/ before a tag; refs kept among the branches that are not
// branches (refs/pr/N) have theirs.
func fullRef(kind, name string) string {
	switch {
	case strings.HasPrefix(name, "refs/"):
		return name
	case kind == "tag":
		return "refs/tags/" + name
	}
	return "refs/heads/" + name
}

// refCollision refuses a new ref of that kind and name that could not
// stand beside a ref of st in a git repository: one that differs from it
// in case alone (a checkout on a case-insensitive file system has one
// file for both), or one inside which it would be a folder, or the
// reverse (git keeps refs as files: ok and ok/nested cannot both be).
func refCollision(st *Record, kind, name string) error {
	full := strings.ToLower(fullRef(kind, name))
	clash := func(k, n string) bool {
		other := strings.ToLower(fullRef(k, n))
		return other == full || strings.HasPrefix(other, full+"/") || strings.HasPrefix(full, other+"/")
	}
	other := ""
	for b := range st.Branches {
		if clash("branch", b) {
			other = fullRef("branch", b)
		}
	}
	for t := range st.Tags {
		if clash("tag", t) {
			other = fullRef("tag", t)
		}
	}
	if other == "" {
		return nil
	}
	return refuse(Conflict, "%s %s cannot stand beside %s: git keeps refs as files, which may differ in more than case and may not be both a file and a folder", kind, name, other)
}

// CreateBranch makes branch of repository id for u at the revision from
// (default: the default branch's head). An existing ref of that name is
// Conflict whatever it is (refs/pr/1 too), so that exist_ok accepts it.
func (s *Service) CreateBranch(u *User, id ID, branch, from string) error {
	if err := s.checkWriter(u, id, "creating a branch"); err != nil {
		return err
	}
	from = cmp.Or(from, DefaultBranch)
	return s.changeRepo(id, func(st *Record) error {
		if _, ok := st.Branches[branch]; ok {
			return refuse(Conflict, "Reference already exists: branch %s of %s %s", branch, id.Type, id)
		}
		if err := checkRefName("branch", branch); err != nil {
			return err
		}
		if err := refCollision(st, "branch", branch); err != nil {
			return err
		}
		cid, _, err := s.resolveRev(st, id, from)
		if err != nil {
			return miss(id, "starting point "+from, err)
		}
		st.Branches[branch] = cid
		return nil
	})
}

// DeleteBranch deletes branch of repository id for u.
func (s *Service) DeleteBranch(u *User, id ID, branch string) error {
	if err := s.checkWriter(u, id, "deleting a branch"); err != nil {
		return err
	}
	return s.changeRepo(id, func(st *Record) error {
		if _, ok := st.Branches[branch]; !ok || strings.HasPrefix(branch, "refs/") {
			return noBranch(id, branch)
		}
		if branch == DefaultBranch {
			return refuse(Forbidden, "cannot delete %s: it is the default branch of %s %s", branch, id.Type, id)
		}
		delete(st.Branches, branch)
		return nil
	})
}

// CreateTag makes tag of repository id for u at revision rev, for good.
func (s *Service) CreateTag(u *User, id ID, tag, rev string) error {
	if err := s.checkWriter(u, id, "creating a tag"); err != nil {
		return err
	}
	return s.changeRepo(id, func(st *Record) error {
		if err := checkRefName("tag", tag); err != nil {
			return err
		}
		if _, ok := st.Tags[tag]; ok {
			return refuse(Conflict, "Reference already exists: tag %s of %s %s (a tag never moves)", tag, id.Type, id)
		}
		if err := refCollision(st, "tag", tag); err != nil {
			return err
		}
		cid, _, err := s.resolveRev(st, id, rev)
		if err != nil {
			return miss(id, "revision "+rev, err)
		}
		st.Tags[tag] = cid
		return nil
	})
}

// DeleteTag deletes tag of repository id for u.
func (s *Service) DeleteTag(u *User, id ID, tag string) error {
	if err := s.checkWriter(u, id, "deleting a tag"); err != nil {
		return err
	}
	return s.changeRepo(id, func(st *Record) error {
		if _, ok := st.Tags[tag]; !ok {
			return missing(CodeRevisionNotFound, "tag %q not found in %s %s", tag, id.Type, id)
		}
		delete(st.Tags, tag)
		return nil
	})
}

// Ref is one ref of a repository.
type Ref struct {
	Name   string // as the Hub shows it: the branch, tag or convert's name; a pull request's whole ref
	Ref    string // the whole ref: refs/heads/…, refs/tags/…, refs/convert/…, refs/pr/N
	Commit string
}

// Refs are a repository's refs by kind, each sorted by name.
type Refs struct {
	Branches, Tags, Converts, PullRequests []Ref
}

// RefsOf lists the refs of repository record rec.
func RefsOf(rec *Record) Refs {
	var out Refs
	for name, cid := range rec.Branches {
		switch {
		case strings.HasPrefix(name, prRefPrefix):
			out.PullRequests = append(out.PullRequests, Ref{name, name, cid})
		case strings.HasPrefix(name, convertRefPrefix):
			out.Converts = append(out.Converts, Ref{strings.TrimPrefix(name, convertRefPrefix), name, cid})
		default:
			out.Branches = append(out.Branches, Ref{name, "refs/heads/" + name, cid})
		}
	}
	for name, cid := range rec.Tags {
		out.Tags = append(out.Tags, Ref{name, "refs/tags/" + name, cid})
	}
	for _, refs := range [][]Ref{out.Branches, out.Tags, out.Converts, out.PullRequests} {
		sort.Slice(refs, func(i, j int) bool { return refs[i].Name < refs[j].Name })
	}
	return out
}
