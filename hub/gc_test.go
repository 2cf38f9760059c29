package hub_test

import (
	"bytes"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/xetkit/xetkit/hub"
	"github.com/xetkit/xetkit/hub/repos"
	"github.com/xetkit/xetkit/hub/store"
)

// TestGC on the folder and S3 stores: after a repository is deleted, a GC
// past the grace period deletes the objects only it reached and nothing a
// remaining ref needs; within the grace period it deletes nothing, so an
// upload not yet committed survives; a dry run deletes nothing; and the
// store checks clean before and after.
func TestGC(t *testing.T) {
	bothStores(t, func(t *testing.T, newStore func(*testing.T) store.Collectable) { testGC(t, newStore(t)) })
}

func testGC(t *testing.T, st store.Collectable) {
	th := newHub(t, hub.Config{Store: st})
	kept, dropped, shared := randomData(80, 2<<20), makeFile(t, 81, 2<<20), randomData(82, 1<<20)
	th.commitFile("alice/keep", "kept.bin", kept)
	th.commitFile("alice/keep", "shared.bin", shared)
	th.commitFile("alice/drop", "dropped.bin", dropped.data)
	th.commitFile("alice/drop", "shared.bin", shared)
	th.commitFile("alice/drop", "small.txt", []byte("a small file, kept inline"))
	// An upload not yet committed: a xorb and its shard.
	pending := makeFile(t, 83, 300<<10)
	tok := th.token("write")
	th.putXorb(tok, pending)
	th.putShard(tok, pending.shard(t, true))
	status, body, _ := th.do("DELETE", "/api/repos/delete", userToken, []byte(`{"type":"model","organization":"alice","name":"drop"}`))
	wantStatus(t, "delete repo", status, body, 200)
	// A file only a tag reaches (deleted from main after the tag) stays;
	// a file only a deleted branch reached goes.
	tagged := "only on a deleted branch, but tagged"
	scratch := "only on a deleted branch"
	for branch, content := range map[string]string{"tagged": tagged, "scratch": scratch} {
		status, body, _ = th.do("POST", "/api/models/alice/keep/branch/"+branch, userToken, []byte(`{"startingPoint":"main"}`))
		wantStatus(t, "branch", status, body, 200)
		status, body, _ = th.do("POST", "/api/models/alice/keep/commit/"+branch, userToken,
			commitBody(map[string]any{"summary": branch}, inlineFile(branch+".txt", content)))
		wantStatus(t, "commit to "+branch, status, body, 200)
		if branch == "tagged" {
			status, body, _ = th.do("POST", "/api/models/alice/keep/tag/tagged", userToken, []byte(`{"tag":"v1"}`))
			wantStatus(t, "tag", status, body, 200)
		}
		status, body, _ = th.do("DELETE", "/api/models/alice/keep/branch/"+branch, userToken, nil)
		wantStatus(t, "delete branch", status, body, 200)
	}
	scratchBlob := fmt.Sprintf("%x", sha256.Sum256([]byte(scratch)))

	before := map[string][]string{}
	for _, kind := range store.Kinds {
		before[kind], _ = st.List(kind)
	}
	// Within the default grace period nothing goes, even with --delete.
	rep, err := hub.GC(st, hub.GCOptions{Delete: true})
	if err != nil || rep.Deleted != 0 || len(rep.Problems) != 0 {
		t.Fatalf("gc within the grace period: %v, deleted %d, problems %v", err, rep.Deleted, rep.Problems)
	}
	later := func() time.Time { return time.Now().Add(25 * time.Hour) }
	dry, err := hub.GC(st, hub.GCOptions{Now: later})
	if err != nil || dry.Deleted != 0 {
		t.Fatalf("dry run: %v, deleted %d", err, dry.Deleted)
	}
	for _, kind := range store.Kinds {
		if now, _ := st.List(kind); !slices.Equal(now, before[kind]) {
			t.Fatalf("a dry run or a gc within the grace period changed %s", kind)
		}
	}
	// Past the grace period: the deleted repository's own file, its
	// commits and pages, and the pending upload are unreachable.
	for _, kind := range []string{store.Xorbs, store.Shards, store.Commits, store.Trees, store.Blobs} {
		if len(dry.Unreachable[kind]) == 0 {
			t.Errorf("the dry run finds no unreachable %s", kind)
		}
	}
	if !slices.Contains(dry.Unreachable[store.Xorbs], pending.xorb.Hash.String()) {
		t.Error("the uncommitted upload's xorb is not unreachable past the grace period")
	}
	droppedChunk := "/v1/chunks/default-merkledb/" + dropped.chunks[0].Hash.String()
	if status, body, _ := th.do("GET", droppedChunk, tok, nil); status != 200 {
		t.Fatalf("dedupe of the dropped file's first chunk before gc: %d %s", status, body)
	}
	rep, err = hub.GC(st, hub.GCOptions{Delete: true, Now: later})
	if err != nil || rep.Deleted == 0 {
		t.Fatalf("gc: %v, deleted %d, problems %v", err, rep.Deleted, rep.Problems)
	}
	for _, kind := range store.Kinds {
		now, _ := st.List(kind)
		for _, n := range rep.Unreachable[kind] {
			if slices.Contains(now, n) {
				t.Errorf("%s/%s survived its deletion", kind, n)
			}
		}
		if len(now) == len(before[kind]) && len(rep.Unreachable[kind]) > 0 {
			t.Errorf("%s: nothing deleted", kind)
		}
	}
	// What remains is whole: the store checks clean, and a hub started on
	// it serves every remaining file byte-identical.
	if problems, err := hub.Check(st); err != nil || len(problems) != 0 {
		t.Fatalf("check after gc: %v %v", err, problems)
	}
	fresh := newHub(t, hub.Config{Store: st})
	for path, want := range map[string][]byte{"main/kept.bin": kept, "main/shared.bin": shared, "v1/tagged.txt": []byte(tagged)} {
		status, got, _ := fresh.do("GET", "/alice/keep/resolve/"+path, userToken, nil)
		if status != 200 || !bytes.Equal(got, want) {
			t.Fatalf("%s after gc: %d, %d bytes", path, status, len(got))
		}
	}
	if blobs, _ := st.List(store.Blobs); slices.Contains(blobs, scratchBlob) || !slices.Contains(dry.Unreachable[store.Blobs], scratchBlob) {
		t.Fatalf("the file of the deleted branch: unreachable %v, still stored %v", slices.Contains(dry.Unreachable[store.Blobs], scratchBlob), slices.Contains(blobs, scratchBlob))
	}
	// The hub that ran meanwhile stops offering the deleted xorbs for
	// dedupe within seconds (it reads what gc deleted every 5 s).
	for deadline := time.Now().Add(7 * time.Second); ; {
		status, _, _ := th.do("GET", droppedChunk, tok, nil)
		if status == 404 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the running hub still answers dedupe with a deleted xorb: %d", status)
		}
		time.Sleep(200 * time.Millisecond)
	}
	// A second gc finds nothing more.
	if again, err := hub.GC(st, hub.GCOptions{Delete: true, Now: later}); err != nil || again.Deleted != 0 {
		t.Fatalf("second gc: %v, deleted %d (%v)", err, again.Deleted, again.Unreachable)
	}
}

