package hub_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"os/exec"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/xetkit/xetkit/hub"
	"github.com/xetkit/xetkit/hub/repos"
	"github.com/xetkit/xetkit/hub/store"
)

// A hub killed (SIGKILL) in the middle of commits restarts with every
// branch at a whole commit: the last one acknowledged, or one after it
// that was written completely before the kill; and the store checks clean.
// On S3 two replicas commit at once on one bucket, one is killed and the
// other commits on. It picks its own store, so the run in memory skips it.
func TestKillDuringCommits(t *testing.T) {
	switch {
	case memStores:
		t.Skip("picks its own store: it ran on the filesystem in the first run")
	case s3Server != nil:
		uri := "s3://" + s3Server.NewBucket(t) + "/hub"
		killDuringCommits(t, uri, 2, func() store.Store { return s3Server.Store(t, uri) })
	default:
		dir := t.TempDir()
		killDuringCommits(t, dir, 1, func() store.Store {
			st, err := store.ExistingFS(dir)
			if err != nil {
				t.Fatal(err)
			}
			return st
		})
	}
}

// killDuringCommits runs rounds of commits through replicas hub
// processes on the store at where (see hubProcess), SIGKILLs one of them
// at a random moment, lets the others commit on, stops them, and checks
// the store through open: main descends from every acknowledged commit,
// each file at main reads back, and hub.Check finds nothing wrong.
func killDuringCommits(t *testing.T, where string, replicas int, open func() store.Store) {
	rng := rand.New(rand.NewPCG(1, 2))
	lastAcked := ""
	for round := range 4 {
		cmds, bases := make([]*exec.Cmd, replicas), make([]string, replicas)
		for i := range replicas {
			cmds[i], bases[i] = hubProcess(t, where)
		}
		if round == 0 {
			req, _ := http.NewRequest("POST", bases[0]+"/api/repos/create", strings.NewReader(`{"name":"crash","organization":"k","type":"model"}`))
			req.Header.Set("Authorization", "Bearer "+userToken)
			if resp, err := http.DefaultClient.Do(req); err != nil || resp.StatusCode != 200 {
				t.Fatalf("create: %v %v", resp, err)
			}
		}
		victim := round % replicas
		var mu sync.Mutex
		var acked []string
		afterKill := 0 // commits sent once the victim was dead, and acknowledged
		// killing: the victim is being killed, so its requests may fail;
		// dead: it is gone.
		var killing, dead atomic.Bool
		var wg sync.WaitGroup
		stop := make(chan struct{})
		for r, base := range bases {
			for w := range 3 {
				wg.Go(func() {
					for i := 0; ; i++ {
						select {
						case <-stop:
							return
						default:
						}
						sentAfterKill := dead.Load()
						name := fmt.Sprintf("r%d/h%d/w%d/%d.txt", round, r, w, i)
						body := commitBody(map[string]any{"summary": name}, inlineFile(name, strings.Repeat("x", 100+i)))
						req, _ := http.NewRequest("POST", base+"/api/models/k/crash/commit/main", bytes.NewReader(body))
						req.Header.Set("Authorization", "Bearer "+userToken)
						resp, err := http.DefaultClient.Do(req)
						if err != nil {
							if r != victim || !killing.Load() {
								t.Errorf("round %d: commit %s through replica %d, which was not killed: %v", round, name, r, err)
							}
							return
						}
						var out struct{ CommitOid string }
						b, _ := io.ReadAll(resp.Body)
						resp.Body.Close()
						if resp.StatusCode != 200 || json.Unmarshal(b, &out) != nil {
							// A replica that answers must answer well, however its
							// peer died.
							t.Errorf("round %d: commit %s through replica %d: %d %.300s", round, name, r, resp.StatusCode, b)
							return
						}
						mu.Lock()
						acked = append(acked, out.CommitOid)
						if sentAfterKill {
							afterKill++
						}
						mu.Unlock()
					}
				})
			}
		}
		time.Sleep(time.Duration(20+rng.IntN(200)) * time.Millisecond)
		killing.Store(true)
		cmds[victim].Process.Kill()
		cmds[victim].Wait()
		dead.Store(true)
		// The survivors commit on, over whatever the victim left half
		// done, until they have landed a few commits (or the time is up).
		for deadline := time.Now().Add(10 * time.Second); replicas > 1 && !t.Failed() && time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
			mu.Lock()
			n := afterKill
			mu.Unlock()
			if n >= 3 {
				break
			}
		}
		close(stop)
		wg.Wait()
		for i, cmd := range cmds { // idle now: nothing is in flight
			if i != victim {
				cmd.Process.Kill()
				cmd.Wait()
			}
		}
		if t.Failed() {
			t.FailNow()
		}
		if replicas > 1 && afterKill == 0 {
			t.Fatalf("round %d: the surviving replicas acknowledged no commit after replica %d was killed", round, victim)
		}

		st := open()
		th := newHub(t, hub.Config{Store: open()})
		head := th.head("k/crash")
		// Acknowledgements came in commit order (branch moves are
		// serialized), but the goroutines appended them in any order:
		// take the one that is a descendant of all the others.
		if len(acked) > 0 {
			lastAcked = newest(t, st, acked)
		}
		if lastAcked != "" && !isAncestor(t, st, lastAcked, head) {
			t.Fatalf("round %d: main is at %s, which does not descend from the acknowledged %s", round, head, lastAcked)
		}
		// Survivors that committed after the kill wrote last, and were
		// stopped idle: main is exactly their last commit.
		if replicas > 1 && head != lastAcked {
			t.Fatalf("round %d: main is at %s, not at the last acknowledged commit %s", round, head, lastAcked)
		}
		// The whole tree at main reads back.
		status, body, _ := th.do("GET", "/api/models/k/crash/tree/main?recursive=true", userToken, nil)
		var entries []struct{ Type, Path string }
		if status != 200 || json.Unmarshal(body, &entries) != nil {
			t.Fatalf("round %d: tree: %d %s", round, status, body)
		}
		for _, e := range entries {
			if e.Type != "file" {
				continue
			}
			if status, body, _ := th.do("GET", "/k/crash/resolve/main/"+e.Path, userToken, nil); status != 200 {
				t.Fatalf("round %d: %s: %d %s", round, e.Path, status, body)
			}
		}
		// And the store checks clean: every ref reaches whole objects.
		if problems, err := hub.Check(st); err != nil || len(problems) != 0 {
			t.Fatalf("round %d: store check after the kill: %v %v", round, err, problems)
		}
		t.Logf("round %d: %d commits acknowledged through %d replicas (%d sent after one was killed), main at %s with %d entries",
			round, len(acked), replicas, afterKill, head[:8], len(entries))
		th.srv.Close()
	}
}

// parents caches commit parents read from stores (commits never change).
var parents sync.Map // where the commit is → parent id

// parentOf reads the first parent of commit id of k/crash from st.
func parentOf(t *testing.T, st store.Store, id string) string {
	t.Helper()
	where := st.Where(store.Commits, id)
	if p, ok := parents.Load(where); ok {
		return p.(string)
	}
	c, err := repos.StoredCommit(st, "models/k/crash", id)
	if err != nil {
		t.Fatalf("commit %s: %v", id, err)
	}
	parents.Store(where, c.Parent)
	return c.Parent
}

// isAncestor reports whether commit a is b or one of b's ancestors in st.
func isAncestor(t *testing.T, st store.Store, a, b string) bool {
	for c := b; c != ""; c = parentOf(t, st, c) {
		if c == a {
			return true
		}
	}
	return false
}

// newest returns the acknowledged commit that descends from all others.
func newest(t *testing.T, st store.Store, ids []string) string {
	for _, cand := range ids {
		all := true
		for _, o := range ids {
			if !isAncestor(t, st, o, cand) {
				all = false
				break
			}
		}
		if all {
			return cand
		}
	}
	t.Fatalf("acknowledged commits %v are not one line of history", ids)
	return ""
}
