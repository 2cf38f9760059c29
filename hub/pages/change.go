package pages

import (
	"fmt"
	"io"
	"mime/multipart"
	"net/http"
	"path"
	"strings"

	"github.com/xetkit/xetkit/hub/repos"
)

// Changing a repository from its pages: its settings, a text file edited,
// files added, a file deleted. Each is one call of the service, which
// decides who may.

// settingsData is the settings page's.
type settingsData struct {
	Private     bool
	Gated       string
	Error, Done string
	Duplicate   string
}

func (c *call) settings() {
	rec, h, ok := c.repository()
	if !ok {
		return
	}
	if !h.MayWrite {
		if err := c.s.repos.MayWrite(c.v.user, h.ID); err != nil {
			c.failErr(err)
			return
		}
	}
	d := settingsData{Private: rec.Private, Gated: rec.Gated}
	status := http.StatusOK
	if c.post() {
		to, err := c.applySettings(h.ID)
		if err == nil {
			c.redirect(to)
			return
		}
		e := repos.As(err)
		if e == nil {
			c.failErr(err)
			return
		}
		status, d.Error = statusOf(e.Kind), e.Msg
		d.Duplicate = c.r.PostFormValue("name")
	}
	c.render(status, "settings", pageData{Title: "Settings · " + h.ID.String(), Repo: h, Tab: "settings", Data: d})
}

// applySettings posts one of the settings forms (act: visibility, gated,
// duplicate, delete) and returns the page to go to next.
func (c *call) applySettings(id repos.ID) (string, error) {
	u := c.v.user
	here := repoURL(id) + "/settings"
	switch c.r.PostFormValue("act") {
	case "visibility":
		return here, c.s.repos.ChangeSettings(u, id, repos.Settings{Visibility: repos.Visibility{Visibility: c.r.PostFormValue("visibility")}})
	case "gated":
		g := c.r.PostFormValue("gated")
		if g == "no" {
			g = ""
		}
		return here, c.s.repos.ChangeSettings(u, id, repos.Settings{Gated: &g})
	case "duplicate":
		ns, name, ok := strings.Cut(strings.TrimSpace(c.r.PostFormValue("name")), "/")
		if !ok {
			return "", &repos.Error{Kind: repos.Invalid, Msg: "the new repository's name must be namespace/name"}
		}
		dst, err := repos.ParseID(id.Type, ns, name)
		if err != nil {
			return "", err
		}
		return repoURL(dst), c.s.repos.Duplicate(u, id, dst, repos.Visibility{Visibility: c.r.PostFormValue("visibility")})
	case "delete":
		if c.r.PostFormValue("confirm") != id.String() {
			return "", &repos.Error{Kind: repos.Invalid, Msg: fmt.Sprintf("type %s to confirm its deletion: nothing was deleted", id)}
		}
		return "/" + urlPath(id.NS), c.s.repos.Delete(u, id)
	}
	return "", &repos.Error{Kind: repos.Invalid, Msg: "no such setting"}
}

// writable loads the route's revision for a change by the visitor, who
// must write there, or answers why not.
func (c *call) writable() (*repos.Revision, *repoHead, bool) {
	rv, h, ok := c.revision(c.rt.rev)
	if !ok {
		return nil, nil, false
	}
	if err := c.s.repos.MayWrite(c.v.user, h.ID); err != nil {
		c.failErr(err)
		return nil, nil, false
	}
	return rv, h, true
}

// refused answers a form post the service refused by drawing the form
// again (page name, with data d) with the refusal, setErr putting it in d;
// anything else is the hub's failure.
func (c *call) refused(err error, name, title string, h *repoHead, d any, setErr func(string)) {
	status, msg := http.StatusInternalServerError, err.Error()
	if e := repos.As(err); e != nil {
		status, msg = statusOf(e.Kind), e.Msg
	}
	setErr(msg)
	c.render(status, name, pageData{Title: title, Repo: h, Tab: "files", Data: d})
}

