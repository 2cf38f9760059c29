package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/xetkit/xetkit/cas"
	"github.com/xetkit/xetkit/hub"
	"github.com/xetkit/xetkit/internal/hubtest"
)

// randomBytes returns n bytes of a seeded generator (incompressible,
// binary: they go through Xet).
func randomBytes(n int, seed uint64) []byte {
	r := rand.New(rand.NewPCG(seed, seed+1))
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(r.Uint32())
	}
	return b
}

// writeFiles writes name → content under dir.
func writeFiles(t *testing.T, dir string, files map[string][]byte) {
	t.Helper()
	for name, b := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// The hub, the token and offline mode come from the environment as the
// Hugging Face tools read them: HF_ENDPOINT, HF_TOKEN, the token file
// (HF_TOKEN_PATH, else HF_HOME/token); the flags override them.
func TestHubDefaultsFromTheEnvironment(t *testing.T) {
	url := testHub(t)
	dir := t.TempDir()
	writeFiles(t, dir, map[string][]byte{"a.txt": []byte("from the environment\n")})
	t.Setenv("HF_ENDPOINT", url+"/")
	t.Setenv("HF_TOKEN", "tok\n")
	if status, out, errOut := runCLI(t, nil, "upload", "me/env", filepath.Join(dir, "a.txt"), "--quiet"); status != 0 || !strings.Contains(out, "commit ") {
		t.Fatalf("upload with HF_ENDPOINT and HF_TOKEN: %d %q %q", status, out, errOut)
	}
	t.Setenv("HF_TOKEN", "")
	home := t.TempDir()
	t.Setenv("HF_HOME", home)
	ls := func() (int, string) {
		status, out, errOut := runCLI(t, nil, "ls", "me/env")
		return status, out + errOut
	}
	// Public: readable without a token; the token file is read when there.
	os.WriteFile(filepath.Join(home, "token"), []byte("wrong\n"), 0o600)
	if status, msg := ls(); status != 1 || !strings.Contains(msg, "401") || !strings.Contains(msg, filepath.Join(home, "token")) {
		t.Errorf("a wrong token in HF_HOME/token: %d %q", status, msg)
	}
	os.WriteFile(filepath.Join(home, "token"), []byte("tok\n"), 0o600)
	if status, msg := ls(); status != 0 || !strings.Contains(msg, "a.txt") {
		t.Errorf("the token from HF_HOME/token: %d %q", status, msg)
	}
	other := filepath.Join(t.TempDir(), "my-token")
	os.WriteFile(other, []byte("wrong"), 0o600)
	t.Setenv("HF_TOKEN_PATH", other)
	if status, msg := ls(); status != 1 || !strings.Contains(msg, other) {
		t.Errorf("HF_TOKEN_PATH before HF_HOME/token: %d %q", status, msg)
	}
	if status, out, errOut := runCLI(t, nil, "ls", "me/env", "--token", "tok"); status != 0 || !strings.Contains(out, "a.txt") {
		t.Errorf("--token before the token file: %d %q %q", status, out, errOut)
	}
	t.Setenv("HF_ENDPOINT", "ftp://x")
	if status, _, errOut := runCLI(t, nil, "ls", "me/env"); status != 2 || !strings.Contains(errOut, `HF_ENDPOINT "ftp://x"`) {
		t.Errorf("a bad HF_ENDPOINT: %d %q", status, errOut)
	}
	if status, _, errOut := runCLI(t, nil, "ls", "me/env", "--hub", url, "--token", "tok"); status != 0 {
		t.Errorf("--hub before HF_ENDPOINT: %d %q", status, errOut)
	}
	// Offline: every command that needs the hub says so, and sends nothing.
	t.Setenv("HF_HUB_OFFLINE", "1")
	for _, args := range [][]string{{"ls", "me/env"}, {"download", "me/env", "a.txt"}, {"upload", "me/env", filepath.Join(dir, "a.txt")}} {
		if status, _, errOut := runCLI(t, nil, args...); status != 1 || !strings.Contains(errOut, "HF_HUB_OFFLINE is set") {
			t.Errorf("%v offline: %d %q", args, status, errOut)
		}
	}
	// Neither --hub nor HF_ENDPOINT: the Hugging Face Hub.
	t.Setenv("HF_HUB_OFFLINE", "")
	t.Setenv("HF_ENDPOINT", "")
	h, err := hubCommand(&env{stdout: &bytes.Buffer{}}, commands["ls"], newFlags(nil, commands["ls"]), []string{"gpt2"})
	if err != nil || h.client.Hub != "https://huggingface.co" || h.client.Repo != "gpt2" {
		t.Errorf("the default hub: %v %+v", err, h)
	}
}

// A hub nothing listens on is reported within seconds, naming the hub and
// xetkit serve, with the default retry budget (which, spent on a hub
// never reached, took 97-99 s).
func TestUnreachableHubFailsFast(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	hubURL := "http://" + ln.Addr().String()
	ln.Close()
	f := filepath.Join(t.TempDir(), "a.bin")
	os.WriteFile(f, randomBytes(1<<20, 1), 0o644)
	for _, args := range [][]string{
		{"download", "me/demo", "a.bin", "--hub", hubURL, "-o", filepath.Join(t.TempDir(), "a.bin")},
		{"upload", "me/demo", f, "--hub", hubURL, "--token", "t"},
		{"ls", "me/demo", "--hub", hubURL},
	} {
		start := time.Now()
		status, _, errOut := runCLI(t, nil, args...)
		took := time.Since(start)
		if status != 1 || took > 5*time.Second || !strings.Contains(errOut, "cannot reach "+hubURL+": connection refused") ||
			!strings.Contains(errOut, "xetkit serve") || strings.Count(errOut, hubURL) != 1 {
			t.Errorf("%s: status %d after %v, stderr %q", args[0], status, took, errOut)
		}
	}
}

// The forms of the hf CLI: the repository first, then what to upload or
// download; --repo-type, --commit-message, --local-dir; a repository named
// without a namespace is the token's user's ("local" on serve's hub).
func TestHFStyleForms(t *testing.T) {
	url := testHub(t)
	t.Setenv("HF_ENDPOINT", url)
	t.Setenv("HF_TOKEN", "tok")
	dir := t.TempDir()
	weights := randomBytes(300<<10, 2)
	writeFiles(t, dir, map[string][]byte{"demo/a.txt": []byte("a\n"), "demo/b.txt": []byte("b\n"), "demo/sub/w.bin": weights})
	status, out, errOut := runCLI(t, nil, "upload", "me/demo", filepath.Join(dir, "demo"), "--quiet")
	if status != 0 || !strings.Contains(out, " a.txt\n") || !strings.Contains(out, " sub/w.bin\n") || !strings.Contains(out, "/me/demo/commit/") {
		t.Fatalf("upload me/demo ./dir: %d %q %q", status, out, errOut)
	}
	// A file at a PATH_IN_REPO of its own, and into a folder.
	if status, out, errOut = runCLI(t, nil, "upload", "me/demo", filepath.Join(dir, "demo", "a.txt"), "sub/renamed.txt", "--commit-message", "renamed", "--quiet"); status != 0 || !strings.Contains(out, " sub/renamed.txt\n") {
		t.Fatalf("upload REPO FILE PATH_IN_REPO: %d %q %q", status, out, errOut)
	}
	if status, out, errOut = runCLI(t, nil, "upload", "me/demo", filepath.Join(dir, "demo", "b.txt"), "sub/", "--quiet"); status != 0 || !strings.Contains(out, " sub/b.txt\n") {
		t.Fatalf("upload REPO FILE FOLDER/: %d %q %q", status, out, errOut)
	}
	// LOCAL left out: the file or folder named as the repository.
	t.Chdir(dir)
	if status, out, errOut = runCLI(t, nil, "upload", "me/demo", "--quiet"); status != 0 || !strings.Contains(out, " sub/w.bin\n") {
		t.Fatalf("upload REPO (./demo): %d %q %q", status, out, errOut)
	}
	status, out, _ = runCLI(t, nil, "ls", "me/demo", "sub")
	var listed []string
	for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
		listed = append(listed, strings.Fields(l)[2])
	}
	if status != 0 || strings.Join(listed, " ") != "sub/b.txt sub/renamed.txt sub/w.bin" {
		t.Fatalf("ls me/demo sub: %d %q", status, out)
	}
	// Several files, into --local-dir and into the current folder.
	got := t.TempDir()
	status, out, errOut = runCLI(t, nil, "download", "me/demo", "a.txt", "sub/w.bin", "--local-dir", got, "--quiet")
	if status != 0 || out != filepath.Join(got, "a.txt")+"\n"+filepath.Join(got, "sub", "w.bin")+"\n" {
		t.Fatalf("download me/demo a.txt sub/w.bin --local-dir: %d %q %q", status, out, errOut)
	}
	for name, want := range map[string][]byte{"a.txt": []byte("a\n"), "sub/w.bin": weights} {
		if b, _ := os.ReadFile(filepath.Join(got, name)); !bytes.Equal(b, want) {
			t.Errorf("%s: %d bytes", name, len(b))
		}
	}
	// Without --local-dir: into the Hugging Face cache, each file's
	// snapshot link printed.
	t.Setenv("HF_HUB_CACHE", t.TempDir())
	status, out, errOut = runCLI(t, nil, "download", "me/demo", "a.txt", "b.txt", "--quiet")
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	snap := filepath.Join(os.Getenv("HF_HUB_CACHE"), "models--me--demo", "snapshots")
	if status != 0 || len(lines) != 2 || !strings.HasPrefix(lines[0], snap) || !strings.HasSuffix(lines[1], filepath.Join("", "b.txt")) {
		t.Fatalf("download into the cache: %d %q %q", status, out, errOut)
	}
	if b, _ := os.ReadFile(lines[1]); string(b) != "b\n" {
		t.Errorf("b.txt: %q", b)
	}
	if st, err := os.Lstat(lines[1]); err != nil || st.Mode()&os.ModeSymlink == 0 {
		t.Errorf("b.txt in the snapshot is not a link to its blob: %v", err)
	}
	// --repo-type, and an id with no namespace: the token's user's.
	if status, out, errOut = runCLI(t, nil, "upload", "demo3", filepath.Join(dir, "demo", "a.txt"), "--repo-type", "dataset", "--quiet"); status != 0 || !strings.Contains(out, "/datasets/local/demo3/commit/") {
		t.Fatalf("upload demo3 --repo-type dataset: %d %q %q", status, out, errOut)
	}
	for _, args := range [][]string{{"ls", "demo3", "--repo-type", "dataset"}, {"download", "demo3", "a.txt", "--type", "dataset", "-o", "-"}} {
		if status, out, errOut = runCLI(t, nil, args...); status != 0 || !strings.Contains(out, "a") {
			t.Errorf("%v: %d %q %q", args, status, out, errOut)
		}
	}
	t.Setenv("HF_TOKEN", "")
	if status, _, errOut := runCLI(t, nil, "ls", "demo3", "--repo-type", "dataset"); status != 1 || !strings.Contains(errOut, "the hub has no repository demo3, and with no token there is no user's namespace to look in") {
		t.Errorf("ls of an id without a namespace, with no token: %d %q", status, errOut)
	}
	t.Setenv("HF_TOKEN", "tok")
	// Usage mistakes say the form.
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"upload"}, "give the repository: xetkit upload REPO [LOCAL [PATH_IN_REPO]]"},
		{[]string{"upload", "me/nothing-here"}, "nothing-here is not a file or folder here: give LOCAL"},
		{[]string{"upload", "me/demo", "a", "b", "c"}, "pass --repo NAME FILE|DIR..."},
		{[]string{"download", "me/demo", "a.txt", "b.txt", "-o", "x"}, "use --local-dir DIR for several"},
		{[]string{"download", "me/demo", "sub/", "-o", "x"}, "names a folder"},
		{[]string{"download", "a/b/c", "x"}, "want NAMESPACE/NAME"},
		{[]string{"ls", "me/demo", "--repo-typ", "model"}, "did you mean --repo-type?"},
	} {
		if status, _, errOut := runCLI(t, nil, c.args...); status != 2 || !strings.Contains(errOut, c.want) {
			t.Errorf("%v: %d %q, want 2 and %q", c.args, status, errOut, c.want)
		}
	}
}

