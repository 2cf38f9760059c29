package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/xetkit/xetkit/internal/testref"
	"github.com/xetkit/xetkit/xethash"
)

var refShardNames = []string{
	"ev-population.csv.shard",
	"ev-population.csv.shard.verification",
	"ev-population.csv.shard.verification-no-footer",
}

func TestShardParseReference(t *testing.T) {
	wantVerification := xethash.Verification(func() []xethash.Hash {
		var hs []xethash.Hash
		for _, c := range testref.Chunks(t) {
			hs = append(hs, c.Hash)
		}
		return hs
	}()).String()
	for _, name := range refShardNames {
		status, out, errOut := runCLI(t, nil, "shard", "parse", testref.Path(t, name))
		if status != 0 {
			t.Fatalf("%s: status %d: %s", name, status, errOut)
		}
		// The parts of the ParsedShard JSON this test reads.
		var p struct {
			Files []struct {
				Hash         xethash.Hash
				SHA256       *xethash.Hash
				Verification []xethash.Hash
			}
			Xorbs []struct {
				Hash      xethash.Hash
				NumChunks int
				Chunks    []struct{ Hash xethash.Hash }
			}
			Footer *struct{ Version int }
		}
		if err := json.Unmarshal([]byte(out), &p); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if len(p.Files) != 1 || len(p.Xorbs) != 1 {
			t.Fatalf("%s: %d files, %d xorbs", name, len(p.Files), len(p.Xorbs))
		}
		f, x := p.Files[0], p.Xorbs[0]
		if f.Hash.String() != testref.FileHash || f.SHA256 == nil || f.SHA256.String() != testref.SHA256 ||
			x.Hash.String() != testref.XorbHash || x.NumChunks != testref.NumChunks || len(x.Chunks) != testref.NumChunks {
			t.Errorf("%s: file %s sha256 %v xorb %s with %d chunks", name, f.Hash, f.SHA256, x.Hash, x.NumChunks)
		}
		if strings.Contains(name, "verification") {
			if len(f.Verification) != 1 || f.Verification[0].String() != wantVerification {
				t.Errorf("%s: verification %v, want %s", name, f.Verification, wantVerification)
			}
		}
		if strings.HasSuffix(name, "no-footer") != (p.Footer == nil) {
			t.Errorf("%s: footer %+v", name, p.Footer)
		}
	}
	// --pretty gives the same JSON, indented.
	_, compact, _ := runCLI(t, nil, "shard", "parse", testref.Path(t, refShardNames[0]))
	_, pretty, _ := runCLI(t, nil, "shard", "parse", "--pretty", testref.Path(t, refShardNames[0]))
	var a, b bytes.Buffer
	json.Compact(&a, []byte(compact))
	json.Compact(&b, []byte(pretty))
	if a.String() != b.String() || !strings.Contains(pretty, "\n  \"files\"") {
		t.Error("--pretty differs from the compact JSON, or is not indented")
	}
}

// shard spec X | shard build - gives back X, for each reference shard.
func TestShardSpecBuildRoundTrip(t *testing.T) {
	for _, name := range refShardNames {
		status, spec, errOut := runCLI(t, nil, "shard", "spec", testref.Path(t, name))
		if status != 0 {
			t.Fatalf("%s: spec: %d %s", name, status, errOut)
		}
		status, built, errOut := runCLI(t, []byte(spec), "shard", "build", "-")
		if status != 0 {
			t.Fatalf("%s: build: %d %s", name, status, errOut)
		}
		if !bytes.Equal([]byte(built), testref.Read(t, name)) {
			t.Errorf("%s: spec | build differs from the shard", name)
		}
	}
	// -o writes a file instead.
	out := filepath.Join(t.TempDir(), "s.shard")
	_, spec, _ := runCLI(t, nil, "shard", "spec", testref.Path(t, refShardNames[2]))
	if status, stdout, errOut := runCLI(t, []byte(spec), "shard", "build", "-o", out, "-"); status != 0 || stdout != "" {
		t.Fatalf("build -o: %d %q %s", status, stdout, errOut)
	}
	if got, _ := os.ReadFile(out); !bytes.Equal(got, testref.Read(t, refShardNames[2])) {
		t.Error("build -o wrote something else")
	}
}

func TestShardCLIErrors(t *testing.T) {
	ref := testref.Read(t, refShardNames[2])
	corrupt := bytes.Clone(ref)
	corrupt[48] ^= 1 // the file hash no longer matches its chunks: an error finding
	for _, c := range []struct {
		name   string
		stdin  []byte
		args   []string
		status int
		stdout string // substring
		stderr string // substring
	}{
		{"unreadable", ref[:100], []string{"shard", "parse", "-"}, 1, "", "num_entries 1 needs 3 more records (144 bytes) but only 4 bytes remain before byte 100 at byte offset 84"},
		{"unreadable spec", ref[:100], []string{"shard", "spec", "-"}, 1, "", "at byte offset 84"},
		{"findings are not failures", ref[:0], nil, 0, "", ""},
		{"strict makes error findings fail", nil, []string{"shard", "parse", "--strict", "-"}, 1, `"rule":"file-hash"`, "(file-hash) at byte offset 48"},
		{"upload rules", nil, nil, 0, "", ""},
		{"unknown spec key", []byte(`{"files": [{"verifcation": true}]}`), []string{"shard", "build", "-"}, 1, "", `files[0]: unknown key "verifcation"; did you mean "verification"?`},
		{"unknown flag", nil, []string{"shard", "parse", "--stritc", "-"}, 2, "", "did you mean --strict?"},
		{"two files", nil, []string{"shard", "spec", "a", "b"}, 2, "", "want one argument"},
	} {
		stdin, args := c.stdin, c.args
		switch c.name {
		case "findings are not failures":
			stdin, args = corrupt, []string{"shard", "parse", "-"}
			c.stdout = `"severity":"error"`
		case "strict makes error findings fail":
			stdin = corrupt
		case "upload rules":
			stdin, args = testref.Read(t, refShardNames[0]), []string{"shard", "parse", "--upload", "-"}
			c.stdout = `"rule":"upload-verification"`
		}
		status, stdout, stderr := runCLI(t, stdin, args...)
		if status != c.status || !strings.Contains(stdout, c.stdout) || !strings.Contains(stderr, c.stderr) {
			t.Errorf("%s: status %d, stdout %.200q, stderr %q", c.name, status, stdout, stderr)
		}
		if strings.Count(stderr, "\n") > 1 || strings.Contains(stderr, "goroutine") {
			t.Errorf("%s: stderr is not one line: %q", c.name, stderr)
		}
	}
}
