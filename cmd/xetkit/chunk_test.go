package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/xetkit/xetkit/chunkhash"
	"github.com/xetkit/xetkit/internal/testref"
	"github.com/xetkit/xetkit/xethash"
)

// runCLI runs one command line in-process and returns its exit status,
// standard output and standard error.
func runCLI(t *testing.T, stdin []byte, args ...string) (int, string, string) {
	t.Helper()
	var out, errOut bytes.Buffer
	status := run(&env{stdin: bytes.NewReader(stdin), stdout: &out, stderr: &errOut}, args)
	return status, out.String(), errOut.String()
}

func TestHashOfReferenceChunkList(t *testing.T) {
	list := testref.Path(t, "ev-population.csv.chunks")
	status, out, stderr := runCLI(t, nil, "hash", "--chunks", list)
	if status != 0 || strings.TrimSpace(out) != testref.FileHash {
		t.Fatalf("status %d, out %q, stderr %q", status, out, stderr)
	}
	status, out, _ = runCLI(t, nil, "hash", "--chunks", list, "--xorb")
	if status != 0 || strings.TrimSpace(out) != testref.XorbHash {
		t.Fatalf("--xorb: status %d, out %q", status, out)
	}
	data := testref.Read(t, "ev-population.csv.chunks")
	if status, out, _ = runCLI(t, data, "hash", "--chunks", "-"); strings.TrimSpace(out) != testref.FileHash {
		t.Fatalf("from stdin: status %d, out %q", status, out)
	}
}

func TestChunkAndHashOfAFile(t *testing.T) {
	data := bytes.Repeat([]byte("xetkit makes chunks of this text. "), 20000)
	file := filepath.Join(t.TempDir(), "in.txt")
	if err := os.WriteFile(file, data, 0o644); err != nil {
		t.Fatal(err)
	}
	status, out, stderr := runCLI(t, nil, "chunk", file)
	if status != 0 {
		t.Fatalf("status %d: %s", status, stderr)
	}
	entries, err := chunkhash.ParseList(strings.NewReader(out))
	if err != nil {
		t.Fatal(err)
	}
	want := chunkhash.Entries(chunkhash.Bytes(data, 1))
	if len(entries) != len(want) || len(want) < 2 {
		t.Fatalf("%d chunk lines, want %d", len(entries), len(want))
	}
	for i := range want {
		if entries[i] != want[i] {
			t.Fatalf("line %d differs", i)
		}
	}
	_, out, _ = runCLI(t, data, "hash", "-")
	if strings.TrimSpace(out) != xethash.File(want).String() {
		t.Fatalf("hash of stdin: %q", out)
	}
	// The empty file hashes to 32 zero bytes.
	_, out, _ = runCLI(t, nil, "hash", "-")
	if strings.TrimSpace(out) != xethash.Zero.String() {
		t.Fatalf("empty input: %q", out)
	}
}

func TestCLIMistakes(t *testing.T) {
	cases := []struct {
		args   []string
		stdin  string
		status int
		want   string
	}{
		{[]string{"hsah", "x"}, "", 2, `did you mean "hash"`},
		{[]string{"chunck"}, "", 2, `did you mean "chunk"`},
		{[]string{"hash", "--xrob", "x"}, "", 2, "did you mean --xorb"},
		{[]string{"hash"}, "", 2, "want one argument"},
		{[]string{"chunk", "/no/such/file"}, "", 1, "no such file"},
		{[]string{"hash", "--chunks", "-"}, "abc 12\n", 1, "byte offset 0"},
		{[]string{"hash", "--chunks", "-"}, strings.Repeat("0", 64) + " 5\n" + strings.Repeat("0", 64) + " x\n", 1, "byte offset 132"},
	}
	for _, c := range cases {
		status, _, stderr := runCLI(t, []byte(c.stdin), c.args...)
		if status != c.status || !strings.Contains(stderr, c.want) || strings.Count(stderr, "\n") != 1 {
			t.Errorf("%v: status %d, stderr %q; want status %d and %q on one line", c.args, status, stderr, c.status, c.want)
		}
	}
}