// An upload that changes nothing makes no commit and says so, in words and
// in --json; one that changes a file does.
func TestUnchangedUploadMakesNoCommit(t *testing.T) {
	h, srv := hubtest.Start(t, hub.Config{UserToken: "tok"})
	dir := t.TempDir()
	writeFiles(t, dir, map[string][]byte{"small.txt": []byte("text\n"), "w.bin": randomBytes(200<<10, 3)})
	up := func(extra ...string) (int, string, string) {
		return runCLI(t, nil, append([]string{"upload", "me/same", dir, "--hub", srv.URL, "--token", "tok"}, extra...)...)
	}
	if status, out, errOut := up(); status != 0 || !strings.Contains(out, "commit ") {
		t.Fatalf("first upload: %d %q %q", status, out, errOut)
	}
	head := func() string {
		status, out, errOut := runCLI(t, nil, "ls", "me/same", "--hub", srv.URL, "--json")
		if status != 0 {
			t.Fatalf("ls: %d %q", status, errOut)
		}
		return out
	}
	before, xorbs := head(), h.Stats().XorbBytesReceived
	status, out, errOut := up()
	if status != 0 || strings.Contains(out, "commit ") || !strings.Contains(errOut, "upload: no commit: every file is at its path on main already, with the same bytes") ||
		!strings.Contains(out, " small.txt\n") || !strings.Contains(out, " w.bin\n") {
		t.Fatalf("unchanged upload: %d %q %q", status, out, errOut)
	}
	status, out, _ = up("--json", "--quiet")
	var rep struct {
		Commit    *struct{ OID string }
		Unchanged bool
	}
	if status != 0 || json.Unmarshal([]byte(out), &rep) != nil || rep.Commit != nil || !rep.Unchanged {
		t.Fatalf("unchanged upload --json: %d %q", status, out)
	}
	if after := head(); after != before || h.Stats().XorbBytesReceived != xorbs {
		t.Fatalf("an unchanged upload changed the repository (%q, was %q) or sent xorb bytes (%d, was %d)", after, before, h.Stats().XorbBytesReceived, xorbs)
	}
	writeFiles(t, dir, map[string][]byte{"small.txt": []byte("text, changed\n")})
	if status, out, errOut := up("--quiet"); status != 0 || !strings.Contains(out, "commit ") {
		t.Fatalf("a changed file: %d %q %q", status, out, errOut)
	}
}

