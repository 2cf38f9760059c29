package casserver

import (
	"bytes"
	"fmt"
	"slices"
	"time"

	"github.com/xetkit/xetkit/hub/store"
	"github.com/xetkit/xetkit/xethash"
	"github.com/xetkit/xetkit/xorb"
)

// Problem is something wrong with one file of a hub's store.
type Problem struct {
	Path string `json:"path"`
	Err  string `json:"error"`
}

func (p Problem) String() string { return p.Path + ": " + p.Err }

// Problems lists what New could not read from the store and left out.
func (h *Server) Problems() []Problem { return h.idx.problems }

// Check reads every object of st, as New does and more thoroughly (each
// xorb is decompressed and its hash checked against its name), and
// returns what is wrong. It changes nothing.
func Check(st store.Store) ([]Problem, error) {
	idx, err := rebuildIndex(st)
	if err != nil {
		return nil, err
	}
	problems := idx.problems
	names := make([]xethash.Hash, 0, len(idx.xorbs)) // the well-named ones
	for x := range idx.xorbs {
		names = append(names, x)
	}
	slices.SortFunc(names, func(a, b xethash.Hash) int { return bytes.Compare(a[:], b[:]) })
	for _, x := range names {
		if msg := checkXorbFile(st, x.String(), x); msg != "" {
			problems = append(problems, Problem{Path: st.Where(store.Xorbs, x.String()), Err: msg})
		}
	}
	// Every xorb a readable shard names must be stored.
	c := &Collection{st: st, shards: map[string]*shardRefs{}, grants: map[string]grantRecord{}}
	shards := map[string]time.Time{}
	for n := range idx.shardFiles {
		shards[n] = time.Time{}
	}
	c.read(shards, nil)
	var shardNames []string
	for n := range c.shards {
		shardNames = append(shardNames, n)
	}
	slices.Sort(shardNames)
	for _, n := range shardNames {
		refs := c.shards[n]
		if refs == nil {
			continue
		}
		missing := map[xethash.Hash]bool{}
		for _, x := range refs.xorbs {
			if _, ok := idx.xorbs[x]; !ok && !missing[x] {
				missing[x] = true
				problems = append(problems, Problem{Path: st.Where(store.Shards, n), Err: fmt.Sprintf("names xorb %s, which is not stored", x)})
			}
		}
	}
	return problems, nil
}

// checkXorbFile returns what is wrong with the stored xorb n, or "".
func checkXorbFile(st store.Store, n string, want xethash.Hash) string {
	b, err := store.Read(st, store.Xorbs, n)
	if err != nil {
		return err.Error()
	}
	x, err := xorb.ParsePartial(b)
	if err == nil {
		err = x.Verify()
	}
	if err != nil {
		return err.Error()
	}
	if got := xethash.Xorb(x.Entries()); got != want {
		return fmt.Sprintf("its chunks hash to xorb %s, not its name", got)
	}
	return ""
}
