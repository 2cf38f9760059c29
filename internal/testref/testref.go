// Package testref locates the reference artefacts in ../shared/reference for
// tests, and reads the reference .chunks list.
package testref

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"

	"github.com/xetkit/xetkit/xethash"
)

// Dir returns the folder holding the reference files. When they are missing
// the test fails under CI (CI set) and is skipped elsewhere, as the
// reference README asks.
func Dir(t testing.TB) string {
	t.Helper()
	_, file, _, _ := runtime.Caller(0)
	root := filepath.Join(filepath.Dir(file), "..", "..")
	dir := filepath.Join(root, "..", "shared", "reference", "xet-spec-reference-files")
	if env := os.Getenv("XETKIT_REFERENCE"); env != "" {
		dir = env
	}
	if _, err := os.Stat(filepath.Join(dir, "ev-population.csv.chunks")); err != nil {
		msg := fmt.Sprintf("reference files not found in %s (expected ../shared/reference beside the checkout): %v", dir, err)
		if os.Getenv("CI") != "" {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
	return dir
}

// Path returns the path of one reference file, by its name in the folder.
func Path(t testing.TB, name string) string {
	t.Helper()
	return filepath.Join(Dir(t), name)
}

// Read returns the bytes of one reference file.
func Read(t testing.TB, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(Path(t, name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// Facts stated by the reference README for the EV population file.
const (
	FileHash  = "118a53328412787fee04011dcf82fdc4acf3a4a1eddec341c910d30a306aaf97"
	XorbHash  = "eea25d6ee393ccae385820daed127b96ef0ea034dfb7cf6da3a950ce334b7632"
	SHA256    = "f41255b252f776125f2b657136654e4d4d5d2ccf8ef4db0ec186bd1981b69734"
	FileSize  = 63527244
	NumChunks = 796
)

// Chunks reads ev-population.csv.chunks as (hash, size) entries.
func Chunks(t testing.TB) []xethash.Entry {
	t.Helper()
	f, err := os.Open(Path(t, "ev-population.csv.chunks"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []xethash.Entry
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) != 2 {
			t.Fatalf("chunks line %d: %q", len(out)+1, sc.Text())
		}
		h, err := xethash.Parse(fields[0])
		if err != nil {
			t.Fatal(err)
		}
		n, err := strconv.ParseUint(fields[1], 10, 32)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, xethash.Entry{Hash: h, Size: n})
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}
