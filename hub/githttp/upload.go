package githttp

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"

	"github.com/go-git/go-git/v5/plumbing/format/pktline"

	"github.com/xetkit/xetkit/hub/repos"
)

// Clone and fetch: info/refs and git-upload-pack, in protocol v2 where
// the client asks for it (Git-Protocol: version=2, as git since 2.26
// does) and v0 otherwise.

// agent is what the hub tells git it is.
const agent = "agent=xetkit"

// wantsV2 reports whether the client asks for protocol v2.
func wantsV2(r *http.Request) bool {
	for _, v := range strings.Split(r.Header.Get("Git-Protocol"), ":") {
		if strings.TrimSpace(v) == "version=2" {
			return true
		}
	}
	return false
}

// infoRefs answers GET …/info/refs?service=git-upload-pack|git-receive-pack:
// the refs and capabilities (v0), or for upload-pack in v2 the
// capabilities alone.
func (s *Server) infoRefs(w http.ResponseWriter, r *http.Request, u *repos.User, id repos.ID) {
	service := r.URL.Query().Get("service")
	if service != "git-upload-pack" && service != "git-receive-pack" {
		s.ans.Fail(w, http.StatusForbidden, "service=%q: this hub speaks git's smart HTTP only (git-upload-pack, git-receive-pack); use git 1.6.6 or later", service)
		return
	}
	if service == "git-receive-pack" {
		if err := s.repos.MayCommit(u, id); err != nil {
			s.fail(w, r, u, "push", err)
			return
		}
	}
	refs, head, err := s.repos.GitRefs(u, id)
	if errors.Is(err, repos.ErrRepoNotFound) && service == "git-receive-pack" && u != nil {
		refs, err = nil, nil // a push makes the repository (the local hub's convenience)
	}
	if err != nil {
		s.fail(w, r, u, "refs", err)
		return
	}
	w.Header().Set("Content-Type", "application/x-"+service+"-advertisement")
	w.Header().Set("Cache-Control", "no-cache")
	e := pktline.NewEncoder(w)
	if service == "git-upload-pack" && wantsV2(r) {
		e.EncodeString("version 2\n", agent+"\n", "ls-refs=unborn\n", "fetch=shallow\n", "object-format=sha1\n")
		e.Flush()
		return
	}
	e.Encodef("# service=%s\n", service)
	e.Flush()
	caps := "report-status delete-refs side-band-64k quiet atomic ofs-delta no-thin object-format=sha1 " + agent
	if service == "git-upload-pack" {
		caps = "side-band-64k thin-pack ofs-delta shallow no-progress include-tag object-format=sha1 " + agent
		if head != "" {
			caps += " symref=HEAD:" + head
		}
	}
	first := true
	line := func(oid, name string) {
		if first {
			e.Encodef("%s %s\x00%s\n", oid, name, caps)
			first = false
			return
		}
		e.Encodef("%s %s\n", oid, name)
	}
	if head != "" && service == "git-upload-pack" {
		for _, ref := range refs {
			if ref.Name == head {
				line(ref.Commit, "HEAD")
			}
		}
	}
	for _, ref := range refs {
		line(ref.Commit, ref.Name)
	}
	if first { // no refs: the capabilities alone
		line(repos.ZeroID, "capabilities^{}")
	}
	e.Flush()
}

// uploadPack answers POST …/git-upload-pack.
func (s *Server) uploadPack(w http.ResponseWriter, r *http.Request, u *repos.User, id repos.ID) {
	in, err := body(r)
	if err != nil {
		s.ans.Fail(w, http.StatusBadRequest, "reading the request: %v", err)
		return
	}
	in = io.LimitReader(in, maxRequestBytes)
	w.Header().Set("Content-Type", "application/x-git-upload-pack-result")
	w.Header().Set("Cache-Control", "no-cache")
	if wantsV2(r) {
		s.uploadPackV2(w, u, id, in)
		return
	}
	s.uploadPackV0(w, u, id, in)
}

// maxRequestBytes bounds a fetch's negotiation (its wants and haves).
const maxRequestBytes = 64 << 20

// packet is one pkt-line of a v2 request: data, or the flush (0000) or
// delim (0001) packet.
type packet struct {
	flush, delim bool
	data         string
}

