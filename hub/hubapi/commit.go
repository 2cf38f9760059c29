package hubapi

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"

	"github.com/xetkit/xetkit/hub/internal/httpx"
	"github.com/xetkit/xetkit/hub/repos"
)

// MaxCommitSize bounds a commit request's body (inline files travel in it).
const MaxCommitSize = 256 << 20

// commitHeader is the first line of a commit.
type commitHeader struct {
	Summary      string `json:"summary"`
	Description  string `json:"description"`
	ParentCommit string `json:"parentCommit"`
}

// readCommit parses an NDJSON commit body: a header, then operations.
func readCommit(body io.Reader) (commitHeader, []repos.Op, error) {
	var hdr commitHeader
	var ops []repos.Op
	sc := bufio.NewScanner(body)
	// A line holds at most one inline file, under regularLimit: base64
	// takes 4/3 of it, and JSON's escapes of text up to 6 bytes a byte
	// (\u0000) in a file no one would send that way.
	sc.Buffer(make([]byte, 64<<10), 3*repos.RegularLimit)
	line := 0
	seenHeader := false
	for sc.Scan() {
		line++
		if len(bytes.TrimSpace(sc.Bytes())) == 0 {
			continue
		}
		var rec struct {
			Key   string          `json:"key"`
			Value json.RawMessage `json:"value"`
		}
		if err := json.Unmarshal(sc.Bytes(), &rec); err != nil {
			return hdr, nil, fmt.Errorf("line %d: not a JSON object: %v", line, err)
		}
		var v struct {
			Path     string `json:"path"`
			Algo     string `json:"algo"`
			OID      string `json:"oid"`
			Size     *int64 `json:"size"` // absent for a copy
			Content  string `json:"content"`
			Encoding string `json:"encoding"`
		}
		if rec.Key == "header" {
			if seenHeader {
				return hdr, nil, fmt.Errorf("line %d: a second header", line)
			}
			seenHeader = true
			if err := json.Unmarshal(rec.Value, &hdr); err != nil {
				return hdr, nil, fmt.Errorf("line %d: header: %v", line, err)
			}
			continue
		}
		if !seenHeader {
			return hdr, nil, fmt.Errorf("line %d: %q before the header", line, rec.Key)
		}
		if err := json.Unmarshal(rec.Value, &v); err != nil {
			return hdr, nil, fmt.Errorf("line %d: %s: %v", line, rec.Key, err)
		}
		if rec.Key == "file" {
			op, err := inlineOp(v.Path, v.Content, v.Encoding)
			if err != nil {
				return hdr, nil, fmt.Errorf("line %d: %v", line, err)
			}
			ops = append(ops, op)
			continue
		}
		var op repos.Op
		var err error
		switch rec.Key {
		case "lfsFile":
			if v.Algo != "" && v.Algo != "sha256" {
				return hdr, nil, fmt.Errorf("line %d: %s: algo %q (want sha256)", line, v.Path, v.Algo)
			}
			size := int64(-1)
			if v.Size != nil {
				if *v.Size < 0 {
					return hdr, nil, fmt.Errorf("line %d: %s: negative size %d", line, v.Path, *v.Size)
				}
				size = *v.Size
			}
			op, err = repos.LFSOp(v.Path, v.OID, size)
		case "deletedFile", "deletedFolder":
			op, err = repos.DeleteOp(v.Path, rec.Key == "deletedFolder")
		default:
			return hdr, nil, fmt.Errorf("line %d: unknown operation %q (want lfsFile, file, deletedFile or deletedFolder)", line, rec.Key)
		}
		if err != nil {
			return hdr, nil, fmt.Errorf("line %d: %s: %v", line, rec.Key, err)
		}
		ops = append(ops, op)
	}
	if err := sc.Err(); errors.Is(err, bufio.ErrTooLong) {
		return hdr, nil, fmt.Errorf("line %d is longer than %d bytes: a file given inline is under %d bytes; larger ones go through LFS or Xet", line+1, 3*repos.RegularLimit, repos.RegularLimit)
	} else if err != nil {
		return hdr, nil, fmt.Errorf("line %d: %v", line+1, err)
	}
	if !seenHeader {
		return hdr, nil, errors.New("no header line")
	}
	return hdr, ops, nil
}

// handleCommit answers POST /api/{type}s/{ns}/{name}/commit/{rev}: the
// service's Commit, of the body's operations. With create_pr=1 the commit
// opens a pull request instead (answered as pullRequestUrl
// .../discussions/N).
func (h *Server) handleCommit(w http.ResponseWriter, r *http.Request) {
	id, ok := h.apiRepo(w, r)
	if !ok {
		return
	}
	req := repos.CommitRequest{Branch: r.PathValue("rev")}
	switch v := r.URL.Query().Get("create_pr"); v {
	case "", "0", "false":
	case "1", "true":
		req.CreatePR = true
	default:
		h.ans.Fail(w, http.StatusBadRequest, "create_pr=%q: want 1 or 0", v)
		return
	}
	hdr, ops, err := readCommit(http.MaxBytesReader(w, r.Body, MaxCommitSize))
	if err != nil {
		h.ans.Fail(w, http.StatusBadRequest, "malformed commit: %v", err)
		return
	}
	req.Summary, req.Description, req.ParentCommit, req.Ops = hdr.Summary, hdr.Description, hdr.ParentCommit, ops
	done, err := h.repos.Commit(h.user(r), id, req)
	if err != nil {
		h.fail(w, r, "commit", err)
		return
	}
	answer := map[string]any{
		"success": true, "commitOid": done.ID, "commitUrl": h.cfg.BaseURL(r) + "/" + id.WebPrefix() + "/commit/" + done.ID,
		"hookOutput": "",
	}
	if req.CreatePR {
		answer["pullRequestUrl"] = fmt.Sprintf("%s/%s/discussions/%d", h.cfg.BaseURL(r), id.WebPrefix(), done.PR)
	}
	httpx.WriteJSON(w, http.StatusOK, answer)
}
