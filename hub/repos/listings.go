package repos

import (
	"sort"
	"strings"

	"github.com/xetkit/xetkit/hub/store"
)

// Listed is a repository a listing shows: its record and the head of its
// default branch.
type Listed struct {
	ID       ID
	Record   *Record
	CommitID string
	Commit   *Commit
}

// ListQuery is what a listing asks for: a type ("" all), an author (a
// namespace), a search in the id, a sort key and direction ("1"
// ascending).
type ListQuery struct {
	Type, Author, Search, Sort, Direction string
}

// List returns the repositories u (nil: no token) may see that q asks
// for, in its order. Records that cannot be read are left out (xetkit
// store check reports them). An unknown sort key is Invalid.
func (s *Service) List(u *User, q ListQuery) ([]Listed, error) {
	names, err := s.store.List(store.Repos)
	if err != nil {
		return nil, err
	}
	author, search := strings.ToLower(q.Author), strings.ToLower(q.Search)
	var out []Listed
	for _, n := range names {
		id, err := ParseKey(n)
		if err != nil || (q.Type != "" && id.Type != q.Type) {
			continue
		}
		st, err := s.store.loadRepo(id)
		if err != nil || !MaySee(u, st) {
			continue
		}
		if ns, name, ok := strings.Cut(st.ID, "/"); ok {
			id.NS, id.Name = ns, name // the id as created, not as keyed
		}
		if (author != "" && strings.ToLower(id.NS) != author) || (search != "" && !strings.Contains(strings.ToLower(id.String()), search)) {
			continue
		}
		cid, c, err := s.resolveRev(st, id, DefaultBranch)
		if err != nil {
			continue
		}
		out = append(out, Listed{id, st, cid, c})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID.String() < out[j].ID.String() })
	if !sortRepos(out, q.Sort, q.Direction) {
		return nil, refuse(Invalid, "sort=%q: want id, createdAt, lastModified, likes, downloads or trendingScore", q.Sort)
	}
	return out, nil
}

// sortRepos orders repos by a listing's sort key, descending unless
// direction is "1" (ascending by id when there is no key); it reports
// false for an unknown key. Counts the local hub does not keep (likes,
// downloads, trending) are all zero, so those keep the id order.
func sortRepos(repos []Listed, key, direction string) bool {
	var less func(a, b Listed) bool
	switch key {
	case "", "id":
		less = func(a, b Listed) bool { return a.ID.String() < b.ID.String() }
		if key == "" {
			direction = "1"
		}
	case "createdAt", "created_at":
		less = func(a, b Listed) bool { return a.Record.Created.Before(b.Record.Created) }
	case "lastModified", "last_modified":
		less = func(a, b Listed) bool { return a.Commit.Date.Before(b.Commit.Date) }
	case "likes", "downloads", "trendingScore", "trending_score":
		return true
	default:
		return false
	}
	if direction != "1" {
		asc := less
		less = func(a, b Listed) bool { return asc(b, a) }
	}
	sort.SliceStable(repos, func(i, j int) bool { return less(repos[i], repos[j]) })
	return true
}

// Revision is l as a revision (its default branch's head).
func (l Listed) Revision() *Revision {
	return &Revision{ID: l.ID, Record: l.Record, Commit: l.Commit, CommitID: l.CommitID}
}