// maxEditBytes bounds a file edited in the page.
const maxEditBytes = 1 << 20

// editData is the form that edits (or creates) a text file.
type editData struct {
	Path, Rev, Content, Parent, Error string
	Exists, PR                        bool
	Summary, Description              string
}

func (c *call) edit() {
	rv, h, ok := c.writable()
	if !ok {
		return
	}
	d := editData{Path: c.rt.path, Rev: c.rt.rev, Parent: rv.CommitID}
	f, exists, err := c.s.repos.FileAt(rv, c.rt.path)
	if err != nil {
		c.failErr(err)
		return
	}
	d.Exists = exists
	if exists {
		b, err := c.read(f, maxEditBytes+1)
		switch {
		case err != nil:
			c.failErr(err)
			return
		case len(b) > maxEditBytes || !repos.Regular(int64(len(b)), b):
			c.fail(http.StatusBadRequest, fmt.Sprintf("%s is not a text file of at most %d bytes: it cannot be edited in the page", c.rt.path, maxEditBytes))
			return
		}
		d.Content = string(b)
	}
	if !c.post() {
		c.render(http.StatusOK, "edit", pageData{Title: "Edit " + c.rt.path, Repo: h, Tab: "files", Data: d})
		return
	}
	d.Content = strings.ReplaceAll(c.r.PostFormValue("content"), "\r\n", "\n")
	d.Summary, d.Description, d.PR = c.r.PostFormValue("summary"), c.r.PostFormValue("description"), c.r.PostFormValue("pr") == "1"
	d.Parent = c.r.PostFormValue("parent")
	op, err := repos.RegularOp(c.rt.path, []byte(d.Content))
	if err == nil {
		verb := "Update "
		if !exists {
			verb = "Create "
		}
		err = c.commitOps(h, d.Parent, verb+c.rt.path, d.Summary, d.Description, d.PR, []repos.Op{op})
	}
	if err != nil {
		c.refused(err, "edit", "Edit "+c.rt.path, h, &d, func(m string) { d.Error = m })
	}
}

// commitOps commits ops on the route's revision (a branch) for the
// visitor, as a pull request with pr, and redirects to what it made: the
// file's page, or the pull request's.
func (c *call) commitOps(h *repoHead, parent, title, summary, description string, pr bool, ops []repos.Op) error {
	if strings.TrimSpace(summary) == "" {
		summary = title
	}
	req := repos.CommitRequest{Branch: c.rt.rev, Summary: summary, Description: description, Ops: ops, CreatePR: pr}
	if !pr {
		req.ParentCommit = parent
	}
	done, err := c.s.repos.Commit(c.v.user, h.ID, req)
	if err != nil {
		return err
	}
	switch {
	case done.PR > 0:
		c.redirect(fmt.Sprintf("%s/discussions/%d", repoURL(h.ID), done.PR))
	case len(ops) == 1 && ops[0].Kind != repos.DeleteFile:
		c.redirect(revURL(h.ID, "blob", c.rt.rev, ops[0].Path))
	default:
		c.redirect(repoURL(h.ID) + "/commit/" + done.ID)
	}
	return nil
}

// deleteData is the form that deletes a file.
type deleteData struct {
	Path, Rev, Parent, Error string
}

func (c *call) deleteFile() {
	rv, h, ok := c.writable()
	if !ok {
		return
	}
	if _, exists, err := c.s.repos.FileAt(rv, c.rt.path); err != nil || !exists {
		if err == nil {
			err = &repos.Error{Kind: repos.NotFound, Msg: fmt.Sprintf("%s: no such file in %s at %s", c.rt.path, h.ID, c.rt.rev)}
		}
		c.failErr(err)
		return
	}
	d := deleteData{Path: c.rt.path, Rev: c.rt.rev, Parent: rv.CommitID}
	if !c.post() {
		c.render(http.StatusOK, "delete", pageData{Title: "Delete " + c.rt.path, Repo: h, Tab: "files", Data: d})
		return
	}
	op, err := repos.DeleteOp(c.rt.path, false)
	if err == nil {
		err = c.commitOps(h, c.r.PostFormValue("parent"), "Delete "+c.rt.path, c.r.PostFormValue("summary"), "", c.r.PostFormValue("pr") == "1", []repos.Op{op})
	}
	if err != nil {
		c.refused(err, "delete", "Delete "+c.rt.path, h, &d, func(m string) { d.Error = m })
	}
}

