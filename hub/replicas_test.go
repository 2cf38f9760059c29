package hub_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/xetkit/xetkit/cas"
	"github.com/xetkit/xetkit/hub"
	"github.com/xetkit/xetkit/hub/repos"
	"github.com/xetkit/xetkit/hub/s3store/s3test"
	"github.com/xetkit/xetkit/hub/store"
	"github.com/xetkit/xetkit/hubclient"
)

// s3Hubs returns n hubs on one S3 bucket and prefix, each through a store
// and client of its own, as separate processes would be, and one more
// store on it for the test to look with.
func s3Hubs(t *testing.T, n int) ([]*testHub, store.Store) {
	t.Helper()
	srv := s3test.Start(t)
	uri := "s3://" + srv.NewBucket(t) + "/hub"
	hubs := make([]*testHub, n)
	for i := range hubs {
		hubs[i] = newHub(t, hub.Config{Store: srv.Store(t, uri)})
	}
	return hubs, srv.Store(t, uri)
}

// issued is a CAS token and a signed xorb URL (with the Range it signs)
// that one hub handed out.
type issued struct {
	token, url, rng string
	f               *file
}

// issue uploads a file through th and returns a write token and a signed
// URL of its xorb, both from th.
func issue(t *testing.T, th *testHub, seed uint64) issued {
	t.Helper()
	f := makeFile(t, seed, 300<<10)
	tok := th.token("write")
	th.putXorb(tok, f)
	th.putShard(tok, f.shard(t, true))
	status, body, _ := th.do("GET", "/v2/reconstructions/"+f.hash.String(), tok, nil)
	var v v2Answer
	if status != 200 || json.Unmarshal(body, &v) != nil || len(v.Xorbs[f.xorb.Hash.String()]) != 1 {
		t.Fatalf("reconstruction: %d %s", status, body)
	}
	x := v.Xorbs[f.xorb.Hash.String()][0]
	r := x.Ranges[0].Bytes
	return issued{token: tok, url: strings.TrimPrefix(x.URL, th.srv.URL), rng: "bytes=" + itoa(r.Start) + "-" + itoa(r.End), f: f}
}

// accepts checks that th takes what another hub issued: the token for an
// upload, the URL for the xorb's bytes.
func accepts(t *testing.T, th *testHub, is issued, seed uint64) {
	t.Helper()
	f := makeFile(t, seed, 200<<10)
	status, body, _ := th.do("POST", "/v1/xorbs/default/"+f.xorb.Hash.String(), is.token, f.xorb.Bytes)
	wantStatus(t, "xorb upload with another hub's token", status, body, 200)
	status, data, _ := th.do("GET", th.srv.URL+is.url, "", nil, "Range", is.rng)
	if status != 206 || string(decode(t, data)) != string(is.f.data) {
		t.Fatalf("another hub's xorb URL: %d %.200s", status, data)
	}
}

// TestSigningKeysOutliveTheProcess: a hub started again on the same
// folder accepts the tokens and URLs it handed out before (an upload
// interrupted by a restart resumes with the client's token).
func TestSigningKeysOutliveTheProcess(t *testing.T) {
	ownStores(t)
	dir := t.TempDir()
	first := newHub(t, hub.Config{Dir: dir})
	is := issue(t, first, 61)
	first.srv.Close()
	accepts(t, newHub(t, hub.Config{Dir: dir}), is, 62)
	// A hub on another store signs with other keys.
	other := newHub(t, hub.Config{Dir: t.TempDir()})
	status, body, _ := other.do("POST", "/v1/xorbs/default/"+is.f.xorb.Hash.String(), is.token, is.f.xorb.Bytes)
	wantStatus(t, "a token of another store's hub", status, body, 401, "signature")
}

// TestSigningKeysShared: replicas on one bucket accept each other's tokens
// and URLs, and so does a replica started later.
func TestSigningKeysShared(t *testing.T) {
	ownStores(t)
	hubs, _ := s3Hubs(t, 2)
	is := issue(t, hubs[0], 63)
	accepts(t, hubs[1], is, 64)
	back := issue(t, hubs[1], 65)
	accepts(t, hubs[0], back, 66)
	hubs[0].srv.Close()
	hubs[1].srv.Close()
}

