package hub_test

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"syscall"
	"testing"

	"github.com/xetkit/xetkit/chunking"
	"github.com/xetkit/xetkit/hub"
	"github.com/xetkit/xetkit/internal/hubtest"
	"github.com/xetkit/xetkit/shard"
	"github.com/xetkit/xetkit/xethash"
	"github.com/xetkit/xetkit/xorb"
)

// BenchmarkIngest sends 256 MiB of random data as four full xorbs and the
// shard that registers them to a fresh hub, through its HTTP handlers, and
// reports the CPU seconds per GiB the process spends on both sides of the
// loopback requests (a hub alone, measured from outside under xetkit
// upload, spends a little over half of it).
func BenchmarkIngest(b *testing.B) {
	data := randomData(99, 256<<20)
	var xorbs []*xorb.Built
	var bl xorb.Builder
	var entries []xethash.Entry
	s := &shard.Shard{}
	var terms []shard.Term
	var verification []xethash.Hash
	flush := func() {
		unpacked := uint32(bl.Unpacked())
		x, err := bl.Finish()
		if err != nil {
			b.Fatal(err)
		}
		xorbs = append(xorbs, x)
		sx := shard.Xorb{Hash: x.Hash, BytesInXorb: unpacked, BytesOnDisk: uint32(len(x.Records()))}
		for _, c := range x.Chunks {
			sx.Chunks = append(sx.Chunks, shard.Chunk{Hash: c.Hash, ByteRangeStart: c.UnpackedOffset, UnpackedBytes: c.UncompressedSize})
		}
		s.Xorbs = append(s.Xorbs, sx)
		terms = append(terms, shard.Term{Xorb: x.Hash, UnpackedBytes: sx.BytesInXorb, ChunkEnd: uint32(len(x.Chunks))})
		hashes := make([]xethash.Hash, len(x.Chunks))
		for i, c := range x.Chunks {
			hashes[i] = c.Hash
		}
		verification = append(verification, xethash.Verification(hashes))
		bl = xorb.Builder{}
	}
	for _, c := range chunking.Split(data) {
		if bl.Unpacked()+uint64(len(c)) > xorb.MaxBytes {
			flush()
		}
		if err := bl.Add(c); err != nil {
			b.Fatal(err)
		}
		entries = append(entries, xethash.Entry{Hash: xethash.Chunk(c), Size: uint64(len(c))})
	}
	flush()
	s.Files = []shard.File{{Hash: xethash.File(entries), Terms: terms, Verification: verification}}
	shardBytes, err := s.Marshal(shard.WriteOptions{})
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(data)))
	b.ResetTimer()
	var before, after syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &before)
	for b.Loop() {
		b.StopTimer()
		srv := httptest.NewServer(hubtest.New(b, hub.Config{UserToken: userToken}))
		tok := casToken(b, srv.URL)
		b.StartTimer()
		for _, x := range xorbs {
			post(b, srv.URL+"/v1/xorbs/default/"+x.Hash.String(), tok, x.Records())
		}
		post(b, srv.URL+"/v1/shards", tok, shardBytes)
		b.StopTimer()
		srv.Close()
		b.StartTimer()
	}
	syscall.Getrusage(syscall.RUSAGE_SELF, &after)
	cpu := float64(after.Utime.Nano()+after.Stime.Nano()-before.Utime.Nano()-before.Stime.Nano()) / 1e9
	b.ReportMetric(cpu/float64(b.N)/(float64(len(data))/(1<<30)), "CPU-s/GiB")
}

func casToken(b *testing.B, base string) string {
	req, _ := http.NewRequest("GET", base+"/api/models/bench/ingest/xet-write-token/main", nil)
	req.Header.Set("Authorization", "Bearer "+userToken)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		b.Fatal(err)
	}
	defer resp.Body.Close()
	var t struct{ AccessToken string }
	if err := json.NewDecoder(resp.Body).Decode(&t); err != nil || t.AccessToken == "" {
		b.Fatalf("token: %v", err)
	}
	return t.AccessToken
}

func post(b *testing.B, url, tok string, body []byte) {
	req, _ := http.NewRequest("POST", url, bytes.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+tok)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		b.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != 200 {
		msg, _ := io.ReadAll(resp.Body)
		b.Fatalf("%s: %d %s", url, resp.StatusCode, msg)
	}
}
