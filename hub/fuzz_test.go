package hub_test

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/xetkit/xetkit/hub"
	"github.com/xetkit/xetkit/shard"
	"github.com/xetkit/xetkit/xethash"
	"github.com/xetkit/xetkit/xorb"
)

// Hostile upload bodies get 200 or a 4xx with a message, never a 5xx or a
// panic, and nothing but a valid object is stored.
func FuzzUploads(f *testing.F) {
	var b xorb.Builder
	b.Add([]byte("hello, xorb"))
	b.Add(bytes.Repeat([]byte{7}, 9000))
	built, _ := b.Finish()
	f.Add(built.Bytes, false)
	f.Add(built.Bytes[:len(built.Bytes)-20], false)
	s := &shard.Shard{Xorbs: []shard.Xorb{{Hash: built.Hash, Chunks: []shard.Chunk{{Hash: built.Chunks[0].Hash, UnpackedBytes: 11}}}}}
	sb, _ := s.Marshal(shard.WriteOptions{})
	f.Add(sb, true)
	f.Add([]byte{}, true)

	h, err := hub.New(hub.Config{Dir: f.TempDir()})
	if err != nil {
		f.Fatal(err)
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest("GET", "/api/models/a/b/xet-write-token/main", nil))
	var tok struct{ AccessToken string }
	if err := json.Unmarshal(rec.Body.Bytes(), &tok); err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, body []byte, isShard bool) {
		path := "/v1/shards"
		if !isShard {
			path = "/v1/xorbs/default/" + xethash.Chunk(body).String()
			if len(body) > 0 && body[0]&1 == 1 {
				path = "/v1/xorbs/default/" + built.Hash.String()
			}
		}
		req := httptest.NewRequest("POST", path, bytes.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+tok.AccessToken)
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		if rec.Code != http.StatusOK && (rec.Code < 400 || rec.Code >= 500) {
			t.Fatalf("%s: status %d: %s", path, rec.Code, rec.Body)
		}
		if rec.Code != http.StatusOK && !bytes.Contains(rec.Body.Bytes(), []byte(`"error"`)) {
			t.Fatalf("%s: %d without a message", path, rec.Code)
		}
	})
}

// A plan of kinds with counts is spelt out request by request, so a huge
// count is refused instead of allocating one slice element per fault.
func TestParseFaultsBoundsCounts(t *testing.T) {
	for _, s := range []string{"5xx:8777777775", "5xx:60000,429:60000"} {
		if _, err := hub.ParseFaults(s); err == nil || !strings.Contains(err.Error(), "faults in all") {
			t.Errorf("%q: %v", s, err)
		}
	}
	if f, err := hub.ParseFaults("5xx:2,drop:1"); err != nil || f.First != 3 {
		t.Errorf("5xx:2,drop:1: %+v, %v", f, err)
	}
}

func FuzzParseFaults(f *testing.F) {
	for _, s := range []string{"3", "5xx:2,429:1", "drop@/v1/", "lost:2,5xx@/a|/b", ":", "@", "5xx:-1", "5xx:8777777775", "429:99999,drop:2", "loop:flip,ok:2,cut", "loop:3"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		p, err := hub.ParseFaults(s)
		if err != nil {
			return
		}
		again, err := hub.ParseFaults(p.String())
		if err != nil {
			t.Fatalf("%q → %q: %v", s, p.String(), err)
		}
		if again.String() != p.String() {
			t.Fatalf("%q → %q → %q", s, p.String(), again.String())
		}
	})
}
