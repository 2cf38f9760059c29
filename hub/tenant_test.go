package hub_test

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/xetkit/xetkit/cas"
	"github.com/xetkit/xetkit/hub"
	"github.com/xetkit/xetkit/hub/repos"
	"github.com/xetkit/xetkit/hub/store"
	"github.com/xetkit/xetkit/hubclient"
	"github.com/xetkit/xetkit/pipeline"
	"github.com/xetkit/xetkit/shard"
	"github.com/xetkit/xetkit/xethash"
)

// A team whose member means harm: what mallory can do to alice, through
// the routes alone. The same attacks through the reference client are in
// test/python/test_hostile.py.

// Tokens of the team hub's people: alice (and her read token), bob,
// mallory; the organisation acme is alice's alone, lab alice's and
// mallory's.
const (
	aliceTok     = "hf_alice_write"
	aliceReadTok = "hf_alice_read"
	bobTok       = "hf_bob_write"
	malloryTok   = "hf_mallory_write"
)

// newTeam starts a hub with the team's people.
func newTeam(t *testing.T, cfg hub.Config) *testHub {
	t.Helper()
	sum := func(tok string) string { s := sha256.Sum256([]byte(tok)); return hex.EncodeToString(s[:]) }
	users, err := repos.ParseUsers([]byte(`{"users": [
		{"name": "alice", "tokens": [{"sha256": "` + sum(aliceTok) + `", "role": "write"}, {"sha256": "` + sum(aliceReadTok) + `", "role": "read"}]},
		{"name": "bob", "tokens": [{"sha256": "` + sum(bobTok) + `", "role": "write"}]},
		{"name": "mallory", "tokens": [{"sha256": "` + sum(malloryTok) + `", "role": "write"}]}],
		"orgs": [{"name": "acme", "members": ["alice"]}, {"name": "lab", "members": ["alice", "mallory"]}]}`))
	if err != nil {
		t.Fatal(err)
	}
	cfg.Users = users
	return newHub(t, cfg)
}

// as is a Hub client of repo with a user token.
func (th *testHub) as(tok, repo string) *hubclient.Client {
	return &hubclient.Client{Client: cas.Client{Hub: th.srv.URL, Repo: repo, Token: tok, HTTP: cas.HTTPClient(th.srv.Client())}}
}

// commitAs commits data at path of repo with a user token and returns the
// file's SHA-256 (hex).
func (th *testHub) commitAs(tok, repo, path string, data []byte) string {
	th.t.Helper()
	res, err := th.as(tok, repo).Commit(context.Background(), []hubclient.RepoFile{
		{Path: path, Source: pipeline.Source{Name: path, Size: int64(len(data)), Open: bytesOpener(data)}},
	}, hubclient.CommitOptions{})
	if err != nil {
		th.t.Fatal(err)
	}
	return res.Files[0].SHA256
}

// casTokenAs is a CAS token of repo for a user token.
func (th *testHub) casTokenAs(tok, repo, kind string) string {
	th.t.Helper()
	var answer struct{ AccessToken string }
	th.decode("GET", "/api/models/"+repo+"/xet-"+kind+"-token/main", tok, nil, 200, &answer)
	return answer.AccessToken
}