// readPackets reads v2 pkt-lines up to the next flush. go-git v5's
// scanner refuses the delim packet, which v2 requests hold.
func readPackets(r *bufio.Reader) ([]packet, error) {
	var out []packet
	for {
		var n [4]byte
		if _, err := io.ReadFull(r, n[:]); err != nil {
			if err == io.EOF && len(out) == 0 {
				return nil, io.EOF
			}
			return nil, fmt.Errorf("%w: a request cut short", errBadRequest)
		}
		size, err := strconv.ParseUint(string(n[:]), 16, 16)
		if err != nil {
			return nil, fmt.Errorf("%w: pkt-line length %q", errBadRequest, n)
		}
		switch {
		case size == 0:
			return append(out, packet{flush: true}), nil
		case size == 1:
			out = append(out, packet{delim: true})
			continue
		case size < 4:
			return nil, fmt.Errorf("%w: pkt-line length %d", errBadRequest, size)
		}
		b := make([]byte, size-4)
		if _, err := io.ReadFull(r, b); err != nil {
			return nil, fmt.Errorf("%w: a request cut short", errBadRequest)
		}
		out = append(out, packet{data: strings.TrimSuffix(string(b), "\n")})
	}
}

// uploadPackV2 answers the commands of a v2 request: ls-refs and fetch.
func (s *Server) uploadPackV2(w http.ResponseWriter, u *repos.User, id repos.ID, in io.Reader) {
	br := bufio.NewReader(in)
	pkts, err := readPackets(br)
	if err != nil {
		s.ans.Fail(w, http.StatusBadRequest, "%v", err)
		return
	}
	command := ""
	var args []string
	afterDelim := false
	for _, p := range pkts {
		switch {
		case p.delim:
			afterDelim = true
		case p.flush:
		case !afterDelim && strings.HasPrefix(p.data, "command="):
			command = strings.TrimPrefix(p.data, "command=")
		case afterDelim:
			args = append(args, p.data)
		}
	}
	switch command {
	case "ls-refs":
		s.lsRefs(w, u, id, args)
	case "fetch":
		s.fetchV2(w, u, id, args)
	default:
		s.ans.Fail(w, http.StatusBadRequest, "git protocol v2 command %q: this hub answers ls-refs and fetch", command)
	}
}

// lsRefs answers a v2 ls-refs: the refs under the prefixes asked for (all
// without any), HEAD first with its target when symrefs is asked for.
func (s *Server) lsRefs(w http.ResponseWriter, u *repos.User, id repos.ID, args []string) {
	refs, head, err := s.repos.GitRefs(u, id)
	if err != nil {
		s.fail(w, nil, u, "refs", err)
		return
	}
	symrefs, unborn := false, false
	var prefixes []string
	for _, a := range args {
		switch {
		case a == "symrefs":
			symrefs = true
		case a == "unborn":
			unborn = true
		case strings.HasPrefix(a, "ref-prefix "):
			prefixes = append(prefixes, strings.TrimPrefix(a, "ref-prefix "))
		}
	}
	asked := func(name string) bool {
		if len(prefixes) == 0 {
			return true
		}
		for _, p := range prefixes {
			if strings.HasPrefix(name, p) {
				return true
			}
		}
		return false
	}
	e := pktline.NewEncoder(w)
	if asked("HEAD") {
		target := ""
		for _, ref := range refs {
			if ref.Name == head {
				target = ref.Commit
			}
		}
		switch {
		case target != "" && symrefs:
			e.Encodef("%s HEAD symref-target:%s\n", target, head)
		case target != "":
			e.Encodef("%s HEAD\n", target)
		case unborn && symrefs:
			e.Encodef("unborn HEAD symref-target:%s\n", "refs/heads/"+repos.DefaultBranch)
		}
	}
	for _, ref := range refs {
		if asked(ref.Name) {
			e.Encodef("%s %s\n", ref.Commit, ref.Name)
		}
	}
	e.Flush()
}

// fetchV2 answers a v2 fetch: the acknowledgments of the haves (and ready:
// the hub works out what to send from the haves it has, in one round),
// the shallow boundary, then the pack on side-band channel 1.
func (s *Server) fetchV2(w http.ResponseWriter, u *repos.User, id repos.ID, args []string) {
	var q repos.FetchRequest
	done := false
	for _, a := range args {
		k, v, _ := strings.Cut(a, " ")
		if err := readFetchLine(&q, k, v); err != nil {
			s.ans.Fail(w, http.StatusBadRequest, "%v", err)
			return
		}
		switch k {
		case "deepen-relative":
			q.Relative = true
		case "done":
			done = true
		case "deepen-since", "deepen-not", "filter", "want-ref", "packfile-uris":
			s.ans.Fail(w, http.StatusBadRequest, "fetch %s: this hub does not take it (deepen N does)", k)
			return
		}
	}
	if !s.keepCommon(w, u, id, &q) {
		return
	}
	f, err := s.repos.GitFetch(u, id, q)
	if err != nil {
		s.fail(w, nil, u, "fetch", err)
		return
	}
	e := pktline.NewEncoder(w)
	if !done {
		e.EncodeString("acknowledgments\n")
		if len(q.Haves) == 0 {
			e.EncodeString("NAK\n")
		}
		for _, c := range q.Haves {
			e.Encodef("ACK %s\n", c)
		}
		e.EncodeString("ready\n")
		w.Write([]byte("0001"))
	}
	if q.Depth > 0 || len(q.Shallow) > 0 {
		e.EncodeString("shallow-info\n")
		for _, c := range f.Shallow {
			e.Encodef("shallow %s\n", c)
		}
		for _, c := range f.Unshallow {
			e.Encodef("unshallow %s\n", c)
		}
		w.Write([]byte("0001"))
	}
	e.EncodeString("packfile\n")
	s.sendPack(w, f.Objects)
	e.Flush()
}

