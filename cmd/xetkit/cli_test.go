package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/xetkit/xetkit/hub"
	"github.com/xetkit/xetkit/internal/hubtest"
)

func TestVersionMatchesPackage(t *testing.T) {
	raw, err := os.ReadFile("../../package.json")
	if err != nil {
		t.Fatal(err)
	}
	var pkg struct{ Version string }
	if err := json.Unmarshal(raw, &pkg); err != nil {
		t.Fatal(err)
	}
	if pkg.Version != version {
		t.Fatalf("package.json says %s, the command says %s", pkg.Version, version)
	}
	for _, args := range [][]string{{"version"}, {"--version"}} {
		status, out, _ := runCLI(t, nil, args...)
		if status != 0 || !strings.HasPrefix(out, "xetkit "+version) {
			t.Errorf("%v: status %d, %q", args, status, out)
		}
	}
}

// Every command answers "help CMD" and "CMD -h" with its own usage, and
// every group with its commands.
func TestHelpForEveryCommandAndGroup(t *testing.T) {
	groups := map[string]bool{}
	for _, name := range commandNames() {
		if g, _, ok := strings.Cut(name, " "); ok {
			groups[g] = true
		}
		want := "usage: xetkit " + name
		for _, args := range [][]string{append([]string{"help"}, strings.Fields(name)...), append(strings.Fields(name), "-h")} {
			status, out, errOut := runCLI(t, nil, args...)
			if status != 0 || !strings.HasPrefix(out, want) || errOut != "" {
				t.Errorf("%q: status %d, stdout %q, stderr %q", args, status, out, errOut)
			}
		}
	}
	if len(groups) == 0 {
		t.Fatal("no command groups registered")
	}
	for g := range groups {
		for _, args := range [][]string{{"help", g}, {g, "-h"}, {g, "--help"}} {
			status, out, _ := runCLI(t, nil, args...)
			if status != 0 || !strings.Contains(out, "usage: xetkit "+g+" COMMAND") {
				t.Errorf("%q: status %d, %q", args, status, out)
			}
			for _, name := range groupCommands(g) {
				if !strings.Contains(out, "xetkit "+name) {
					t.Errorf("%q does not list %q", args, name)
				}
			}
		}
		// The group alone is a usage mistake, but still shows its commands.
		status, _, errOut := runCLI(t, nil, g)
		if status != 2 || !strings.Contains(errOut, "usage: xetkit "+g) {
			t.Errorf("%q alone: status %d, stderr %q", g, status, errOut)
		}
	}
	status, _, errOut := runCLI(t, nil, "help", "shrad")
	if status != 2 || !strings.Contains(errOut, `did you mean "shard`) {
		t.Errorf("help shrad: status %d, %q", status, errOut)
	}
}

func TestDownloadRefusesATerminal(t *testing.T) {
	var out, errOut bytes.Buffer
	e := &env{stdin: strings.NewReader(""), stdout: &out, stderr: &errOut,
		isTerminal: func(w io.Writer) bool { return w == &out }}
	hash := strings.Repeat("0", 64)
	status := run(e, []string{"download", "--hub", "http://127.0.0.1:1", "--repo", "a/b", "--hash", hash})
	if status != 2 || !strings.Contains(errOut.String(), "terminal") || out.Len() != 0 {
		t.Fatalf("status %d, stdout %d bytes, stderr %q", status, out.Len(), errOut.String())
	}
}

func TestMeterText(t *testing.T) {
	m := &meter{label: "upload", tty: true, total: 4 << 20, done: 1 << 20}
	got := m.text(time.Second)
	for _, want := range []string{"upload", "1.0 MiB / 4.0 MiB", "25%", "[#####...............]", "1.0 MiB/s", "ETA 3s"} {
		if !strings.Contains(got, want) {
			t.Errorf("%q lacks %q", got, want)
		}
	}
	m = &meter{label: "download", total: -1, done: 512}
	if got := m.text(time.Second); got != "download  512 B  512 B/s" {
		t.Errorf("unknown total: %q", got)
	}
	// Plain lines when not a terminal, at most one per interval; a nil
	// meter (--quiet) is silent.
	var buf bytes.Buffer
	m = &meter{w: &buf, label: "x", total: 10, start: time.Now(), lineEvery: time.Hour}
	m.set(1, 10)
	m.set(2, 10)
	m.finish()
	if n := strings.Count(buf.String(), "\n"); n != 1 || strings.Contains(buf.String(), "\r") {
		t.Errorf("plain output %q", buf.String())
	}
	var quiet *meter
	quiet.set(1, 2)
	quiet.finish()
}

