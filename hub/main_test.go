package hub_test

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/xetkit/xetkit/hub"
	"github.com/xetkit/xetkit/hub/s3store"
	"github.com/xetkit/xetkit/hub/s3store/s3test"
	"github.com/xetkit/xetkit/hub/store"
)

// How the suite runs: on each store in turn (TestMain), the tests that
// pick their own stores once, and the test binary as a hub process.

// memStoreEnv set runs the tests with their hubs on the store in memory
// (newHub): TestMain runs every test on both stores, the filesystem's
// first, then the same binary again with it set.
const memStoreEnv = "XETKIT_TEST_HUB_MEMSTORE"

// memStores is whether this run puts newHub's hubs in memory.
var memStores = os.Getenv(memStoreEnv) != ""

// s3StoreEnv, set to "ENDPOINT ACCESS SECRET", runs the tests with their
// hubs on S3 (a new bucket each): TestMain's third run, on a versitygw it
// starts.
const s3StoreEnv = "XETKIT_TEST_HUB_S3"

// s3Server is the S3 server of this run's hubs, or nil.
var s3Server = func() *s3test.Server {
	f := strings.Fields(os.Getenv(s3StoreEnv))
	if len(f) != 3 {
		return nil
	}
	return &s3test.Server{Endpoint: f[0], AccessKey: f[1], SecretKey: f[2], Region: "us-east-1"}
}()

// TestMain runs the tests on the filesystem store, then on the store in
// memory (tests that name a Dir keep the filesystem), then on S3. It
// doubles as a hub process for the crash test: with hubStoreEnv set, the
// test binary serves a hub on that store and prints its address.
func TestMain(m *testing.M) {
	if where := os.Getenv(hubStoreEnv); where != "" {
		serveHub(where)
		return
	}
	code := m.Run()
	if code == 0 && !memStores && s3Server == nil && !fuzzingOrBenching() {
		cmd := exec.Command(os.Args[0], os.Args[1:]...)
		cmd.Env = append(os.Environ(), memStoreEnv+"=1")
		cmd.Stdout, cmd.Stderr = os.Stdout, os.Stderr
		if err := cmd.Run(); err != nil {
			fmt.Fprintf(os.Stderr, "the hub tests on the store in memory failed: %v\n", err)
			code = 1
		}
		if code == 0 {
			code = runOnS3()
		}
	}
	os.Exit(code)
}

// runOnS3 runs the tests once more with their hubs on S3, on a versitygw
// started for the run, and returns the exit code. Without versitygw the
// run is skipped with a message (and fails under CI).
func runOnS3() int {
	bin, why := s3test.Binary()
	if bin == "" {
		fmt.Fprintf(os.Stderr, "the hub tests on S3 were not run: %s\n", why)
		if os.Getenv("CI") == "true" {
			return 1
		}
		return 0
	}
	dir, err := os.MkdirTemp("", "xetkit-hub-s3-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(dir)
	srv, stop, err := s3test.StartIn(bin, dir)
	if err != nil {
		fmt.Fprintf(os.Stderr, "the hub tests on S3: starting versitygw: %v\n", err)
		return 1
	}
	defer stop()
	cmd := exec.Command(os.Args[0], os.Args[1:]...)
	cmd.Env = append(os.Environ(), s3StoreEnv+"="+srv.Endpoint+" "+srv.AccessKey+" "+srv.SecretKey)
	cmd.Stdout, cmd.Stderr = os.Stdout, os.Stderr
	if err := cmd.Run(); err != nil {
		fmt.Fprintf(os.Stderr, "the hub tests on S3 failed: %v\n", err)
		return 1
	}
	return 0
}

// fuzzingOrBenching reports whether this run fuzzes or benchmarks, which
// the store in memory does not repeat.
func fuzzingOrBenching() bool {
	for _, a := range os.Args[1:] {
		if strings.HasPrefix(a, "-test.fuzz=") || strings.HasPrefix(a, "-test.bench=") {
			return true
		}
	}
	return false
}

// hubStoreEnv names the store a hub process serves (see TestMain): a
// folder, or an s3:// URI on this run's S3 server.
const hubStoreEnv = "XETKIT_TEST_HUB_STORE"

// serveHub serves a hub on the store at where until stdin closes, having
// printed its address: the body of a hub process.
func serveHub(where string) {
	fail := func(err error) {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	cfg := hub.Config{Dir: where, UserToken: userToken}
	if strings.HasPrefix(where, "s3://") {
		if s3Server == nil {
			fail(fmt.Errorf("a hub process on %s needs %s", where, s3StoreEnv))
		}
		st, err := s3store.Open(context.Background(), where, s3store.Options{Client: s3Server.Client()})
		if err != nil {
			fail(err)
		}
		cfg.Store = st
	}
	h, err := hub.New(cfg)
	if err != nil {
		fail(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		fail(err)
	}
	fmt.Println(ln.Addr())
	go func() { // stop with the parent
		io.Copy(io.Discard, os.Stdin)
		os.Exit(0)
	}()
	http.Serve(ln, h)
}

// hubProcess starts this test binary as a hub on the store at where, a
// folder or an s3:// URI (see serveHub), and returns it and its base URL.
// It stops when the test ends, or when killed.
func hubProcess(t *testing.T, where string) (*exec.Cmd, string) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), hubStoreEnv+"="+where)
	stdin, _ := cmd.StdinPipe()
	out, _ := cmd.StdoutPipe()
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { stdin.Close(); cmd.Wait() })
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		t.Fatalf("the hub process did not start: %v", err)
	}
	return cmd, "http://" + strings.TrimSpace(line)
}

// ownStores skips a test that picks its own stores in the runs that
// repeat the suite on other stores (memory, S3): it ran in the first.
func ownStores(t *testing.T) {
	if memStores || s3Server != nil {
		t.Skip("picks its own stores: run once, in the first run")
	}
}

// bothStores runs test on the folder store and on S3 (versitygw), where
// newStore makes a new, empty store of that kind. Such a test picks its
// own stores, so it runs only in the suite's first run (ownStores).
func bothStores(t *testing.T, test func(t *testing.T, newStore func(*testing.T) store.Collectable)) {
	ownStores(t)
	t.Run("folder", func(t *testing.T) {
		test(t, func(t *testing.T) store.Collectable {
			st, err := store.OpenFS(t.TempDir())
			if err != nil {
				t.Fatal(err)
			}
			return st.(store.Collectable)
		})
	})
	t.Run("S3", func(t *testing.T) {
		srv := s3test.Start(t)
		test(t, func(t *testing.T) store.Collectable {
			return srv.Store(t, "s3://"+srv.NewBucket(t)+"/hub")
		})
	})
}