// --revision of a branch that does not exist makes it from the default
// branch before any xorb is sent, says so, and the commit lands there.
func TestUploadRevisionCreatesTheBranchFirst(t *testing.T) {
	h := hubtest.New(t, hub.Config{UserToken: "tok"})
	var mu sync.Mutex
	var log []string // each request, with the xorb bytes the hub had received when it came
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		log = append(log, fmt.Sprintf("%s %s %d", r.Method, r.URL.Path, h.Stats().XorbBytesReceived))
		mu.Unlock()
		h.ServeHTTP(w, r)
	}))
	defer srv.Close()
	dir := t.TempDir()
	writeFiles(t, dir, map[string][]byte{"base.txt": []byte("on main\n"), "new/w.bin": randomBytes(400<<10, 4)})
	hubArgs := []string{"--hub", srv.URL, "--token", "tok"}
	if status, _, errOut := runCLI(t, nil, append([]string{"upload", "me/branchy", filepath.Join(dir, "base.txt"), "--quiet"}, hubArgs...)...); status != 0 {
		t.Fatalf("upload to main: %d %q", status, errOut)
	}
	mu.Lock()
	log = nil
	mu.Unlock()
	status, out, errOut := runCLI(t, nil, append([]string{"upload", "me/branchy", filepath.Join(dir, "new"), "new", "--revision", "new-branch"}, hubArgs...)...)
	if status != 0 || !strings.Contains(errOut, "upload: created the branch new-branch from the default branch") || !strings.Contains(out, "commit ") {
		t.Fatalf("upload --revision new-branch: %d %q %q", status, out, errOut)
	}
	mu.Lock()
	branchAt, firstXorb := -1, -1
	for i, l := range log {
		f := strings.Fields(l)
		if f[0]+" "+f[1] == "POST /api/models/me/branchy/branch/new-branch" && branchAt < 0 {
			branchAt = i
			if f[2] != "0" {
				t.Errorf("the branch was made once the hub had %s bytes of xorbs", f[2])
			}
		}
		if strings.Contains(f[1], "/xorbs/") && firstXorb < 0 {
			firstXorb = i
		}
	}
	mu.Unlock()
	if branchAt < 0 || firstXorb < 0 || branchAt > firstXorb || h.Stats().XorbBytesReceived == 0 {
		t.Fatalf("branch made at request %d, first xorb at %d: %q", branchAt, firstXorb, log)
	}
	// The branch holds main's file and the new ones (the big one with the
	// .gitattributes line the hub adds for it); main is as it was.
	for rev, want := range map[string]string{"new-branch": ".gitattributes base.txt new/w.bin", "main": "base.txt"} {
		status, out, _ := runCLI(t, nil, append([]string{"ls", "me/branchy", "--revision", rev}, hubArgs...)...)
		var got []string
		for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
			got = append(got, strings.Fields(l)[2])
		}
		if status != 0 || strings.Join(got, " ") != want {
			t.Errorf("ls --revision %s: %d %q", rev, status, out)
		}
	}
}