// uploadData is the form that adds files.
type uploadData struct {
	Dir, Rev, Error string
}

// maxUploadBody bounds the files one add-files form sends.
const maxUploadBody = 4 << 30

// mayUpload refuses, before its body is read, an add-files post by a
// visitor who may not write the route's repository: a stranger's upload
// costs the hub its headers.
func (c *call) mayUpload() bool {
	if err := c.s.repos.MayWrite(c.v.user, c.rt.repo); err != nil {
		c.failErr(err)
		return false
	}
	c.r.Body = http.MaxBytesReader(c.w, c.r.Body, maxUploadBody)
	return true
}

func (c *call) upload() {
	rv, h, ok := c.writable()
	if !ok {
		return
	}
	d := uploadData{Dir: c.rt.path, Rev: c.rt.rev}
	if !c.post() {
		c.render(http.StatusOK, "upload", pageData{Title: "Add files · " + h.ID.String(), Repo: h, Tab: "files", Data: d})
		return
	}
	dir := strings.Trim(c.r.PostFormValue("dir"), "/")
	var ops []repos.Op
	var err error
	for _, fh := range c.r.MultipartForm.File["files"] {
		p := path.Base(strings.ReplaceAll(fh.Filename, "\\", "/"))
		if dir != "" {
			p = dir + "/" + p
		}
		var op repos.Op
		if op, err = c.addOp(h.ID, p, fh); err != nil {
			break
		}
		ops = append(ops, op)
	}
	if err == nil && len(ops) == 0 {
		err = &repos.Error{Kind: repos.Invalid, Msg: "pick at least one file"}
	}
	if err == nil {
		err = c.commitOps(h, rv.CommitID, fmt.Sprintf("Upload %d %s", len(ops), map[bool]string{true: "file", false: "files"}[len(ops) == 1]),
			c.r.PostFormValue("summary"), c.r.PostFormValue("description"), c.r.PostFormValue("pr") == "1", ops)
	}
	if err != nil {
		d.Dir = dir
		c.refused(err, "upload", "Add files · "+h.ID.String(), h, &d, func(m string) { d.Error = m })
	}
}

// addOp is the commit operation of one file of an add-files form: a small
// text file inline, anything else stored as Xet by the hub's own upload
// pipeline (the one that takes plain LFS uploads), then named by its
// SHA-256.
func (c *call) addOp(id repos.ID, p string, fh *multipart.FileHeader) (repos.Op, error) {
	if err := repos.CheckPath(p); err != nil {
		return repos.Op{}, err
	}
	f, err := fh.Open()
	if err != nil {
		return repos.Op{}, err
	}
	defer f.Close()
	sample := make([]byte, min(fh.Size, 8000))
	if _, err := io.ReadFull(f, sample); err != nil {
		return repos.Op{}, err
	}
	if fh.Size < maxEditBytes && repos.Regular(fh.Size, sample) {
		b := make([]byte, fh.Size)
		if _, err := f.ReadAt(b, 0); err != nil && err != io.EOF {
			return repos.Op{}, err
		}
		return repos.RegularOp(p, b)
	}
	sha, err := c.s.cfg.CAS.Ingest(c.r.Context(), id.Key(), fh.Size, func() (io.Reader, error) {
		return io.NewSectionReader(f, 0, fh.Size), nil
	})
	if err != nil {
		return repos.Op{}, fmt.Errorf("%s: %w", p, err)
	}
	return repos.LFSOp(p, sha, fh.Size)
}
