package pipeline_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/xetkit/xetkit/chunking"
	"github.com/xetkit/xetkit/internal/gitfile"
	"github.com/xetkit/xetkit/pipeline"
	"github.com/xetkit/xetkit/shard"
	"github.com/xetkit/xetkit/xethash"
)

// askedStore is a Collector that records the dedupe queries it is sent;
// with hold set, it answers none until hold queries are in.
type askedStore struct {
	pipeline.Collector
	hold  int
	mu    sync.Mutex
	cond  *sync.Cond
	asked []xethash.Hash
}

func newAskedStore(hold int) *askedStore {
	s := &askedStore{hold: hold}
	s.cond = sync.NewCond(&s.mu)
	return s
}

func (s *askedStore) Query(ctx context.Context, h xethash.Hash) (*shard.Shard, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.asked = append(s.asked, h)
	s.cond.Broadcast()
	stop := context.AfterFunc(ctx, func() { s.mu.Lock(); s.cond.Broadcast(); s.mu.Unlock() })
	defer stop()
	for len(s.asked) < s.hold && ctx.Err() == nil {
		s.cond.Wait()
	}
	return nil, ctx.Err()
}

func sourceOf(name string, data []byte) pipeline.Source {
	return pipeline.Source{Name: name, Size: int64(len(data)), Open: func() (io.Reader, error) { return bytes.NewReader(data), nil }}
}

func randomData(seed uint64, n int) []byte {
	b := make([]byte, n)
	x := seed*0x9e3779b97f4a7c15 + 1
	for i := range b {
		x ^= x << 13
		x ^= x >> 7
		x ^= x << 17
		b[i] = byte(x >> 24)
	}
	return b
}

// chunkHashes lists the hashes of data's chunks.
func chunkHashes(data []byte) []xethash.Hash {
	var out []xethash.Hash
	start := 0
	for _, end := range chunking.Boundaries(data) {
		out = append(out, xethash.Chunk(data[start:end]))
		start = end
	}
	return out
}

// eligible lists data's chunks that §10.3.1 makes eligible: the first,
// and those whose hash ends in the pattern.
func eligible(data []byte) []xethash.Hash {
	var out []xethash.Hash
	for i, h := range chunkHashes(data) {
		if i == 0 || shard.DedupEligible(h) {
			out = append(out, h)
		}
	}
	return out
}

// Dedupe queries go out side by side: no file waits for the answer about
// the one before it. The store answers nothing until every file's query
// is in, which a pipeline that waited for each answer before asking the
// next would never reach (the deadline then fails the upload).
func TestQueriesGoOutTogether(t *testing.T) {
	var sources []pipeline.Source
	var want int
	for i := range 3 {
		d := randomData(uint64(i+1), 5<<20) // larger than the spacing: each one asked about
		want += len(eligible(d))
		sources = append(sources, sourceOf(fmt.Sprintf("f%d", i), d))
	}
	store := newAskedStore(want)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if _, err := (&pipeline.Uploader{}).Run(ctx, store, sources); err != nil {
		t.Fatalf("%v: %d of %d queries were sent while none was answered", err, len(store.asked), want)
	}
}

// Which chunks are asked about: every eligible chunk of files larger than
// the spacing (4 MiB), as §10.3.1 has it; for a folder of small files, a
// file's first chunk only every 4 MiB, plus those eligible by their hash.
func TestWhichChunksAreAskedAbout(t *testing.T) {
	t.Run("large files", func(t *testing.T) {
		var sources []pipeline.Source
		var want []xethash.Hash
		for i := range 3 {
			d := randomData(uint64(10+i), 5<<20+i*777)
			want = append(want, eligible(d)...)
			sources = append(sources, sourceOf(fmt.Sprintf("f%d", i), d))
		}
		store := newAskedStore(0)
		if _, err := (&pipeline.Uploader{}).Run(context.Background(), store, sources); err != nil {
			t.Fatal(err)
		}
		if got := hashSet(store.asked); got != hashSet(want) {
			t.Errorf("asked about %d chunks, want the %d eligible ones", len(store.asked), len(want))
		}
	})
	t.Run("small files", func(t *testing.T) {
		var sources []pipeline.Source
		total, byHash := 0, 0
		for i := range 1000 {
			d := randomData(uint64(100+i), 16<<10)
			for _, h := range chunkHashes(d) {
				if shard.DedupEligible(h) {
					byHash++
				}
			}
			total += len(d)
			sources = append(sources, sourceOf(fmt.Sprintf("f%d", i), d))
		}
		store := newAskedStore(0)
		if _, err := (&pipeline.Uploader{}).Run(context.Background(), store, sources); err != nil {
			t.Fatal(err)
		}
		most := (total+4<<20-1)/(4<<20) + byHash
		if n := len(store.asked); n == 0 || n > most {
			t.Errorf("%d queries for 1,000 files of 16 KiB (%d bytes), want from 1 to %d", n, total, most)
		}
		t.Logf("%d queries for %d files", len(store.asked), len(sources))
	})
}

