package pages

import (
	"fmt"
	"html/template"
	"io"
	"net/http"
	"sort"
	"strconv"
	"strings"

	"github.com/xetkit/xetkit/hub/repos"
)

// A repository's pages: its card, folders, files, history and commits.

// repoHead is what the header of every page of a repository shows.
type repoHead struct {
	ID       repos.ID
	TypeName string
	Private  bool
	Gated    string
	MayWrite bool
	Rev      string // the revision the page is at
	Branches []repos.Ref
	Tags     []repos.Ref
	Open     int // open discussions and pull requests
}

// revision loads the repository of the route at rev for the visitor, with
// its header, or answers why not.
func (c *call) revision(rev string) (*repos.Revision, *repoHead, bool) {
	rv, err := c.s.repos.Revision(c.v.user, c.rt.repo, rev)
	if err != nil {
		c.failErr(err)
		return nil, nil, false
	}
	return rv, c.head(rv.Record, rev), true
}

// repository loads the route's repository for the visitor, with its
// header at the default branch, or answers why not.
func (c *call) repository() (*repos.Record, *repoHead, bool) {
	rec, err := c.s.repos.Repo(c.v.user, c.rt.repo)
	if err != nil {
		c.failErr(err)
		return nil, nil, false
	}
	return rec, c.head(rec, ""), true
}

// head is the header of repository record rec at rev.
func (c *call) head(rec *repos.Record, rev string) *repoHead {
	id := c.rt.repo
	if ns, name, ok := strings.Cut(rec.ID, "/"); ok {
		id.NS, id.Name = ns, name // as created, not as typed
	}
	c.rt.repo = id
	refs := repos.RefsOf(rec)
	if rev == "" {
		rev = repos.DefaultBranch
	}
	h := &repoHead{ID: id, TypeName: strings.TrimSuffix(typeNames[id.Type], "s"), Private: rec.Private, Gated: rec.Gated,
		MayWrite: c.s.repos.MayWrite(c.v.user, id) == nil, Rev: rev, Branches: refs.Branches, Tags: refs.Tags}
	if _, ds, err := c.s.repos.Discussions(c.v.user, id, repos.DiscussionFilter{Status: "open"}); err == nil {
		h.Open = len(ds)
	}
	return h
}

// item is a file or folder of a listing.
type item struct {
	Name, Path string
	Dir        bool
	Size       int64
	Xet        bool
	Changed    string // the last commit's id
	Title      string // and its title
}

// commitTitles memoises the titles of the commits a listing names: a
// folder made in one commit loads it once.
type commitTitles struct {
	c    *call
	rv   *repos.Revision
	seen map[string]string
}

func (t *commitTitles) of(id string) string {
	if v, ok := t.seen[id]; ok {
		return v
	}
	title := ""
	if cm, err := t.c.s.repos.CommitOf(t.rv, id); err == nil {
		title = cm.Title
	}
	t.seen[id] = title
	return title
}

// items lists folder dir of rv after the path after, at most n (and
// whether more follow).
func (c *call) items(rv *repos.Revision, dir, after string, n int) ([]item, bool, error) {
	titles := &commitTitles{c: c, rv: rv, seen: map[string]string{}}
	var out []item
	more := false
	err := c.s.repos.Walk(rv, dir, false, after, func(it repos.Item) bool {
		if len(out) == n {
			more = true
			return false
		}
		out = append(out, item{Name: it.Path[strings.LastIndexByte(it.Path, '/')+1:], Path: it.Path, Dir: it.Dir, Size: it.File.Size,
			Xet: it.File.Xet != "", Changed: it.Changed, Title: titles.of(it.Changed)})
		return true
	})
	// Folders first, as file browsers show them (each group in path order).
	sort.SliceStable(out, func(i, j int) bool { return out[i].Dir && !out[j].Dir })
	return out, more, err
}

// repoData is the repository page's.
type repoData struct {
	Card     template.HTML
	Tags     []tag
	Files    []item
	MoreFile bool
	Last     *repos.Commit
	LastID   string
	Clone    string // the git clone URL
	Hub      string // the hub's base URL
	Stats    repos.Footprint
}