// TestCheckFindsMissingObjects: on both stores, check reports a xorb a
// shard names that is gone, and a commit a ref reaches that is gone.
func TestCheckFindsMissingObjects(t *testing.T) {
	bothStores(t, func(t *testing.T, newStore func(*testing.T) store.Collectable) { testCheckFindsMissing(t, newStore(t)) })
}

func testCheckFindsMissing(t *testing.T, st store.Collectable) {
	th := newHub(t, hub.Config{Store: st})
	res := th.commitFile("alice/m", "data.bin", randomData(84, 1<<20))
	if problems, err := hub.Check(st); err != nil || len(problems) != 0 {
		t.Fatalf("check of a whole store: %v %v", err, problems)
	}
	xorbs, _ := st.List(store.Xorbs)
	if len(xorbs) != 1 {
		t.Fatalf("%d xorbs", len(xorbs))
	}
	st.Remove(store.Xorbs, xorbs[0])
	var rec struct{ UID string }
	if b, err := store.Read(st, store.Repos, "models/alice/m"); err != nil || json.Unmarshal(b, &rec) != nil {
		t.Fatalf("alice/m's record: %v", err)
	}
	st.Remove(store.Commits, repos.CommitName(rec.UID, res.OID))
	problems, err := hub.Check(st)
	if err != nil {
		t.Fatal(err)
	}
	var xorbFound, commitFound bool
	for _, p := range problems {
		xorbFound = xorbFound || strings.Contains(p.Err, "names xorb "+xorbs[0])
		commitFound = commitFound || strings.Contains(p.Path, res.OID)
	}
	if !xorbFound || !commitFound {
		t.Fatalf("check after removing xorb %s and commit %s: %v", xorbs[0], res.OID, problems)
	}
	// And gc, finding damage, deletes nothing.
	if rep, err := hub.GC(st, hub.GCOptions{Delete: true, Now: func() time.Time { return time.Now().Add(48 * time.Hour) }}); err == nil || rep.Deleted != 0 {
		t.Fatalf("gc on a damaged store: %v, deleted %d", err, rep.Deleted)
	}
}