// commitInline commits one small file to alice/m main through th, on
// parent if set, and returns the status and the commit id.
func (th *testHub) commitInline(path, content, parent string) (int, string) {
	hdr, _ := json.Marshal(map[string]any{"key": "header", "value": map[string]string{"summary": "add " + path, "parentCommit": parent}})
	file, _ := json.Marshal(map[string]any{"key": "file", "value": map[string]string{
		"path": path, "content": base64.StdEncoding.EncodeToString([]byte(content)), "encoding": "base64"}})
	status, body, _ := th.do("POST", "/api/models/alice/m/commit/main", userToken, append(append(hdr, '\n'), file...),
		"Content-Type", "application/x-ndjson")
	var ans struct{ CommitOid string }
	json.Unmarshal(body, &ans)
	return status, ans.CommitOid
}

// TestReplicas: two hubs on one bucket act as one. A commit through one is
// seen through the other at once; a file uploaded through one downloads
// through the other; of concurrent commits through both to one branch
// every one lands (or, naming a parent that moved, gets 412), and the
// history is one line holding each commit that landed.
func TestReplicas(t *testing.T) {
	ownStores(t)
	hubs, look := s3Hubs(t, 2)
	a, b := hubs[0], hubs[1]
	data := randomData(70, 3<<20)
	res := a.commitFile("alice/m", "weights.bin", data)
	if got := b.head("alice/m"); got != res.OID {
		t.Fatalf("the other replica's main is at %s right after the commit %s", got, res.OID)
	}
	status, got, _ := b.do("GET", "/alice/m/resolve/main/weights.bin", userToken, nil)
	if status != 200 || !bytes.Equal(got, data) {
		t.Fatalf("a file committed through one replica, read through the other: %d, %d bytes", status, len(got))
	}

	// Concurrent commits through both: without a parent every one lands;
	// with the head as parent, at most one per head lands, the rest 412.
	const each = 20 // commits through each replica
	base := a.head("alice/m")
	type result struct {
		status int
		id     string
		parent bool
	}
	var mu sync.Mutex
	var results []result
	var wg sync.WaitGroup
	for r, th := range hubs {
		for i := range each {
			wg.Go(func() {
				parent := ""
				if i%3 == 0 {
					parent = base
				}
				st, id := th.commitInline(fmt.Sprintf("r%d/f%d.txt", r, i), fmt.Sprintf("replica %d file %d", r, i), parent)
				mu.Lock()
				results = append(results, result{st, id, parent != ""})
				mu.Unlock()
			})
		}
	}
	wg.Wait()
	landed := map[string]bool{}
	withParent := 0
	for _, r := range results {
		switch {
		case r.status == 200 && r.id != "":
			landed[r.id] = true
			if r.parent {
				withParent++
			}
		case r.status == 412 && r.parent:
		default:
			t.Errorf("a commit (parent %v) answered %d", r.parent, r.status)
		}
	}
	if withParent > 1 {
		t.Errorf("%d commits naming the same parent landed", withParent)
	}
	if want := 2*each - countParented(each)*2 + withParent; len(landed) != want {
		t.Errorf("%d commits landed, want %d", len(landed), want)
	}
	// The history, read from the store: one line from the head back to
	// base, holding every commit that landed and nothing else.
	head := b.head("alice/m")
	if head != a.head("alice/m") {
		t.Fatal("the replicas disagree on the head")
	}
	seen := 0
	for id := head; id != base; {
		if !landed[id] {
			t.Fatalf("commit %s in the history is none that landed", id)
		}
		seen++
		c, err := repos.StoredCommit(look, "models/alice/m", id)
		if err != nil || c.Parent == "" {
			t.Fatalf("commit %s: %v, parent %+v", id, err, c)
		}
		id = c.Parent
	}
	if seen != len(landed) {
		t.Fatalf("the history from base holds %d commits; %d landed", seen, len(landed))
	}
}

// countParented is how many of each commits per replica name a parent.
func countParented(each int) int { return (each + 2) / 3 }