// -o onto an existing file replaces it once the new one is verified and
// says so; onto a folder it writes into it; under missing folders it makes
// them. Files get 0666 less the umask; nothing else is left, and a failed
// download leaves the old file as it was.
func TestDownloadOutputs(t *testing.T) {
	old := syscall.Umask(0o022)
	defer syscall.Umask(old)
	url := testHub(t)
	dir := t.TempDir()
	data := randomBytes(256<<10, 5)
	writeFiles(t, dir, map[string][]byte{"w.bin": data})
	hubArgs := []string{"--hub", url, "--token", "tok", "--quiet"}
	if status, _, errOut := runCLI(t, nil, append([]string{"upload", "me/out", filepath.Join(dir, "w.bin")}, hubArgs...)...); status != 0 {
		t.Fatal(errOut)
	}
	dl := func(extra ...string) (int, string, string) {
		return runCLI(t, nil, append(append([]string{"download", "me/out"}, extra...), hubArgs...)...)
	}
	outDir := t.TempDir()
	existing := filepath.Join(outDir, "existing.bin")
	os.WriteFile(existing, []byte("old"), 0o600)
	folder := filepath.Join(outDir, "folder")
	os.Mkdir(folder, 0o755)
	for _, c := range []struct {
		name, o, want, replaced string
	}{
		{"onto an existing file", existing, existing, "download: replaced " + existing + ", which was there, with the file verified\n"},
		{"onto a folder", folder, filepath.Join(folder, "w.bin"), ""},
		{"onto a folder/ not there", filepath.Join(outDir, "made") + "/", filepath.Join(outDir, "made", "w.bin"), ""},
		{"under missing folders", filepath.Join(outDir, "x", "y", "z.bin"), filepath.Join(outDir, "x", "y", "z.bin"), ""},
	} {
		status, out, errOut := dl("w.bin", "-o", c.o)
		if status != 0 || out != c.want+"\n" || errOut != c.replaced {
			t.Errorf("%s: %d %q %q", c.name, status, out, errOut)
			continue
		}
		b, _ := os.ReadFile(c.want)
		st, _ := os.Stat(c.want)
		if !bytes.Equal(b, data) || st.Mode().Perm() != 0o644 {
			t.Errorf("%s: %d bytes, mode %v (want 0644 under umask 022)", c.name, len(b), st.Mode().Perm())
		}
	}
	// A download that fails leaves the file there as it was.
	os.WriteFile(existing, []byte("old"), 0o600)
	status, _, errOut := dl("missing.bin", "-o", existing)
	if b, _ := os.ReadFile(existing); status != 1 || string(b) != "old" || !strings.Contains(errOut, "not found") {
		t.Errorf("a failed download onto a file: %d %q, the file now %q", status, errOut, b)
	}
	// A file in the way of a folder is said without a temporary name.
	status, _, errOut = dl("w.bin", "-o", filepath.Join(existing, "under.bin"))
	if status != 1 || strings.Contains(errOut, ".part-") || !strings.Contains(errOut, filepath.Join(existing, "under.bin")) {
		t.Errorf("-o under a file: %d %q", status, errOut)
	}
	filepath.WalkDir(outDir, func(p string, d fs.DirEntry, err error) error {
		if strings.Contains(d.Name(), ".part-") {
			t.Errorf("left behind: %s", p)
		}
		return nil
	})
}