// gitGate keeps the files a hub would take inline (gitfile.Regular) out
// of the upload, as a commit's preupload does.
type gitGate struct {
	mu     sync.Mutex
	inline map[int]bool
}

func (g *gitGate) Offer(file int, size int64, sample []byte) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.inline[file] = gitfile.Regular(size, sample)
}
func (g *gitGate) Flush() {}
func (g *gitGate) Decide(_ context.Context, file int) (bool, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	return !g.inline[file], nil
}

// The first file of a commit that goes to Xet is asked about even when
// small text files the hub takes inline come before it: they were never
// stored, so asking about them tells nothing, and the next file would
// wait 4 MiB for its turn (a folder of a README and a 200 KiB weight
// sent its weight again on every upload).
func TestFirstFileToXetIsAskedAbout(t *testing.T) {
	w := randomData(41, 200<<10)
	sources := []pipeline.Source{sourceOf("README.md", []byte("# a card\n")), sourceOf("notes.txt", []byte("text\n")), sourceOf("w.bin", w)}
	store := newAskedStore(0)
	results, err := (&pipeline.Uploader{}).RunGated(context.Background(), store, sources, &gitGate{inline: map[int]bool{}})
	if err != nil {
		t.Fatal(err)
	}
	if !results[0].Inline || !results[1].Inline || results[2].Inline {
		t.Fatalf("inline: %v %v %v, want the two text files", results[0].Inline, results[1].Inline, results[2].Inline)
	}
	if !strings.Contains(hashSet(store.asked), chunkHashes(w)[0].String()) {
		t.Errorf("w.bin's first chunk was not asked about (%d queries)", len(store.asked))
	}
	// Ungated, every file goes to Xet: the first file is asked about.
	store = newAskedStore(0)
	if _, err := (&pipeline.Uploader{}).Run(context.Background(), store, sources); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(hashSet(store.asked), xethash.Chunk([]byte("# a card\n")).String()) {
		t.Errorf("an ungated upload did not ask about its first file (%d queries)", len(store.asked))
	}
}

func hashSet(hs []xethash.Hash) string {
	set := map[xethash.Hash]bool{}
	for _, h := range hs {
		set[h] = true
	}
	var b strings.Builder
	for _, h := range hs {
		if set[h] {
			b.WriteString(h.String())
			delete(set, h)
		}
	}
	return b.String()
}

// A source that gives other bytes than it said, or cannot be opened,
// fails the upload with its name, small (read whole, ahead) or large
// (read in pieces in turn).
func TestSourcesThatMisbehave(t *testing.T) {
	broken := errors.New("disk on fire")
	for _, size := range []int{100, 3 << 20} {
		d := randomData(7, size)
		cases := []struct {
			src  pipeline.Source
			want string
		}{
			{pipeline.Source{Name: "longer", Size: int64(size - 1), Open: func() (io.Reader, error) { return bytes.NewReader(d), nil }},
				fmt.Sprintf("upload longer: read %d bytes, but the source said %d", size, size-1)},
			{pipeline.Source{Name: "shorter", Size: int64(size + 1), Open: func() (io.Reader, error) { return bytes.NewReader(d), nil }},
				fmt.Sprintf("upload shorter: read %d bytes, but the source said %d", size, size+1)},
			{pipeline.Source{Name: "unopenable", Size: int64(size), Open: func() (io.Reader, error) { return nil, broken }},
				"upload unopenable: disk on fire"},
			{pipeline.Source{Name: "unreadable", Size: int64(size), Open: func() (io.Reader, error) {
				return io.MultiReader(bytes.NewReader(d[:size/2]), iotestErr{broken}), nil
			}}, "upload unreadable: reading: disk on fire"},
		}
		for _, c := range cases {
			ok := sourceOf("fine", d)
			_, err := (&pipeline.Uploader{}).Run(context.Background(), &pipeline.Collector{}, []pipeline.Source{ok, c.src, ok})
			if err == nil || err.Error() != c.want {
				t.Errorf("%d bytes, %s: %v, want %q", size, c.src.Name, err, c.want)
			}
		}
	}
}

type iotestErr struct{ err error }

func (e iotestErr) Read([]byte) (int, error) { return 0, e.err }