// tag is one of a card's tags, shown by kind (license, library, ...).
type tag struct{ Kind, Value string }

// maxCardBytes bounds the README a repository page renders.
const maxCardBytes = 1 << 20

// repoPageFiles is how many entries the repository page's files panel
// shows before linking to the folder.
const repoPageFiles = 30

func (c *call) repoPage() {
	rv, h, ok := c.revision("")
	if !ok {
		return
	}
	d := repoData{Last: rv.Commit, LastID: rv.CommitID, Hub: c.s.cfg.BaseURL(c.r)}
	d.Clone = d.Hub + "/" + h.ID.WebPrefix()
	if f, ok, err := c.s.repos.FileAt(rv, "README.md"); err == nil && ok {
		if b, err := c.read(f, maxCardBytes); err == nil {
			meta, body := repos.SplitCard(b)
			d.Tags = cardTags(meta)
			d.Card = renderMarkdown(body)
		}
	}
	var err error
	if d.Files, d.MoreFile, err = c.items(rv, "", "", repoPageFiles); err != nil {
		c.failErr(err)
		return
	}
	if d.Stats, err = c.s.repos.FootprintOf(rv); err != nil {
		c.failErr(err)
		return
	}
	c.render(http.StatusOK, "repo", pageData{Title: h.ID.String(), Repo: h, Tab: "card", Data: d})
}

// cardTags are the tags a card's metadata gives, by kind, as the Hub shows
// them above a card.
func cardTags(meta map[string]any) []tag {
	var out []tag
	add := func(kind string, v any) {
		switch v := v.(type) {
		case string:
			out = append(out, tag{kind, v})
		case []any:
			for _, x := range v {
				if s, ok := x.(string); ok {
					out = append(out, tag{kind, s})
				}
			}
		}
	}
	for _, k := range []struct{ key, kind string }{{"pipeline_tag", "pipeline"}, {"library_name", "library"}, {"license", "license"},
		{"datasets", "dataset"}, {"language", "language"}, {"tags", "tag"}} {
		add(k.kind, meta[k.key])
	}
	return out
}

// read reads up to limit bytes of file f (all of it when it is smaller).
func (c *call) read(f repos.File, limit int64) ([]byte, error) {
	content, size, err := c.s.repos.Open(f)
	if err != nil {
		return nil, err
	}
	defer content.Close()
	b := make([]byte, min(size, limit))
	n, err := content.ReadAt(b, 0)
	if err == io.EOF {
		err = nil
	}
	return b[:n], err
}

// treeData is a folder's page.
type treeData struct {
	Path   string
	Crumbs []crumb
	Items  []item
	Next   string // the next page's URL
	First  string // the first page's, on a later page
}

func (c *call) tree() {
	rv, h, ok := c.revision(c.rt.rev)
	if !ok {
		return
	}
	if c.rt.path != "" {
		if it, ok, err := c.s.repos.ItemAt(rv, c.rt.path); err == nil && ok && !it.Dir {
			c.redirect(revURL(h.ID, "blob", c.rt.rev, c.rt.path))
			return
		}
	}
	after := c.r.URL.Query().Get("cursor")
	items, more, err := c.items(rv, c.rt.path, after, c.s.cfg.FolderPage)
	if err != nil {
		c.failErr(err)
		return
	}
	d := treeData{Path: c.rt.path, Crumbs: crumbsOf(h.ID, c.rt.rev, c.rt.path), Items: items}
	here := revURL(h.ID, "tree", c.rt.rev, c.rt.path)
	if more {
		last := ""
		for _, it := range items {
			last = max(last, it.Path)
		}
		d.Next = here + "?cursor=" + urlQuery(last)
	}
	if after != "" {
		d.First = here
	}
	c.render(http.StatusOK, "tree", pageData{Title: h.ID.String() + " at " + c.rt.rev, Repo: h, Tab: "files", Data: d})
}

// blobData is a file's page.
type blobData struct {
	File    repos.File
	Crumbs  []crumb
	Last    *repos.Commit
	LastID  string
	Lines   []string // a text file's
	TooBig  bool     // text too big to show
	Binary  bool
	Tensors *tensorTable
	Rows    *rowTable
	ViewAs  string // what Rows came from: CSV, TSV, JSON Lines
}

