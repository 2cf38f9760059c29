package hub_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/xetkit/xetkit/cas"
	"github.com/xetkit/xetkit/hub"
	"github.com/xetkit/xetkit/hub/store"
	"github.com/xetkit/xetkit/hubclient"
	"github.com/xetkit/xetkit/pipeline"
)

// TestGCRacingWrites puts a write at each point where it could meet a
// deleting store gc, with hooks (no sleeps), on the folder and S3 stores:
// each reuses data no ref reaches, old enough to go. The write is refused
// (or lands and keeps its data), never leaving a ref or a shard that names
// a deleted object: the store checks clean after every case.
func TestGCRacingWrites(t *testing.T) {
	bothStores(t, testGCRacingWrites)
}

func testGCRacingWrites(t *testing.T, newStore func(*testing.T) store.Collectable) {
	later := func() time.Time { return time.Now().Add(25 * time.Hour) }
	// setup makes a hub whose alice/keep stays, a file only a deleted
	// repository reached, and a file uploaded to alice/keep and never
	// committed (both old and unreachable under later's clock); it
	// returns the second, which a commit to alice/keep may name.
	setup := func(t *testing.T, seed uint64) (*testHub, store.Collectable, string, []byte) {
		st := newStore(t)
		th := newHub(t, hub.Config{Store: st})
		th.commitFile("alice/keep", "kept.bin", randomData(seed, 300<<10))
		th.commitFile("alice/gone", "gone.bin", randomData(seed+2, 300<<10))
		status, body, _ := th.do("DELETE", "/api/repos/delete", userToken, []byte(`{"type":"model","organization":"alice","name":"gone"}`))
		wantStatus(t, "delete repo", status, body, 200)
		gone := randomData(seed+1, 400<<10)
		c := &hubclient.Client{Client: cas.Client{Hub: th.srv.URL, Repo: "alice/keep", Token: userToken, HTTP: cas.HTTPClient(th.srv.Client())}}
		if _, err := c.UploadFiles(context.Background(), []pipeline.Source{{Name: "gone.bin", Size: int64(len(gone)), Open: bytesOpener(gone)}}); err != nil {
			t.Fatal(err)
		}
		sum := sha256.Sum256(gone)
		return th, st, hex.EncodeToString(sum[:]), gone
	}
	copyOf := func(th *testHub, sha string, size int) (int, []byte) {
		status, body, _ := th.do("POST", "/api/models/alice/keep/commit/main", userToken, commitBody(map[string]any{"summary": "copy"},
			map[string]any{"key": "lfsFile", "value": map[string]any{"path": "copy.bin", "algo": "sha256", "oid": sha, "size": size}}))
		return status, body
	}
	gc := func(t *testing.T, st store.Collectable) *hub.GCReport {
		rep, err := hub.GC(st, hub.GCOptions{Delete: true, Now: later})
		if err != nil || rep.Deleted == 0 {
			t.Fatalf("gc: %v, deleted %d, problems %v", err, rep.Deleted, rep.Problems)
		}
		return rep
	}
	// gcAtWrite runs send with gc running whole, once, just before th's
	// first write of an object of kind meanwhile; it fails the test if
	// send wrote none.
	gcAtWrite := func(t *testing.T, th *testHub, st store.Collectable, kind string, send func()) {
		t.Helper()
		var ran atomic.Bool
		hub.SetStoreHook(th.h, func(k, name string) error {
			if k == kind && ran.CompareAndSwap(false, true) {
				gc(t, st)
			}
			return nil
		})
		t.Cleanup(func() { hub.SetStoreHook(th.h, nil) })
		send()
		hub.SetStoreHook(th.h, nil)
		if !ran.Load() {
			t.Fatalf("no %s was written: gc did not run", kind)
		}
	}
	clean := func(t *testing.T, st store.Collectable) {
		t.Helper()
		if problems, err := hub.Check(st); err != nil || len(problems) != 0 {
			t.Fatalf("check after the race: %v %v", err, problems)
		}
	}

	// A commit that meets a sweep is refused with 503, and the branch
	// stays; sent again after gc, it finds the file gone. It meets the
	// sweep sent while gc deletes, or checked before the sweep and stored
	// after its deletes (gc runs whole as the hub writes the commit
	// object): then the swap of the branch fails.
	for _, c := range []struct {
		name string
		seed uint64
		race func(t *testing.T, th *testHub, st store.Collectable, send func())
	}{
		{"commit during the sweep", 90, func(t *testing.T, th *testHub, st store.Collectable, send func()) {
			hub.SetGCBeforeDelete(send)
			t.Cleanup(func() { hub.SetGCBeforeDelete(nil) })
			gc(t, st)
			hub.SetGCBeforeDelete(nil)
		}},
		{"commit checked before the sweep", 92, func(t *testing.T, th *testHub, st store.Collectable, send func()) {
			gcAtWrite(t, th, st, store.Commits, send)
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			th, st, sha, gone := setup(t, c.seed)
			head := th.head("alice/keep")
			var status int
			var body []byte
			c.race(t, th, st, func() { status, body = copyOf(th, sha, len(gone)) })
			wantStatus(t, c.name, status, body, 503)
			if th.head("alice/keep") != head {
				t.Fatal("the branch moved")
			}
			clean(t, st)
			if status, body = copyOf(th, sha, len(gone)); status != 400 || th.head("alice/keep") != head {
				t.Fatalf("the commit sent again after gc: %d %s", status, body)
			}
		})
	}

	// A branch made at a commit no ref reaches, gc running whole just
	// before the hub swaps the repository record: the swap fails.
	t.Run("branch at an unreachable commit", func(t *testing.T) {
		th, st, _, _ := setup(t, 94)
		status, body, _ := th.do("POST", "/api/models/alice/keep/branch/scratch", userToken, []byte(`{"startingPoint":"main"}`))
		wantStatus(t, "branch", status, body, 200)
		th.commitFile("alice/keep", "scratch.bin", randomData(96, 300<<10))
		scratch := th.headOf("alice/keep", "scratch")
		status, body, _ = th.do("DELETE", "/api/models/alice/keep/branch/scratch", userToken, nil)
		wantStatus(t, "delete branch", status, body, 200)
		gcAtWrite(t, th, st, store.Repos, func() {
			status, body, _ = th.do("POST", "/api/models/alice/keep/branch/again", userToken, []byte(fmt.Sprintf(`{"startingPoint":%q}`, scratch)))
		})
		if status != 409 && status != 503 {
			t.Fatalf("a branch made at commit %s, which gc deleted meanwhile: %d %s", scratch, status, body)
		}
		clean(t, st)
	})

	// A shard naming an old xorb no ref reaches, checked before the sweep
	// and stored after its deletes: the hub takes it back and refuses it;
	// sent again, it is refused for the missing xorb.
	t.Run("shard checked before the sweep", func(t *testing.T) {
		th, st, _, _ := setup(t, 98)
		f := makeFile(t, 99, 300<<10)
		tok := th.token("write")
		th.putXorb(tok, f)
		th.putShard(tok, f.shard(t, true))
		var status int
		var body []byte
		gcAtWrite(t, th, st, store.Shards, func() { status, body, _ = th.do("POST", "/v1/shards", tok, f.shard(t, true)) })
		wantStatus(t, "shard checked before the sweep", status, body, 503)
		clean(t, st)
		status, body, _ = th.do("POST", "/v1/shards", tok, f.shard(t, true))
		wantStatus(t, "the shard sent again", status, body, 400)
	})
}

// headOf is the head commit of a repo's branch.
func (th *testHub) headOf(repo, branch string) string {
	th.t.Helper()
	status, body, _ := th.do("GET", "/api/models/"+repo+"/revision/"+branch, userToken, nil)
	var info struct{ SHA string }
	if status != 200 || json.Unmarshal(body, &info) != nil || len(info.SHA) != 40 {
		th.t.Fatalf("revision info: %d %s", status, body)
	}
	return info.SHA
}