func TestUploadJSONAndQuiet(t *testing.T) {
	url := testHub(t)
	f := filepath.Join(t.TempDir(), "a.txt")
	if err := os.WriteFile(f, []byte("hello xetkit"), 0o644); err != nil {
		t.Fatal(err)
	}
	status, out, errOut := runCLI(t, nil, "upload", "--hub", url, "--repo", "alice/x", "--token", "tok", "--json", "--quiet", f)
	if status != 0 || errOut != "" {
		t.Fatalf("status %d, stderr %q", status, errOut)
	}
	var results struct {
		Files []struct {
			Path   string
			Size   int64
			Hash   *string
			SHA256 string
		}
		Commit *struct{ OID, URL string }
	}
	if err := json.Unmarshal([]byte(out), &results); err != nil || len(results.Files) != 1 || results.Files[0].Size != 12 ||
		results.Files[0].Path != "a.txt" || results.Files[0].Hash != nil || results.Commit == nil || len(results.Commit.OID) != 40 {
		t.Fatalf("--json printed %q (%v)", out, err)
	}
}

// Ctrl-C during a transfer ends the command with status 130, and an
// upload says that running it again resumes it.
func TestInterruptExits130(t *testing.T) {
	bin := filepath.Join(t.TempDir(), "xetkit")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	// A hub that takes no xorb until the test ends.
	h := hubtest.New(t, hub.Config{UserToken: "t"})
	stall, xorbCame := make(chan struct{}), make(chan struct{}, 1)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.Contains(r.URL.Path, "/xorbs/") {
			select {
			case xorbCame <- struct{}{}:
			default:
			}
			select {
			case <-stall:
			case <-r.Context().Done():
			}
			return
		}
		h.ServeHTTP(w, r)
	}))
	defer srv.Close()
	defer close(stall)
	f := filepath.Join(t.TempDir(), "a.bin")
	if err := os.WriteFile(f, randomBytes(1<<20, 7), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "upload", "--hub", srv.URL, "--repo", "a/b", "--token", "t", "--quiet", f)
	var errOut bytes.Buffer
	cmd.Stderr = &errOut
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	<-xorbCame // the upload is under way
	if err := cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	err := cmd.Wait()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 130 || errOut.String() != "xetkit upload: interrupted: run the same command again to resume: what the hub has stored is not sent again\n" {
		t.Fatalf("exit %v, stderr %q", err, errOut.String())
	}
}

// A hub that cannot be reached is a failure that names the network error,
// not an interruption (exit 1, not 130).
func TestUnreachableHubIsNotAnInterruption(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close() // nothing listens there now
	f := filepath.Join(t.TempDir(), "a.txt")
	os.WriteFile(f, []byte("hello"), 0o644)
	status, _, errOut := runCLI(t, nil, "upload", "--hub", "http://"+addr, "--repo", "a/b", "--token", "t", "--retries", "1", "--retry-delay", "1ms", "--quiet", f)
	if status != 1 || strings.Contains(errOut, "interrupted") || !strings.Contains(errOut, "refused") {
		t.Fatalf("status %d, stderr %q", status, errOut)
	}
}

func TestServeDefaultTokenLooksLikeAHubToken(t *testing.T) {
	if tok := randomToken(); !strings.HasPrefix(tok, "hf_") || len(tok) < 20 {
		t.Fatalf("default token %q", tok)
	}
}

// --no-resume uploads a file through Xet with no state kept (it used to
// crash: the Uploader was given a nil state it then called).
func TestUploadNoResume(t *testing.T) {
	url := testHub(t)
	f := filepath.Join(t.TempDir(), "a.bin")
	data := make([]byte, 1<<20) // NUL bytes: binary, so through Xet
	data[1000] = 7
	if err := os.WriteFile(f, data, 0o644); err != nil {
		t.Fatal(err)
	}
	cache := t.TempDir()
	status, out, errOut := runCLI(t, nil, "upload", "--hub", url, "--repo", "alice/x", "--token", "tok", "--no-resume", "--cache-dir", cache, "--json", "--quiet", f)
	if status != 0 || errOut != "" {
		t.Fatalf("status %d, stderr %q", status, errOut)
	}
	var rep struct {
		Files  []struct{ Hash *string }
		Commit *struct{ OID string }
	}
	if err := json.Unmarshal([]byte(out), &rep); err != nil || len(rep.Files) != 1 || rep.Files[0].Hash == nil || rep.Commit == nil {
		t.Fatalf("--json printed %q (%v)", out, err)
	}
	if left, _ := os.ReadDir(cache); len(left) != 0 {
		t.Errorf("--no-resume left state in the cache folder: %v", left)
	}
}