// The mistakes of the first hour, each with the words that say the fix.
func TestErrorsSayTheFix(t *testing.T) {
	url := testHub(t)
	dir := t.TempDir()
	writeFiles(t, dir, map[string][]byte{"weights.bin": randomBytes(100<<10, 6), "notes.txt": []byte("n\n")})
	if status, _, errOut := runCLI(t, nil, "upload", "me/errs", dir, "--hub", url, "--token", "tok", "--quiet"); status != 0 {
		t.Fatal(errOut)
	}
	// ls of a file prints its row; of nothing, says so.
	status, out, _ := runCLI(t, nil, "ls", "me/errs", "weights.bin", "--hub", url)
	if f := strings.Fields(out); status != 0 || len(f) != 3 || f[0] != "102400" || len(f[1]) != 64 || f[2] != "weights.bin" {
		t.Errorf("ls of a file: %d %q", status, out)
	}
	if status, out, _ := runCLI(t, nil, "ls", "me/errs", "notes.txt", "--hub", url); status != 0 || strings.Join(strings.Fields(out), " ") != "2 - notes.txt" {
		t.Errorf("ls of a small file: %d %q", status, out)
	}
	if status, _, errOut := runCLI(t, nil, "ls", "me/errs", "nope", "--hub", url); status != 1 || !strings.Contains(errOut, "nothing at nope on main") {
		t.Errorf("ls of nothing: %d %q", status, errOut)
	}
	// A write without a token, and with a wrong one.
	f := filepath.Join(dir, "notes.txt")
	if status, _, errOut := runCLI(t, nil, "upload", "me/errs", f, "--hub", url); status != 1 || !strings.Contains(errOut, "401") ||
		!strings.Contains(errOut, "no token was given: pass --token hf_…, or set HF_TOKEN") {
		t.Errorf("upload without a token: %d %q", status, errOut)
	}
	if status, _, errOut := runCLI(t, nil, "upload", "me/errs", f, "--hub", url, "--token", "wrong"); status != 1 ||
		!strings.Contains(errOut, "the hub does not accept the token from --token") {
		t.Errorf("upload with a wrong token: %d %q", status, errOut)
	}
}