// claiming is f's upload-form shard whose metadata says its content has
// SHA-256 sha (hex): a claim the hub cannot check without hashing f.
func (f *file) claiming(t *testing.T, sha string) []byte {
	t.Helper()
	s, err := shard.Parse(f.shard(t, true))
	if err != nil {
		t.Fatal(err)
	}
	h, err := xethash.Parse(sha)
	if err != nil {
		t.Fatal(err)
	}
	s.Files[0].SHA256 = &h
	b, err := s.Marshal(shard.WriteOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// xetHashAt is the xet hash of the file at path of repo.
func (th *testHub) xetHashAt(tok, repo, path string) string {
	th.t.Helper()
	var info []struct{ XetHash string }
	status, body, _ := th.do("POST", "/api/models/"+repo+"/paths-info/main", tok, []byte(`{"paths":["`+path+`"]}`), "Content-Type", "application/json")
	if status != 200 || json.Unmarshal(body, &info) != nil || len(info) != 1 {
		th.t.Fatalf("paths-info of %s in %s: %d %s", path, repo, status, body)
	}
	return info[0].XetHash
}

// lfsNeedsUpload asks the LFS batch of repo whether an object must be
// sent (true) or is there already (false).
func (th *testHub) lfsNeedsUpload(tok, repo, oid string, size int) bool {
	th.t.Helper()
	var answer struct {
		Objects []struct {
			Actions map[string]any
			Error   any
		}
	}
	body, _ := json.Marshal(map[string]any{"operation": "upload", "transfers": []string{"basic"}, "objects": []any{map[string]any{"oid": oid, "size": size}}})
	th.decode("POST", "/"+repo+".git/info/lfs/objects/batch", tok, body, 200, &answer)
	if len(answer.Objects) != 1 || answer.Objects[0].Error != nil {
		th.t.Fatalf("LFS batch answer %+v", answer)
	}
	return answer.Objects[0].Actions["upload"] != nil
}

// Mallory's shard claims the SHA-256 of alice's file for her own bytes.
// The claim is hers alone: alice's copy of her file, and her LFS upload
// of bytes mallory claimed first, get alice's bytes.
func TestClaimedSHA256IsTheUploadersWordAlone(t *testing.T) {
	th := newTeam(t, hub.Config{})
	a := randomData(201, 300<<10)
	aliceSHA := th.commitAs(aliceTok, "alice/x", "a.bin", a)
	aliceXet := th.xetHashAt(aliceTok, "alice/x", "a.bin")

	// Mallory's bytes, uploaded to her own repo, claiming alice's SHA-256.
	m := makeFile(t, 202, 300<<10)
	mtok := th.casTokenAs(malloryTok, "mallory/x", "write")
	th.putXorb(mtok, m)
	th.putShard(mtok, m.claiming(t, aliceSHA))

	// alice copies her file within her repo, by its SHA-256 alone.
	th.decode("POST", "/api/models/alice/x/commit/main", aliceTok, commitBody(map[string]any{"summary": "copy"},
		map[string]any{"key": "lfsFile", "value": map[string]any{"path": "copy.bin", "algo": "sha256", "oid": aliceSHA}}), 200, nil)
	if got := th.xetHashAt(aliceTok, "alice/x", "copy.bin"); got != aliceXet {
		t.Fatalf("alice's copy of a.bin is xet file %s, not hers (%s); mallory's is %s", got, aliceXet, m.hash)
	}

	// Bytes alice has not uploaded yet, which mallory claims first: the
	// LFS batch asks alice to send them rather than saying they are there.
	b := randomData(203, 200<<10)
	sum := sha256.Sum256(b)
	bSHA := hex.EncodeToString(sum[:])
	m2 := makeFile(t, 204, 200<<10)
	th.putXorb(mtok, m2)
	th.putShard(mtok, m2.claiming(t, bSHA))
	if !th.lfsNeedsUpload(aliceTok, "alice/y", bSHA, len(b)) {
		t.Fatal("alice's LFS batch says the bytes mallory claimed are there already")
	}
	status, body, _ := th.do("POST", "/api/models/alice/y/commit/main", aliceTok, commitBody(map[string]any{"summary": "b"},
		map[string]any{"key": "lfsFile", "value": map[string]any{"path": "b.bin", "algo": "sha256", "oid": bSHA, "size": len(b)}}))
	wantStatus(t, "alice commits bytes she never uploaded", status, body, 400, "no file with SHA-256")

	// Mallory's claim holds for mallory, in her repo: her own word (until the hub hashes
	// her file, below).
	th.decode("POST", "/api/models/mallory/x/commit/main", malloryTok, commitBody(map[string]any{"summary": "hers"},
		map[string]any{"key": "lfsFile", "value": map[string]any{"path": "m.bin", "algo": "sha256", "oid": bSHA}}), 200, nil)
	if got := th.xetHashAt(malloryTok, "mallory/x", "m.bin"); got != m2.hash.String() {
		t.Fatalf("mallory's commit of her claim is %s, not her file %s", got, m2.hash)
	}

	// In a repository both may write, mallory's claim is not alice's
	// either: her batch asks for the bytes, and a commit of the SHA-256
	// hashes mallory's file, finds it false and refuses.
	ltok := th.casTokenAs(malloryTok, "lab/shared", "write")
	th.putXorb(ltok, m2)
	th.putShard(ltok, m2.claiming(t, bSHA))
	if !th.lfsNeedsUpload(aliceTok, "lab/shared", bSHA, len(b)) {
		t.Fatal("alice's LFS batch in lab/shared says the bytes mallory claimed there are there already")
	}
	status, body, _ = th.do("POST", "/api/models/lab/shared/commit/main", aliceTok, commitBody(map[string]any{"summary": "b"},
		map[string]any{"key": "lfsFile", "value": map[string]any{"path": "b.bin", "algo": "sha256", "oid": bSHA}}))
	wantStatus(t, "alice commits what mallory claims in lab/shared", status, body, 400, "no file with SHA-256")
	// Hashed and found false, the claim holds for no one any more.
	status, body, _ = th.do("POST", "/api/models/mallory/x/commit/main", malloryTok, commitBody(map[string]any{"summary": "again"},
		map[string]any{"key": "lfsFile", "value": map[string]any{"path": "m2.bin", "algo": "sha256", "oid": bSHA}}))
	wantStatus(t, "mallory commits her claim once refuted", status, body, 400, "no file with SHA-256")

}

// Mallory cannot commit, or learn of, a file of alice's private repo by
// its SHA-256: not by a commit, an LFS batch or lfs-files/duplicate.
func TestPrivateFileNotReadBySHA256(t *testing.T) {
	th := newTeam(t, hub.Config{})
	th.decode("POST", "/api/repos/create", aliceTok, []byte(`{"name":"secret","organization":"acme","private":true}`), 200, nil)
	w := randomData(211, 300<<10)
	wSHA := th.commitAs(aliceTok, "acme/secret", "weights.bin", w)
	wXet := th.xetHashAt(aliceTok, "acme/secret", "weights.bin")
	mallory := func(path string, body []byte) (int, []byte) {
		status, b, _ := th.do("POST", path, malloryTok, body)
		return status, b
	}

	th.decode("POST", "/api/repos/create", malloryTok, []byte(`{"name":"pub"}`), 200, nil)
	before := th.head("mallory/pub")
	status, body := mallory("/api/models/mallory/pub/commit/main", commitBody(map[string]any{"summary": "steal"},
		map[string]any{"key": "lfsFile", "value": map[string]any{"path": "stolen.bin", "algo": "sha256", "oid": wSHA}}))
	wantStatus(t, "mallory commits the private file's SHA-256", status, body, 400, "no file with SHA-256")
	if th.head("mallory/pub") != before {
		t.Fatal("mallory's commit moved her branch")
	}
	if !th.lfsNeedsUpload(malloryTok, "mallory/pub", wSHA, len(w)) {
		t.Fatal("the LFS batch tells mallory the private file exists")
	}
	for _, xet := range []string{wXet, strings.Repeat("0", 64)} {
		status, body = mallory("/api/models/mallory/pub/lfs-files/duplicate", []byte(`{"target":{"type":"model","name":"mallory/pub"},"files":[{"xetHash":"`+xet+`","sha256":"`+wSHA+`","filename":"w"}]}`))
		var answer struct{ Failed []struct{ Error string } }
		if status != 200 || json.Unmarshal(body, &answer) != nil || len(answer.Failed) != 1 {
			t.Fatalf("duplicate from mallory/pub: %d %s", status, body)
		}
		if xet != wXet && strings.Contains(string(body), wXet) {
			t.Fatalf("the duplicate answer gives away the private file's xet hash: %s", body)
		}
	}
	status, body = mallory("/api/models/acme/secret/lfs-files/duplicate", []byte(`{"target":{"type":"model","name":"mallory/pub"},"files":[{"xetHash":"`+wXet+`","sha256":"`+wSHA+`","filename":"w"}]}`))
	wantStatus(t, "duplicate from the private repo", status, body, 404)
	status, body = mallory("/api/models/mallory/pub/commit/main", commitBody(map[string]any{"summary": "steal"},
		map[string]any{"key": "lfsFile", "value": map[string]any{"path": "stolen.bin", "algo": "sha256", "oid": wSHA}}))
	wantStatus(t, "mallory's commit after the duplicates", status, body, 400, "no file with SHA-256")

	// alice copies her own file out of the private repo: the duplicate,
	// on the source, lets the target read it.
	th.decode("POST", "/api/repos/create", aliceTok, []byte(`{"name":"public"}`), 200, nil)
	th.decode("POST", "/api/models/acme/secret/lfs-files/duplicate", aliceTok, []byte(`{"target":{"type":"model","name":"alice/public"},"files":[{"xetHash":"`+wXet+`","sha256":"`+wSHA+`","filename":"w"}]}`), 200, nil)
	th.decode("POST", "/api/models/alice/public/commit/main", aliceTok, commitBody(map[string]any{"summary": "copy"},
		map[string]any{"key": "lfsFile", "value": map[string]any{"path": "w.bin", "algo": "sha256", "oid": wSHA}}), 200, nil)
	if got := th.xetHashAt(aliceTok, "alice/public", "w.bin"); got != wXet {
		t.Fatalf("alice's copy is %s, not %s", got, wXet)
	}
}

// sendBody sends a request announcing a body of size bytes over a
// connection of its own, a JSON string that never ends ({"name":"aaa…,
// never held in memory), and returns the status and how many of the bytes
// the connection took before the hub answered and closed it: a hub that
// does not read the body takes little of it.
func (th *testHub) sendBody(method, path, token string, size int64) (status int, sent int64) {
	th.t.Helper()
	c, err := net.Dial("tcp", th.srv.Listener.Addr().String())
	if err != nil {
		th.t.Fatal(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(20 * time.Second))
	auth := ""
	if token != "" {
		auth = "Authorization: Bearer " + token + "\r\n"
	}
	fmt.Fprintf(c, "%s %s HTTP/1.1\r\nHost: x\r\n%sContent-Type: application/json\r\nContent-Length: %d\r\n\r\n", method, path, auth, size)
	var n atomic.Int64
	done := make(chan struct{})
	go func() {
		defer close(done)
		buf := bytes.Repeat([]byte("a"), 64<<10)
		copy(buf, `{"name":"`)
		for n.Load() < size {
			if n.Load() > 0 {
				copy(buf, "aaaaaaaaa")
			}
			k, err := c.Write(buf[:min(int64(len(buf)), size-n.Load())])
			n.Add(int64(k))
			if err != nil {
				return
			}
		}
	}()
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		th.t.Fatalf("%s %s: %v", method, path, err)
	}
	resp.Body.Close()
	c.Close()
	<-done
	return resp.StatusCode, n.Load()
}

// A stranger's body is not read: every route that changes something
// answers 401 from the headers; a route anyone may call reads no more than
// its limit.
func TestStrangersBodiesAreNotRead(t *testing.T) {
	th := newTeam(t, hub.Config{})
	th.commitAs(aliceTok, "alice/x", "a.txt", []byte("a"))
	const size = 256 << 20
	const most = 24 << 20 // socket buffers take some before the hub closes
	repo := "/api/models/alice/x"
	for _, c := range []struct{ method, path string }{
		{"POST", "/api/repos/create"}, {"DELETE", "/api/repos/delete"}, {"POST", "/api/repos/move"},
		{"POST", repo + "/preupload/main"}, {"POST", repo + "/commit/main"}, {"POST", repo + "/lfs-files/duplicate"},
		{"POST", repo + "/branch/dev"}, {"DELETE", repo + "/branch/dev"}, {"POST", repo + "/tag/main"}, {"DELETE", repo + "/tag/v1"},
		{"POST", repo + "/discussions"}, {"POST", repo + "/discussions/1/comment"}, {"POST", repo + "/discussions/1/status"},
		{"POST", repo + "/discussions/1/title"}, {"POST", repo + "/discussions/1/merge"},
		{"PUT", repo + "/settings"}, {"POST", repo + "/duplicate"}, {"POST", repo + "/super-squash/main"},
		{"POST", "/alice/x.git/git-receive-pack"},
	} {
		status, sent := th.sendBody(c.method, c.path, "", size)
		if status != http.StatusUnauthorized || sent > most {
			t.Errorf("anonymous %s %s with %d bytes: %d after %d bytes sent, want 401 with under %d", c.method, c.path, size, status, sent, most)
		}
	}
	// Routes anyone may call, and a signed-in caller's body, are read up
	// to the route's limit.
	for _, c := range []struct{ method, path, token string }{
		{"POST", "/api/validate-yaml", ""},
		{"POST", repo + "/paths-info/main", ""},
		{"POST", "/alice/x.git/info/lfs/objects/batch", ""}, // downloads of public repositories answer anyone
		{"PUT", repo + "/settings", aliceTok},
		{"POST", repo + "/discussions", malloryTok},
	} {
		status, sent := th.sendBody(c.method, c.path, c.token, size)
		if status != http.StatusBadRequest || sent > most {
			t.Errorf("%s %s with %d bytes: %d after %d bytes sent, want 400 with under %d", c.method, c.path, size, status, sent, most)
		}
	}
}

// recordSize is the size of repo's record in the store.
func (th *testHub) recordSize(repo string) int {
	th.t.Helper()
	b, err := store.Read(hub.StoreOf(th.h), store.Repos, "models/"+repo)
	if err != nil {
		th.t.Fatal(err)
	}
	return len(b)
}

// What mallory adds to the discussions of alice's public repository is
// bounded (texts, events, discussions opened) and costs only those who
// read them: the repository's record, which every read and listing
// parses, does not grow with them.
func TestDiscussionsCostOnlyTheirReaders(t *testing.T) {
	th := newTeam(t, hub.Config{})
	th.commitAs(aliceTok, "alice/x", "a.txt", []byte("a"))
	repo := "/api/models/alice/x"
	open := func(title, description string) (int, []byte) {
		b, _ := json.Marshal(map[string]any{"title": title, "description": description})
		status, body, _ := th.do("POST", repo+"/discussions", malloryTok, b)
		return status, body
	}
	status, body := open(strings.Repeat("t", 201), "")
	wantStatus(t, "a 201-character title", status, body, 400, "at most 200")
	status, body = open("big", strings.Repeat("d", 64<<10+1))
	wantStatus(t, "a description over 64 KiB", status, body, 400, "at most 65536")

	before := th.recordSize("alice/x")
	text := strings.Repeat("x", 64<<10)
	for i := range 40 {
		status, body = open(fmt.Sprintf("spam %d", i), text)
		wantStatus(t, "a discussion of 64 KiB", status, body, 200)
	}
	c, _ := json.Marshal(map[string]string{"comment": text})
	th.decode("POST", repo+"/discussions/1/comment", malloryTok, c, 200, nil)
	if after := th.recordSize("alice/x"); after > before+200 {
		t.Fatalf("alice/x's record grew from %d to %d bytes with mallory's 40 discussions", before, after)
	}
	for i := 40; i < 100; i++ {
		status, body = open(fmt.Sprintf("spam %d", i), "")
		wantStatus(t, "a discussion", status, body, 200)
	}
	status, body = open("one too many", "")
	wantStatus(t, "mallory's 101st discussion in alice/x", status, body, 429, "the most one who may not write to it opens")
	th.decode("POST", repo+"/discussions", aliceTok, []byte(`{"title":"the owner's own"}`), 200, nil) // alice is not bounded in her own repo

	// Only its author, or one who may write the repository, retitles a
	// discussion.
	th.decode("POST", repo+"/discussions/1/title", bobTok, []byte(`{"title":"bob's title"}`), 403, nil)
	th.decode("POST", repo+"/discussions/1/title", malloryTok, []byte(`{"title":"mallory's own title"}`), 200, nil)
	th.decode("POST", repo+"/discussions/1/title", aliceTok, []byte(`{"title":"alice's title"}`), 200, nil)

	// A discussion holds at most 1,000 events: #2's record is given 998
	// more comments than its description (straight into the store: a
	// thousand requests would take this test half a minute).
	st := hub.StoreOf(th.h)
	var rec struct{ UID string }
	if b, err := store.Read(st, store.Repos, "models/alice/x"); err != nil || json.Unmarshal(b, &rec) != nil || rec.UID == "" {
		t.Fatalf("alice/x's record: %v %+v", err, rec)
	}
	name := rec.UID + "/2"
	old, err := store.Read(st, store.Discussions, name)
	var thread struct{ Events []map[string]any }
	if err != nil || json.Unmarshal(old, &thread) != nil || len(thread.Events) != 1 {
		t.Fatalf("discussion 2's record: %v %s", err, old)
	}
	for i := range 998 {
		e := map[string]any{}
		for k, v := range thread.Events[0] {
			e[k] = v
		}
		e["id"] = fmt.Sprint("filler", i)
		thread.Events = append(thread.Events, e)
	}
	filled, _ := json.Marshal(thread)
	if err := st.Swap(store.Discussions, name, old, filled); err != nil {
		t.Fatal(err)
	}
	th.decode("POST", repo+"/discussions/2/comment", malloryTok, []byte(`{"comment":"the thousandth"}`), 200, nil)
	th.decode("POST", repo+"/discussions/2/comment", malloryTok, []byte(`{"comment":"one too many"}`), 409, nil)
	var d struct{ Events []any }
	th.decode("GET", repo+"/discussions/2", malloryTok, nil, 200, &d)
	if len(d.Events) != 1000 {
		t.Fatalf("discussion 2 has %d events, want 1000", len(d.Events))
	}
}

// Mallory's 32 stalled uploads hold her share of the upload slots, not
// every slot: alice's xorb and shard go in meanwhile.
func TestUploadSlotsAreShared(t *testing.T) {
	th := newTeam(t, hub.Config{MaxUploads: 32})
	mtok := th.casTokenAs(malloryTok, "mallory/x", "write")
	var conns []net.Conn
	defer func() {
		for _, c := range conns {
			c.Close()
		}
	}()
	for range 32 {
		conns = append(conns, stalledUpload(t, th.srv.Listener.Addr().String(), mtok))
	}
	for deadline := time.Now().Add(30 * time.Second); hub.UploadsReading(th.h) < 24; time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("mallory's stalled uploads never started: %d being read", hub.UploadsReading(th.h))
		}
	}
	f := makeFile(t, 221, 100<<10)
	status, body, _ := th.do("POST", "/v1/xorbs/default/"+f.xorb.Hash.String(), mtok, f.xorb.Bytes)
	wantStatus(t, "mallory's 33rd upload", status, body, http.StatusServiceUnavailable, "share")
	atok := th.casTokenAs(aliceTok, "alice/x", "write")
	th.putXorb(atok, f)
	th.putShard(atok, f.shard(t, true))
	if n := hub.UploadsReading(th.h); n != 24 {
		t.Fatalf("%d uploads being read, want mallory's 24", n)
	}
}

