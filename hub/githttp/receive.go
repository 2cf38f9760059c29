package githttp

import (
	"bufio"
	"bytes"
	"io"
	"io/fs"
	"net/http"
	"strings"

	"github.com/go-git/go-git/v5/plumbing/format/pktline"
	"github.com/go-git/go-git/v5/plumbing/protocol/packp"
	"github.com/go-git/go-git/v5/plumbing/protocol/packp/capability"

	"github.com/xetkit/xetkit/hub/repos"
)

// Push: git-receive-pack. The refs to move and the pack come in one
// request (go-git's packp reads the commands); the pack is bounded and
// checked (receive), the service applies the push, and the answer is
// git's report-status, on side-band channel 1 where the client asked for
// it, with the reasons for refusals also on channel 2, which git shows as
// "remote:" lines.

// receivePack answers POST …/git-receive-pack.
func (s *Server) receivePack(w http.ResponseWriter, r *http.Request, u *repos.User, id repos.ID) {
	if err := s.repos.MayCommit(u, id); err != nil {
		s.fail(w, r, u, "push", err)
		return
	}
	in, err := body(r)
	if err != nil {
		s.ans.Fail(w, http.StatusBadRequest, "reading the push: %v", err)
		return
	}
	// Before a large push git probes the URL (and its credentials) with a
	// request of a flush alone, which receive-pack answers with nothing.
	br := bufio.NewReader(in)
	if probe, err := br.Peek(5); len(probe) == 4 && string(probe) == "0000" && err == io.EOF {
		w.Header().Set("Content-Type", "application/x-git-receive-pack-result")
		w.WriteHeader(http.StatusOK)
		return
	}
	req := packp.NewReferenceUpdateRequest()
	if err := req.Decode(br); err != nil {
		s.ans.Fail(w, http.StatusBadRequest, "%v: %v", errBadRequest, err)
		return
	}
	updates := make([]repos.RefUpdate, len(req.Commands))
	sendsObjects := false
	for i, c := range req.Commands {
		updates[i] = repos.RefUpdate{Ref: c.Name.String(), Old: c.Old.String(), New: c.New.String()}
		sendsObjects = sendsObjects || updates[i].New != repos.ZeroID
	}
	w.Header().Set("Content-Type", "application/x-git-receive-pack-result")
	w.Header().Set("Cache-Control", "no-cache")
	out := &report{w: w, sideband: req.Capabilities.Supports(capability.Sideband64k)}
	var pack *receivedPack
	if sendsObjects && req.Packfile != nil {
		if pack, err = receive(req.Packfile, s.limits); err != nil {
			out.unpackFailed(updates, err.Error())
			return
		}
		defer pack.Close()
	}
	var src repos.PushSource = noObjects{}
	if pack != nil {
		src = pack
	}
	results, err := s.repos.Push(u, id, updates, src)
	if err != nil {
		if e := repos.As(err); e != nil {
			out.unpackFailed(updates, e.Msg)
			return
		}
		out.unpackFailed(updates, "the hub could not store the push: "+err.Error())
		return
	}
	out.done(updates, results)
}

// noObjects is the source of a push that sends none (it only deletes).
type noObjects struct{}

func (noObjects) Object(string) (string, []byte, error) { return "", nil, errNoObject }

var errNoObject = fs.ErrNotExist

// report writes a push's report-status.
type report struct {
	w        io.Writer
	sideband bool
}

// unpackFailed reports a pack refused whole: every ref stays.
func (rp *report) unpackFailed(updates []repos.RefUpdate, why string) {
	results := make([]repos.PushResult, len(updates))
	for i := range results {
		results[i] = repos.PushResult(why)
	}
	rp.write("unpack "+oneLine(why), updates, results)
}

// done reports what became of each update.
func (rp *report) done(updates []repos.RefUpdate, results []repos.PushResult) {
	rp.write("unpack ok", updates, results)
}

// write writes the status lines (on channel 1 with side-band), and the
// reasons of refusals on channel 2 for git to show.
func (rp *report) write(unpack string, updates []repos.RefUpdate, results []repos.PushResult) {
	var b bytes.Buffer
	e := pktline.NewEncoder(&b)
	e.EncodeString(unpack + "\n")
	var reasons []string
	for i, up := range updates {
		if results[i] == "" {
			e.Encodef("ok %s\n", up.Ref)
			continue
		}
		e.Encodef("ng %s %s\n", up.Ref, oneLine(string(results[i])))
		reasons = append(reasons, up.Ref+": "+string(results[i]))
	}
	e.Flush()
	if !rp.sideband {
		rp.w.Write(b.Bytes())
		return
	}
	seen := map[string]bool{}
	for _, why := range reasons {
		if !seen[why] {
			seen[why] = true
			(&sideband{w: rp.w, ch: 2}).Write([]byte("xetkit hub: " + why + "\n"))
		}
	}
	(&sideband{w: rp.w, ch: 1}).Write(b.Bytes())
	pktline.NewEncoder(rp.w).Flush()
}

// oneLine is s on one line, as a status line holds it.
func oneLine(s string) string { return strings.NewReplacer("\n", " ", "\r", " ").Replace(s) }