// readFetchLine reads into q a line of a fetch request that git writes
// alike in protocol v0 and v2: want, have, shallow or deepen, key being
// the line's first word and value the rest. A line of another kind is
// left to the protocol's own reading (nil). The error is the client's,
// answered 400.
func readFetchLine(q *repos.FetchRequest, key, value string) error {
	switch key {
	case "want":
		q.Wants = append(q.Wants, value)
	case "have":
		q.Haves = append(q.Haves, value)
	case "shallow":
		q.Shallow = append(q.Shallow, value)
	case "deepen":
		n, err := strconv.Atoi(value)
		if err != nil || n < 1 {
			return fmt.Errorf("deepen %q: want a positive number", value)
		}
		q.Depth = n
	}
	return nil
}

// uploadPackV0 answers a v0 upload-pack request (stateless, as over
// HTTP, and without multi_ack): wants, shallows, deepen, then haves and
// done. Without done (a negotiation round) it says whether a have is
// common; with done, it sends the pack.
func (s *Server) uploadPackV0(w http.ResponseWriter, u *repos.User, id repos.ID, in io.Reader) {
	br := bufio.NewReader(in)
	var q repos.FetchRequest
	done := false
	for {
		pkts, err := readPackets(br)
		if err == io.EOF {
			break
		}
		if err != nil {
			s.ans.Fail(w, http.StatusBadRequest, "%v", err)
			return
		}
		for _, p := range pkts {
			k, v, _ := strings.Cut(p.data, " ")
			if k == "want" {
				v, _, _ = strings.Cut(v, " ") // the first want carries the capabilities
			}
			if err := readFetchLine(&q, k, v); err != nil {
				s.ans.Fail(w, http.StatusBadRequest, "%v", err)
				return
			}
			if k == "done" {
				done = true
			}
		}
		if done {
			break
		}
	}
	if !s.keepCommon(w, u, id, &q) {
		return
	}
	e := pktline.NewEncoder(w)
	var f *repos.GitFetch
	if q.Depth > 0 || done {
		var err error
		if f, err = s.repos.GitFetch(u, id, q); err != nil {
			s.fail(w, nil, u, "fetch", err)
			return
		}
	}
	if q.Depth > 0 {
		for _, c := range f.Shallow {
			e.Encodef("shallow %s\n", c)
		}
		for _, c := range f.Unshallow {
			e.Encodef("unshallow %s\n", c)
		}
		e.Flush()
	}
	switch {
	case len(q.Haves) > 0:
		e.Encodef("ACK %s\n", q.Haves[len(q.Haves)-1])
	default:
		e.EncodeString("NAK\n")
	}
	if !done {
		return
	}
	s.sendPack(w, f.Objects)
	e.Flush()
}

// sendPack writes the pack of objects on side-band channel 1 (an error,
// once writing began, on channel 3).
func (s *Server) sendPack(w io.Writer, objects []repos.GitObject) {
	sb := &sideband{w: w, ch: 1}
	if err := writePack(sb, objects); err != nil {
		(&sideband{w: w, ch: 3}).Write([]byte("the hub could not write the pack: " + err.Error() + "\n"))
	}
}

// sideband writes pkt-lines of one side-band channel (the channel byte,
// then at most 65515 bytes of data each).
type sideband struct {
	w  io.Writer
	ch byte
}

func (s *sideband) Write(p []byte) (int, error) {
	e := pktline.NewEncoder(s.w)
	n := 0
	for len(p) > 0 {
		k := min(len(p), pktline.MaxPayloadSize-1)
		if err := e.Encode(append([]byte{s.ch}, p[:k]...)); err != nil {
			return n, err
		}
		n += k
		p = p[k:]
	}
	return n, nil
}

// keepCommon keeps of q's haves those the repository holds (what a
// client's haves and the hub have in common, which it acknowledges);
// false when it answered a failure.
func (s *Server) keepCommon(w http.ResponseWriter, u *repos.User, id repos.ID, q *repos.FetchRequest) bool {
	common, err := s.repos.RefsHave(u, id, q.Haves)
	if err != nil {
		s.fail(w, nil, u, "fetch", err)
		return false
	}
	q.Haves = common
	return true
}