// An upload the network gives up on says that running it again resumes it.
func TestUploadGivenUpSaysItResumes(t *testing.T) {
	faults, err := hub.ParseFaults("loop:drop@/v1/xorbs/")
	if err != nil {
		t.Fatal(err)
	}
	_, srv := hubtest.Start(t, hub.Config{UserToken: "tok", Faults: faults})
	f := filepath.Join(t.TempDir(), "w.bin")
	os.WriteFile(f, randomBytes(300<<10, 8), 0o644)
	status, _, errOut := runCLI(t, nil, "upload", "me/dropped", f, "--hub", srv.URL, "--token", "tok", "--retries", "1", "--retry-delay", "1ms", "--quiet")
	if status != 1 || !strings.Contains(errOut, "giving up after 2 attempts") || !strings.HasSuffix(errOut, ": run the same command again to resume: what the hub has stored is not sent again\n") {
		t.Errorf("%d %q", status, errOut)
	}
	status, _, errOut = runCLI(t, nil, "upload", "me/dropped", f, "--hub", srv.URL, "--token", "tok", "--retries", "1", "--retry-delay", "1ms", "--quiet", "--no-resume")
	if status != 1 || strings.Contains(errOut, "resume") {
		t.Errorf("--no-resume: %d %q", status, errOut)
	}
}

