package hub_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/xetkit/xetkit/hub"
)

// Of many concurrent uploads of one xorb, exactly one stores it.
func TestConcurrentUploadsOfOneXorbInsertOnce(t *testing.T) {
	th := newHub(t, hub.Config{MaxUploads: 64})
	tok := th.token("write")
	f := makeFile(t, 7, 300<<10)
	var wg sync.WaitGroup
	var mu sync.Mutex
	inserted := 0
	for range 50 {
		wg.Go(func() {
			req, _ := http.NewRequest("POST", th.srv.URL+"/v1/xorbs/default/"+f.xorb.Hash.String(), bytes.NewReader(f.xorb.Bytes))
			req.Header.Set("Authorization", "Bearer "+tok)
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Error(err)
				return
			}
			defer resp.Body.Close()
			var r struct {
				WasInserted bool `json:"was_inserted"`
			}
			if err := json.NewDecoder(resp.Body).Decode(&r); err != nil || resp.StatusCode != 200 {
				t.Errorf("status %d: %v", resp.StatusCode, err)
				return
			}
			if r.WasInserted {
				mu.Lock()
				inserted++
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	if inserted != 1 {
		t.Fatalf("was_inserted true %d times, want exactly once", inserted)
	}
}

// A full disk is 507 (not worth retrying), and leaves nothing behind.
func TestFullDiskIs507(t *testing.T) {
	th := newHub(t, hub.Config{})
	tok := th.token("write")
	f := makeFile(t, 8, 100<<10)
	hub.FailWrites(th.h, fmt.Errorf("write: %w", syscall.ENOSPC))
	status, body, _ := th.do("POST", "/v1/xorbs/default/"+f.xorb.Hash.String(), tok, f.xorb.Bytes)
	wantStatus(t, "xorb upload on a full disk", status, body, http.StatusInsufficientStorage, "no space")
	hub.FailWrites(th.h, nil)
	th.putXorb(tok, f) // stored once there is room again
}

// Beyond its share of MaxUploads uploads at once (three quarters), a
// user's next upload is answered 503 with Retry-After instead of being
// read (TestUploadSlotsAreShared: the slots left are others').
func TestUploadCap(t *testing.T) {
	th := newHub(t, hub.Config{MaxUploads: 4})
	tok := th.token("write")
	// Three uploads that announce a body and send only a little of it.
	var conns []net.Conn
	for range 3 {
		c := stalledUpload(t, th.srv.Listener.Addr().String(), tok)
		conns = append(conns, c)
	}
	defer func() {
		for _, c := range conns {
			c.Close()
		}
	}()
	// Wait (on the hub's own count, not a clock) until both hold their place.
	for deadline := time.Now().Add(30 * time.Second); hub.UploadsReading(th.h) < 3; time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("the stalled uploads never started: %d being read", hub.UploadsReading(th.h))
		}
	}
	f := makeFile(t, 9, 10<<10)
	status, body, hdr := th.do("POST", "/v1/xorbs/default/"+f.xorb.Hash.String(), tok, f.xorb.Bytes)
	wantStatus(t, "upload past the user's share", status, body, http.StatusServiceUnavailable, "share", "try again")
	if hdr.Get("Retry-After") == "" {
		t.Error("503 without Retry-After")
	}
	for _, c := range conns {
		c.Close()
	}
	for range 100 {
		if status, _, _ = th.do("POST", "/v1/xorbs/default/"+f.xorb.Hash.String(), tok, f.xorb.Bytes); status == 200 {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatalf("the upload still fails with %d once the stalled ones are gone", status)
}

// stalledUpload opens a xorb upload that claims 64 MiB and sends 1 KiB.
func stalledUpload(t *testing.T, addr, tok string) net.Conn {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	fmt.Fprintf(c, "POST /v1/xorbs/default/%s HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer %s\r\nContent-Length: %d\r\n\r\n",
		bytes.Repeat([]byte("ab"), 32), tok, hub.MaxXorbSize)
	c.Write(make([]byte, 1024))
	return c
}

// Stalled uploads hold what they sent, not what they announced.
func TestStalledUploadsHoldLittleMemory(t *testing.T) {
	th := newHub(t, hub.Config{MaxUploads: 64})
	tok := th.token("write")
	runtime.GC()
	var before runtime.MemStats
	runtime.ReadMemStats(&before)
	var conns []net.Conn
	for range 50 {
		conns = append(conns, stalledUpload(t, th.srv.Listener.Addr().String(), tok))
	}
	time.Sleep(300 * time.Millisecond) // let the hub start reading them all
	var after runtime.MemStats
	runtime.ReadMemStats(&after)
	for _, c := range conns {
		c.Close()
	}
	grew := int64(after.HeapInuse) - int64(before.HeapInuse)
	if grew > 256<<20 {
		t.Fatalf("50 stalled uploads took %d MiB of heap", grew>>20)
	}
	t.Logf("50 stalled uploads: heap grew %d KiB", grew>>10)
}

// casUrl comes from the address the hub listens on, not the Host header.
func TestCasURLIgnoresHostHeader(t *testing.T) {
	th := newHub(t, hub.Config{})
	status, b, _ := th.do("GET", "/api/models/alice/m/xet-write-token/main", userToken, nil, "Host", "evil.example:1")
	var tok struct{ CasURL string }
	if err := json.Unmarshal(b, &tok); status != 200 || err != nil || tok.CasURL != th.srv.URL {
		t.Fatalf("casUrl %q (want %s): %d %s", tok.CasURL, th.srv.URL, status, b)
	}
}

// tokenFor asks for a CAS token of another repository (creating it).
func (th *testHub) tokenFor(repo, kind string) string {
	th.t.Helper()
	if kind == "read" {
		th.tokenFor(repo, "write")
	}
	status, body, _ := th.do("GET", "/api/models/"+repo+"/xet-"+kind+"-token/main", userToken, nil)
	var tok struct{ AccessToken string }
	if status != 200 || json.Unmarshal(body, &tok) != nil {
		th.t.Fatalf("token for %s: %d %s", repo, status, body)
	}
	return tok.AccessToken
}

// A CAS token reads only the files its repository's uploads registered,
// across restarts; the same shard uploaded through a second repository
// registers the files there too.
func TestTokensAreScopedToTheirRepository(t *testing.T) {
	dir := t.TempDir()
	th := newHub(t, hub.Config{Dir: dir})
	f := makeFile(t, 31, 200<<10)
	mine := th.tokenFor("me/a", "write")
	th.putXorb(mine, f)
	th.putShard(mine, f.shard(t, true))
	path := "/v2/reconstructions/" + f.hash.String()
	status, body, _ := th.do("GET", path, th.tokenFor("me/a", "read"), nil)
	wantStatus(t, "own repository", status, body, 200)
	other := th.tokenFor("someone/else", "read")
	status, body, _ = th.do("GET", path, other, nil)
	wantStatus(t, "another repository's token", status, body, 404, "not known")
	status, body, _ = th.do("GET", "/v1/reconstructions/"+f.hash.String(), other, nil)
	wantStatus(t, "another repository's token, v1", status, body, 404, "not known")

	again := newHub(t, hub.Config{Dir: dir})
	status, body, _ = again.do("GET", path, again.tokenFor("someone/else", "read"), nil)
	wantStatus(t, "after a restart, another repository", status, body, 404)
	status, body, _ = again.do("GET", path, again.tokenFor("me/a", "read"), nil)
	wantStatus(t, "after a restart, own repository", status, body, 200)

	again.putShard(again.tokenFor("someone/else", "write"), f.shard(t, true))
	status, body, _ = again.do("GET", path, again.tokenFor("someone/else", "read"), nil)
	wantStatus(t, "after its own upload", status, body, 200)
}

// Stray or damaged files in the store do not stop the hub: they are left
// out, reported, and listed by CheckStore with a damaged xorb.
func TestDamagedStoreStillStarts(t *testing.T) {
	dir := t.TempDir()
	th := newHub(t, hub.Config{Dir: dir})
	good := makeFile(t, 41, 100<<10)
	tok := th.token("write")
	th.putXorb(tok, good)
	th.putShard(tok, good.shard(t, true))
	bad := makeFile(t, 42, 100<<10)
	th.putXorb(tok, bad)
	th.putShard(tok, bad.shard(t, true))

	shards, _ := filepath.Glob(filepath.Join(dir, "shards", "*"))
	if len(shards) != 2 {
		t.Fatalf("%d shards stored", len(shards))
	}
	for _, s := range shards { // truncate the bad file's shard
		b, _ := os.ReadFile(s)
		if bytes.Contains(b, bad.hash[:]) {
			os.WriteFile(s, b[:len(b)/2], 0o644)
		}
	}
	os.WriteFile(filepath.Join(dir, "shards", "stray.txt"), []byte("hello"), 0o644)
	xorbFile := filepath.Join(dir, "xorbs", good.xorb.Hash.String())
	x, _ := os.ReadFile(xorbFile)
	x[100] ^= 1
	os.WriteFile(xorbFile, x, 0o644)

	again := newHub(t, hub.Config{Dir: dir})
	if n := len(again.h.Problems()); n != 2 {
		t.Errorf("hub reports %d problems, want the truncated and the stray shard: %v", n, again.h.Problems())
	}
	status, body, _ := again.do("GET", "/v2/reconstructions/"+good.hash.String(), again.token("read"), nil)
	wantStatus(t, "a file whose shard is whole", status, body, 200)
	problems, err := hub.CheckStore(dir)
	if err != nil {
		t.Fatal(err)
	}
	text := fmt.Sprint(problems)
	for _, want := range []string{"stray.txt", "SHA-256", good.xorb.Hash.String()} {
		if !strings.Contains(text, want) {
			t.Errorf("CheckStore does not mention %q: %s", want, text)
		}
	}
	if len(problems) != 3 {
		t.Errorf("CheckStore found %d problems, want 3: %s", len(problems), text)
	}
}

// A real full disk: a store on a 256 KiB tmpfs refuses a larger xorb with
// 507 and keeps no partial object, neither under its name nor in tmp/.
func TestFullFilesystemIs507(t *testing.T) {
	dir := t.TempDir()
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", "size=256k", "tmpfs", dir).CombinedOutput(); err != nil {
		if os.Geteuid() != 0 {
			t.Skipf("mounting a small filesystem needs root (TestFullDiskIs507 covers the same path with a failing write): %s", out)
		}
		t.Fatalf("mount tmpfs: %v: %s", err, out)
	}
	t.Cleanup(func() { exec.Command("umount", dir).Run() })
	th := newHub(t, hub.Config{Dir: dir})
	tok := th.token("write")
	f := makeFile(t, 51, 600<<10)
	status, body, _ := th.do("POST", "/v1/xorbs/default/"+f.xorb.Hash.String(), tok, f.xorb.Bytes)
	wantStatus(t, "xorb upload onto a full filesystem", status, body, http.StatusInsufficientStorage, "no space")
	for _, sub := range []string{"xorbs", "tmp"} {
		if left, _ := os.ReadDir(filepath.Join(dir, sub)); len(left) != 0 {
			t.Errorf("%s/ holds %d files after the failed write", sub, len(left))
		}
	}
	small := makeFile(t, 52, 20<<10)
	th.putXorb(tok, small) // what fits is still stored
}