// A CAS token handed out because a repository was public reads it only
// while it is: once private, the token is refused.
func TestPublicTokenEndsWhenTheRepositoryTurnsPrivate(t *testing.T) {
	th := newTeam(t, hub.Config{})
	th.commitAs(aliceTok, "alice/x", "w.bin", randomData(231, 100<<10))
	xet := th.xetHashAt(aliceTok, "alice/x", "w.bin")
	mtok := th.casTokenAs(malloryTok, "alice/x", "read")
	owner := th.casTokenAs(aliceTok, "alice/x", "read")
	th.decode("GET", "/v1/reconstructions/"+xet, mtok, nil, 200, nil)
	th.decode("PUT", "/api/models/alice/x/settings", aliceTok, []byte(`{"private":true}`), 200, nil)
	status, body, _ := th.do("GET", "/v1/reconstructions/"+xet, mtok, nil)
	wantStatus(t, "mallory's token once alice/x is private", status, body, http.StatusUnauthorized, "no longer public")
	th.decode("GET", "/v1/reconstructions/"+xet, owner, nil, 200, nil) // alice's own token still reads
	th.decode("GET", "/api/models/alice/x/xet-read-token/main", malloryTok, nil, 404, nil)
}

// A regular file given inline is under 10 MiB, as on the Hub: a larger
// one goes through LFS or Xet, and one near the limit is served as the
// store reads it.
func TestInlineFilesAreBounded(t *testing.T) {
	th := newTeam(t, hub.Config{})
	big := strings.Repeat("x", 10<<20)
	status, body, _ := th.do("POST", "/api/models/mallory/x/commit/main", malloryTok, commitBody(map[string]any{"summary": "big"}, inlineFile("big.txt", big)))
	wantStatus(t, "a 10 MiB inline file", status, body, 400, "go through LFS or Xet")
	near := big[:10<<20-1]
	th.decode("POST", "/api/models/mallory/x/commit/main", malloryTok, commitBody(map[string]any{"summary": "near"}, inlineFile("near.txt", near)), 200, nil)
	status, b, _ := th.do("GET", "/mallory/x/resolve/main/near.txt", "", nil, "Range", "bytes=5-9")
	if status != http.StatusPartialContent || string(b) != "xxxxx" {
		t.Fatalf("a range of near.txt: %d %q", status, b)
	}
	if status, b, _ = th.do("GET", "/mallory/x/resolve/main/near.txt", "", nil); status != 200 || string(b) != near {
		t.Fatalf("near.txt: %d, %d bytes", status, len(b))
	}
}