func TestMeterShowsRetries(t *testing.T) {
	var buf bytes.Buffer
	m := &meter{w: &buf, tty: true, label: "download w.bin", start: time.Now(), total: 100}
	m.set(10, 100)
	m.retry(casRetry("fetch xorb "+strings.Repeat("ab", 32), 2, 8, 3*time.Second))
	line := buf.String()[strings.LastIndex(buf.String(), "\r"):]
	for _, want := range []string{"download w.bin", "10%", "retrying fetch xorb abababab…: connection reset by peer; attempt 2 of 8 in 3s"} {
		if !strings.Contains(line, want) {
			t.Errorf("the line %q lacks %q", line, want)
		}
	}
	// Elsewhere each retry is a line.
	buf.Reset()
	m = &meter{w: &buf, label: "upload", start: time.Now(), total: -1}
	m.retry(casRetry("upload shard", 3, 8, time.Second))
	if buf.String() != "upload: upload shard: connection reset by peer; attempt 3 of 8 in 1s\n" {
		t.Errorf("plain: %q", buf.String())
	}
}

func casRetry(op string, attempt, of int, wait time.Duration) cas.Retry {
	return cas.Retry{Op: op, Err: &cas.NetworkError{Op: op, Method: "GET", URL: "http://h/x", Err: syscall.ECONNRESET}, Attempt: attempt, Of: of, Wait: wait}
}

// A line of its own (line) clears the live line on a terminal first, and
// the live line comes back at the next update, with its note (the files
// done) after the rate.
func TestMeterLineAndNote(t *testing.T) {
	var buf bytes.Buffer
	m := &meter{w: &buf, tty: true, label: "download 3 files", start: time.Now(), total: 100}
	m.note("1/3 files")
	m.set(10, 100)
	m.line("download: a.bin: waiting for another download of it to end")
	if got := buf.String(); !strings.HasSuffix(got, "\r\x1b[Kdownload: a.bin: waiting for another download of it to end\n") || m.drawn {
		t.Fatalf("after line: %q (drawn %v)", got, m.drawn)
	}
	m.last = time.Time{} // due now
	m.set(20, 100)
	if tail := buf.String()[strings.LastIndex(buf.String(), "\r"):]; !strings.Contains(tail, "20%") || !strings.HasSuffix(tail, "1/3 files") {
		t.Errorf("the live line after it: %q", tail)
	}
	m.finish()
	if !strings.HasSuffix(buf.String(), "\r\x1b[K") || m.drawn {
		t.Errorf("finish left %q", buf.String()[strings.LastIndex(buf.String(), "\r"):])
	}
}