// maxTextBytes bounds the text a file's page shows; maxPeekBytes what it
// reads of a big file to show its first rows.
const (
	maxTextBytes = 512 << 10
	maxPeekBytes = 64 << 10
)

func (c *call) blob() {
	rv, h, ok := c.revision(c.rt.rev)
	if !ok {
		return
	}
	it, ok, err := c.s.repos.ItemAt(rv, c.rt.path)
	switch {
	case err != nil:
		c.failErr(err)
		return
	case !ok:
		c.fail(http.StatusNotFound, fmt.Sprintf("%s: no such file in %s at %s", c.rt.path, h.ID, c.rt.rev))
		return
	case it.Dir:
		c.redirect(revURL(h.ID, "tree", c.rt.rev, c.rt.path))
		return
	}
	f := it.File
	d := blobData{File: f, Crumbs: crumbsOf(h.ID, c.rt.rev, c.rt.path), LastID: it.Changed}
	if cm, err := c.s.repos.CommitOf(rv, it.Changed); err == nil {
		d.Last = cm
	}
	sample, err := c.read(f, min(f.Size, maxTextBytes))
	if err != nil {
		c.failErr(err)
		return
	}
	lower := strings.ToLower(f.Path)
	switch {
	case strings.HasSuffix(lower, ".safetensors"):
		d.Binary = true
		d.Tensors = c.safetensors(f)
	case !repos.Regular(int64(len(sample)), sample):
		d.Binary = true
	case f.Size > maxTextBytes:
		d.TooBig = true
	default:
		d.Lines = strings.Split(strings.TrimSuffix(string(sample), "\n"), "\n")
	}
	switch {
	case strings.HasSuffix(lower, ".csv"):
		d.Rows, d.ViewAs = csvRows(sample, ','), "CSV"
	case strings.HasSuffix(lower, ".tsv"):
		d.Rows, d.ViewAs = csvRows(sample, '\t'), "TSV"
	case strings.HasSuffix(lower, ".jsonl") || strings.HasSuffix(lower, ".ndjson"):
		d.Rows, d.ViewAs = jsonlRows(sample), "JSON Lines"
	}
	c.render(http.StatusOK, "blob", pageData{Title: f.Path + " · " + h.ID.String(), Repo: h, Tab: "files", Data: d})
}

// commitsPage is how many commits one page of a history shows.
const commitsPage = 50

// commitsData is a history's page.
type commitsData struct {
	Entries    []repos.HistoryEntry
	Prev, Next string
}

func (c *call) commits() {
	rv, h, ok := c.revision(c.rt.rev)
	if !ok {
		return
	}
	page, _ := strconv.Atoi(c.r.URL.Query().Get("p"))
	page = max(page, 0)
	entries, more, err := c.s.repos.History(rv, page*commitsPage, commitsPage)
	if err != nil {
		c.failErr(err)
		return
	}
	here := repoURL(h.ID) + "/commits/" + urlPath(c.rt.rev)
	d := commitsData{Entries: entries}
	if page > 0 {
		d.Prev = here + "?p=" + strconv.Itoa(page-1)
	}
	if more {
		d.Next = here + "?p=" + strconv.Itoa(page+1)
	}
	c.render(http.StatusOK, "commits", pageData{Title: "History of " + h.ID.String(), Repo: h, Tab: "commits", Data: d})
}

// commitData is a commit's page.
type commitData struct {
	ID      string
	Commit  *repos.Commit
	Changes []change
	More    bool
}

// maxCommitChanges bounds the files a commit's page lists.
const maxCommitChanges = 300

func (c *call) commit() {
	rv, h, ok := c.revision(c.rt.rev)
	if !ok {
		return
	}
	h.Rev = rv.CommitID
	changes, more, err := c.s.repos.Changes(rv, rv.Commit, maxCommitChanges)
	if err != nil {
		c.failErr(err)
		return
	}
	d := commitData{ID: rv.CommitID, Commit: rv.Commit, Changes: c.changes(changes), More: more}
	c.render(http.StatusOK, "commit", pageData{Title: rv.Commit.Title + " · " + h.ID.String(), Repo: h, Tab: "commits", Data: d})
}
