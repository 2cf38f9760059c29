package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/xetkit/xetkit/internal/testref"
	"github.com/xetkit/xetkit/xethash"
	"github.com/xetkit/xetkit/xorb"
)

const xorbPrefix = "ev-population.xorb.first-10-chunks"

// The ten reference chunk records decompress and hash to the first ten
// lines of the reference chunk list.
func TestXorbChunksOfReferencePrefix(t *testing.T) {
	status, out, stderr := runCLI(t, nil, "xorb", "chunks", testref.Path(t, xorbPrefix))
	if status != 0 {
		t.Fatalf("status %d: %s", status, stderr)
	}
	lines := strings.SplitAfter(string(testref.Read(t, "ev-population.csv.chunks")), "\n")
	if want := strings.Join(lines[:10], ""); out != want {
		t.Errorf("got\n%s\nwant\n%s", out, want)
	}
	// The same from standard input.
	if status, out2, _ := runCLI(t, testref.Read(t, xorbPrefix), "xorb", "chunks", "-"); status != 0 || out2 != out {
		t.Errorf("from stdin: status %d, output differs", status)
	}
}

func TestXorbParseJSON(t *testing.T) {
	// The reference prefix: no footer, hashes from decompressing.
	status, out, stderr := runCLI(t, nil, "xorb", "parse", testref.Path(t, xorbPrefix))
	if status != 0 {
		t.Fatalf("status %d: %s", status, stderr)
	}
	var s xorb.Summary
	if err := json.Unmarshal([]byte(out), &s); err != nil {
		t.Fatal(err)
	}
	ref := testref.Chunks(t)
	if s.HasFooter || s.Hash != nil || s.Footer != nil || !s.Verified || len(s.Chunks) != 10 || s.RecordsSize != 170626 {
		t.Fatalf("summary: %.400s", out)
	}
	for i, c := range s.Chunks {
		if c.Hash == nil || *c.Hash != ref[i].Hash || uint64(c.UncompressedSize) != ref[i].Size || c.Compression != "lz4" {
			t.Errorf("chunk %d: %+v", i, c)
		}
	}
	// --no-verify leaves the hashes out.
	_, out, _ = runCLI(t, nil, "xorb", "parse", "--no-verify", testref.Path(t, xorbPrefix))
	if !strings.Contains(out, `"verified":false`) || !strings.Contains(out, `"hash":null`) {
		t.Errorf("--no-verify output: %.300s", out)
	}

	// A complete xorb: the footer's hash is the xorb hash of the chunks.
	var b xorb.Builder
	chunks := [][]byte{[]byte(strings.Repeat("xetkit ", 3000)), []byte("short chunk")}
	for _, c := range chunks {
		if err := b.Add(c); err != nil {
			t.Fatal(err)
		}
	}
	built, err := b.Finish()
	if err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(t.TempDir(), "x.xorb")
	if err := os.WriteFile(file, built.Bytes, 0o644); err != nil {
		t.Fatal(err)
	}
	_, out, stderr = runCLI(t, nil, "xorb", "parse", file)
	s = xorb.Summary{}
	if err := json.Unmarshal([]byte(out), &s); err != nil {
		t.Fatalf("%v: %s", err, stderr)
	}
	want := xethash.Xorb([]xethash.Entry{{Hash: xethash.Chunk(chunks[0]), Size: 21000}, {Hash: xethash.Chunk(chunks[1]), Size: 11}})
	if !s.HasFooter || *s.Hash != want || *s.ComputedHash != want || s.Footer.NumChunks() != 2 {
		t.Errorf("summary: %.600s", out)
	}
	_, out, _ = runCLI(t, nil, "xorb", "chunks", file)
	if wantOut := xethash.Chunk(chunks[0]).String() + " 21000\n" + xethash.Chunk(chunks[1]).String() + " 11\n"; out != wantOut {
		t.Errorf("xorb chunks: %q", out)
	}
}

// Bad input: exit status 1, nothing on stdout, one line naming the offset.
func TestXorbBadInput(t *testing.T) {
	data := testref.Read(t, xorbPrefix)
	bad := append([]byte(nil), data...)
	bad[28959+4] = 7 // compression type of record 1
	for _, cmd := range []string{"chunks", "parse"} {
		for _, in := range [][]byte{bad, data[:1000], {}} {
			status, out, stderr := runCLI(t, in, "xorb", cmd, "-")
			if status != 1 || out != "" || strings.Count(stderr, "\n") != 1 || !strings.Contains(stderr, "byte offset") {
				t.Errorf("xorb %s: status %d, stdout %q, stderr %q", cmd, status, out, stderr)
			}
		}
	}
	_, _, stderr := runCLI(t, bad, "xorb", "chunks", "-")
	if !strings.Contains(stderr, "unknown compression type 7 at byte offset "+strconv.Itoa(28959+4)) {
		t.Errorf("stderr %q", stderr)
	}
	if status, _, _ := runCLI(t, nil, "xorb", "chunks"); status != 2 {
		t.Errorf("no argument: status %d, want 2", status)
	}
	if status, _, stderr := runCLI(t, nil, "xorb", "parse", "--no-verfy", "x"); status != 2 || !strings.Contains(stderr, "--no-verify") {
		t.Errorf("misspelt flag: status %d, %q", status, stderr)
	}
}

// shard parse and xorb parse print JSON alike: one line, or indented with
// --pretty; each given the other's kind of file says which command reads it.
func TestParseCommandsAgree(t *testing.T) {
	shardFile, xorbFile := testref.Path(t, refShardNames[0]), testref.Path(t, xorbPrefix)
	for _, c := range [][]string{{"shard", "parse", shardFile}, {"xorb", "parse", xorbFile}} {
		_, compact, _ := runCLI(t, nil, c...)
		status, pretty, errOut := runCLI(t, nil, append(c, "--pretty")...)
		var a, b bytes.Buffer
		json.Compact(&a, []byte(compact))
		json.Compact(&b, []byte(pretty))
		if status != 0 || strings.Count(compact, "\n") != 1 || a.String() != b.String() || !strings.Contains(pretty, "\n  \"") {
			t.Errorf("%v: status %d %q; compact %d lines, pretty %d", c, status, errOut, strings.Count(compact, "\n"), strings.Count(pretty, "\n"))
		}
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"xorb", "parse", shardFile}, "this is a shard, not a xorb: try xetkit shard parse " + shardFile},
		{[]string{"xorb", "chunks", shardFile}, "this is a shard, not a xorb: try xetkit shard parse " + shardFile},
		{[]string{"shard", "parse", xorbFile}, "this is a xorb, not a shard: try xetkit xorb parse " + xorbFile},
	} {
		if status, _, errOut := runCLI(t, nil, c.args...); status != 1 || errOut != "xetkit "+c.args[0]+" "+c.args[1]+": "+c.want+"\n" {
			t.Errorf("%v: %d %q", c.args, status, errOut)
		}
	}
}