// TestDirectURLs: with DirectURLs the xorb URLs of reconstructions are
// presigned reads on the S3 server; the bytes fetched there decode to the
// file's, and the hub serves none of them.
func TestDirectURLs(t *testing.T) {
	ownStores(t)
	srv := s3test.Start(t)
	uri := "s3://" + srv.NewBucket(t) + "/direct"
	th := newHub(t, hub.Config{Store: srv.Store(t, uri), DirectURLs: true})
	f := makeFile(t, 71, 900<<10)
	other := makeFile(t, 72, 500<<10)
	tok := th.token("write")
	for _, g := range []*file{f, other} {
		th.putXorb(tok, g)
		th.putShard(tok, g.shard(t, true))
	}
	for _, version := range []string{"v1", "v2"} {
		status, body, _ := th.do("GET", "/"+version+"/reconstructions/"+f.hash.String(), tok, nil, "Range", "bytes=100000-799999")
		if status != 200 {
			t.Fatalf("%s reconstruction: %d %s", version, status, body)
		}
		var urls []string
		var rngs []string
		if version == "v1" {
			var v v1Answer
			json.Unmarshal(body, &v)
			for _, fi := range v.FetchInfo[f.xorb.Hash.String()] {
				urls, rngs = append(urls, fi.URL), append(rngs, "bytes="+itoa(fi.URLRange.Start)+"-"+itoa(fi.URLRange.End))
			}
		} else {
			var v v2Answer
			json.Unmarshal(body, &v)
			for _, x := range v.Xorbs[f.xorb.Hash.String()] {
				if len(x.Ranges) != 1 {
					t.Fatalf("v2: a direct URL with %d ranges (S3 serves one per GET)", len(x.Ranges))
				}
				urls, rngs = append(urls, x.URL), append(rngs, "bytes="+itoa(x.Ranges[0].Bytes.Start)+"-"+itoa(x.Ranges[0].Bytes.End))
			}
		}
		if len(urls) == 0 {
			t.Fatalf("%s: no fetch URL: %s", version, body)
		}
		for i, u := range urls {
			if !strings.HasPrefix(u, srv.Endpoint+"/") || !strings.Contains(u, "X-Amz-Signature=") {
				t.Fatalf("%s: the xorb URL %s is not presigned on the S3 server %s", version, u, srv.Endpoint)
			}
			status, data, _ := th.do("GET", u, "", nil, "Range", rngs[i])
			if status != 206 {
				t.Fatalf("%s: the presigned URL: %d %.300s", version, status, data)
			}
			start, _ := strconv.ParseInt(strings.SplitN(strings.TrimPrefix(rngs[i], "bytes="), "-", 2)[0], 10, 64)
			if !bytes.Equal(data, f.xorb.Bytes[start:start+int64(len(data))]) {
				t.Fatalf("%s: the S3 server sent other bytes than the xorb's", version)
			}
			decode(t, data)
		}
		// Scoped to the one object: the same signature on another key is refused.
		forged := strings.Replace(urls[0], f.xorb.Hash.String(), other.xorb.Hash.String(), 1)
		if status, _, _ := th.do("GET", forged, "", nil, "Range", rngs[0]); status != 403 {
			t.Fatalf("%s: the presigned URL moved to another xorb answers %d, want 403", version, status)
		}
	}
	// xetkit's own client downloads a committed file through them,
	// verified, byte-identical.
	data := randomData(73, 5<<20)
	th.commitFile("alice/direct", "big.bin", data)
	c := &hubclient.Client{Client: cas.Client{Hub: th.srv.URL, Repo: "alice/direct", Token: userToken, HTTP: cas.HTTPClient(http.DefaultClient)}}
	var got bytes.Buffer
	if _, err := c.DownloadPath(context.Background(), "big.bin", &got, nil); err != nil || !bytes.Equal(got.Bytes(), data) {
		t.Fatalf("download through direct URLs: %v, %d bytes", err, got.Len())
	}
	if st := th.h.Stats(); st.XorbBytesServed != 0 {
		t.Fatalf("the hub served %d xorb bytes", st.XorbBytesServed)
	}
	if _, err := hub.New(hub.Config{Dir: t.TempDir(), DirectURLs: true}); err == nil {
		t.Fatal("direct URLs on the folder store were accepted")
	}
}
