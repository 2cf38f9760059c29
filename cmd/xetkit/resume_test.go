package main

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/json"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/xetkit/xetkit/hub"
	"github.com/xetkit/xetkit/internal/hubtest"
	"github.com/xetkit/xetkit/pipeline"
	"github.com/xetkit/xetkit/resume"
)

// TestMain keeps the uploads of every test out of the user's cache folder,
// and the user's Hugging Face settings (hub, token, token file, offline)
// out of every test.
func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "xetkit-cache-")
	if err != nil {
		panic(err)
	}
	os.Setenv("XETKIT_CACHE", dir)
	os.Setenv("HF_HOME", filepath.Join(dir, "hf-home"))
	for _, v := range []string{"HF_ENDPOINT", "HF_TOKEN", "HUGGING_FACE_HUB_TOKEN", "HF_TOKEN_PATH", "HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE"} {
		os.Unsetenv(v)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// writeRandomFile writes n random bytes (incompressible: the xorbs carry
// them whole) and returns their SHA-256.
func writeRandomFile(t *testing.T, path string, n int, seed uint64) [32]byte {
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	r := rand.New(rand.NewPCG(seed, seed+1))
	h := sha256.New()
	w := bufio.NewWriterSize(io.MultiWriter(f, h), 1<<20)
	var b [8]byte
	for i := 0; i < n; i += 8 {
		binary.LittleEndian.PutUint64(b[:], r.Uint64())
		w.Write(b[:])
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	return [32]byte(h.Sum(nil))
}

// killedUpload starts `xetkit upload` and kills it (SIGKILL) once the state
// folder records at least half of the file's xorbs as stored: what
// survives an interruption is only what was recorded. It returns the
// records then on disk.
func killedUpload(t *testing.T, bin string, args []string, stateDir string, xorbs int) []string {
	t.Helper()
	cmd := exec.Command(bin, args...)
	var errOut bytes.Buffer
	cmd.Stderr = &errOut
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	deadline := time.After(60 * time.Second)
	for {
		records, _ := filepath.Glob(filepath.Join(stateDir, "*.shard"))
		if len(records) >= (xorbs+1)/2 {
			cmd.Process.Kill()
			<-exited
			records, _ = filepath.Glob(filepath.Join(stateDir, "*.shard"))
			return records
		}
		select {
		case err := <-exited:
			t.Fatalf("the upload ended before it could be killed (%v): %s", err, errOut.String())
		case <-deadline:
			cmd.Process.Kill()
			t.Fatalf("no xorb recorded within 60s: %s", errOut.String())
		case <-time.After(5 * time.Millisecond):
		}
	}
}

// checkDownload downloads path from the repo and compares its SHA-256.
func checkDownload(t *testing.T, hubArgs []string, path string, want [32]byte) {
	t.Helper()
	out := filepath.Join(t.TempDir(), "out")
	status, _, errOut := runCLI(t, nil, append(append([]string{"download"}, hubArgs...), path, "-o", out, "--quiet")...)
	if status != 0 {
		t.Fatalf("download: %d %s", status, errOut)
	}
	f, err := os.Open(out)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	h := sha256.New()
	io.Copy(h, f)
	if [32]byte(h.Sum(nil)) != want {
		t.Fatal("the committed file downloads different bytes")
	}
}

// resumeSetup builds the command, starts a hub and writes a random file
// of size bytes.
func resumeSetup(t *testing.T, seed uint64, size int) (bin string, h *hubtest.Restartable, file string, sum [32]byte, cache string, hubArgs []string) {
	bin = filepath.Join(t.TempDir(), "xetkit")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	h = hubtest.NewRestartable(t, hub.Config{UserToken: "tok"})
	file = filepath.Join(t.TempDir(), "big.bin")
	sum = writeRandomFile(t, file, size, seed)
	cache = t.TempDir()
	hubArgs = []string{"--hub", h.Server.URL, "--repo", "alice/big", "--token", "tok"}
	return
}

// resumeFileSize is the 1 GiB case, scaled to keep the test
// short (32 xorbs at the default size).
const resumeFileSize = 256 << 20

// `xetkit upload` killed with SIGKILL at about half of a file, then run
// again: the second run sends less than 55% of the file's bytes, commits,
// the file downloads identical, and the state folder of the repository is
// gone.
func TestUploadResumesAfterKill(t *testing.T) {
	bin, h, file, sum, cache, hubArgs := resumeSetup(t, 41, resumeFileSize)
	stateDir := filepath.Join(cache, "uploads", resume.Scope(h.Server.URL, "model", "alice/big"))
	args := append(append([]string{"upload"}, hubArgs...), "--cache-dir", cache, "--quiet", file)
	// Killed once half the xorbs are recorded: with the window the
	// controller starts at, many more than 4 are in flight at once.
	records := killedUpload(t, bin, args, stateDir, resumeFileSize/pipeline.DefaultXorbSize)
	first := h.Hub().Stats().XorbBytesReceived

	cmd := exec.Command(bin, append(append([]string{"upload"}, hubArgs...), "--cache-dir", cache, "--json", file)...)
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	if err := cmd.Run(); err != nil {
		t.Fatalf("second upload: %v: %s", err, errOut.String())
	}
	sent := h.Hub().Stats().XorbBytesReceived - first
	t.Logf("killed with %d xorbs recorded, after %d xorb bytes received; the second run sent %d bytes (%.1f%% of the file)",
		len(records), first, sent, 100*float64(sent)/resumeFileSize)
	if sent >= resumeFileSize*55/100 {
		t.Errorf("the second run sent %d xorb bytes, not less than 55%% of %d", sent, resumeFileSize)
	}
	var rep struct {
		Commit *struct{ OID string }
		Files  []struct{ Size, ResumedBytes, UploadedBytes int64 }
	}
	if err := json.Unmarshal(out.Bytes(), &rep); err != nil || rep.Commit == nil || len(rep.Files) != 1 {
		t.Fatalf("--json printed %q (%v)", out.String(), err)
	}
	if f := rep.Files[0]; f.ResumedBytes < resumeFileSize*45/100 || f.ResumedBytes+f.UploadedBytes != resumeFileSize {
		t.Errorf("report %+v", f)
	}
	if !strings.Contains(errOut.String(), "upload: resumed: ") {
		t.Errorf("stderr does not say what was resumed: %q", errOut.String())
	}
	checkDownload(t, hubArgs, "big.bin", sum)
	if left, _ := os.ReadDir(stateDir); len(left) != 0 {
		t.Errorf("state left after the commit: %v", left)
	}
}

// The hub lost a xorb the state names (deleted from its store, the hub
// restarted): the upload run again still commits a file that downloads
// identical.
func TestUploadResumeWhenTheHubLostAXorb(t *testing.T) {
	bin, h, file, sum, cache, hubArgs := resumeSetup(t, 42, 128<<20)
	stateDir := filepath.Join(cache, "uploads", resume.Scope(h.Server.URL, "model", "alice/big"))
	args := append(append([]string{"upload"}, hubArgs...), "--cache-dir", cache, "--quiet", file)
	records := killedUpload(t, bin, args, stateDir, (128<<20)/pipeline.DefaultXorbSize)
	name := filepath.Base(records[0]) // <time>-<xorb hash>.shard
	lost := filepath.Join(h.Dir, "xorbs", strings.TrimSuffix(name[17:], ".shard"))
	if err := os.Remove(lost); err != nil {
		t.Fatal(err)
	}
	h.Restart(t, hub.Config{UserToken: "tok"})
	h.Shards.Store(0)
	// Xorbs in flight at the kill, whose acceptance was not recorded: the
	// upload asks the hub about each with a shard naming it alone.
	unconfirmed := 0
	sending, _ := filepath.Glob(filepath.Join(stateDir, "*.sending"))
	for _, p := range sending {
		if _, err := os.Stat(strings.TrimSuffix(p, ".sending") + ".shard"); err != nil {
			unconfirmed++
		}
	}

	status, out, errOut := runCLIEnv(t, bin, args...)
	if status != 0 || !strings.Contains(out, "commit ") {
		t.Fatalf("second upload: %d %q %s", status, out, errOut)
	}
	if n := h.Shards.Load(); n != int64(2+unconfirmed) {
		t.Errorf("%d shard uploads, want 2 + %d: one refused for the lost xorb, then one with it sent again", n, unconfirmed)
	}
	if _, err := os.Stat(lost); err != nil {
		t.Errorf("the lost xorb was not sent again: %v", err)
	}
	checkDownload(t, hubArgs, "big.bin", sum)
	if left, _ := os.ReadDir(stateDir); len(left) != 0 {
		t.Errorf("state left after the commit: %v", left)
	}
}

// runCLIEnv runs the built command to its end.
func runCLIEnv(t *testing.T, bin string, args ...string) (int, string, string) {
	t.Helper()
	cmd := exec.Command(bin, args...)
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err := cmd.Run()
	if ee, ok := err.(*exec.ExitError); ok {
		return ee.ExitCode(), out.String(), errOut.String()
	}
	if err != nil {
		t.Fatal(err)
	}
	return 0, out.String(), errOut.String()
}