// Refs and paths that git could not keep apart are refused: branches
// that differ only in case or where one would be a folder of the other,
// and paths that differ only in case.
func TestNamesThatCollide(t *testing.T) {
	th := newTeam(t, hub.Config{})
	th.commitAs(aliceTok, "alice/x", "a.txt", []byte("a"))
	repo := "/api/models/alice/x"
	th.decode("POST", repo+"/branch/ok", aliceTok, nil, 200, nil)
	for _, b := range []string{"ok/nested", "Main", "OK"} {
		status, body, _ := th.do("POST", repo+"/branch/"+url.PathEscape(b), aliceTok, nil)
		wantStatus(t, "branch "+b, status, body, 409, "cannot stand beside")
	}
	th.decode("POST", repo+"/branch/deep%2Fer", aliceTok, nil, 200, nil)
	status, body, _ := th.do("POST", repo+"/branch/deep", aliceTok, nil)
	wantStatus(t, "branch deep beside deep/er", status, body, 409, "cannot stand beside refs/heads/deep/er")
	th.decode("POST", repo+"/tag/main", aliceTok, []byte(`{"tag":"v1"}`), 200, nil)
	status, body, _ = th.do("POST", repo+"/tag/main", aliceTok, []byte(`{"tag":"V1"}`))
	wantStatus(t, "tag V1 beside v1", status, body, 409, "cannot stand beside refs/tags/v1")
	th.decode("POST", repo+"/tag/main", aliceTok, []byte(`{"tag":"ok"}`), 200, nil) // refs/tags/ok beside refs/heads/ok, as git has them

	status, body, _ = th.do("POST", repo+"/commit/main", aliceTok, commitBody(map[string]any{"summary": "A"}, inlineFile("A.TXT", "A")))
	wantStatus(t, "A.TXT beside a.txt", status, body, 400, "differ only in case")
	th.decode("POST", repo+"/commit/main", aliceTok, commitBody(map[string]any{"summary": "rename"},
		map[string]any{"key": "deletedFile", "value": map[string]any{"path": "a.txt"}}, inlineFile("A.txt", "a")), 200, nil)
}
