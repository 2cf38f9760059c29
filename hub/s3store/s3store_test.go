package s3store_test

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"

	"github.com/xetkit/xetkit/hub/s3store"
	"github.com/xetkit/xetkit/hub/s3store/s3test"
	"github.com/xetkit/xetkit/hub/store"
)

func TestParseURL(t *testing.T) {
	for _, c := range []struct{ in, bucket, prefix, err string }{
		{"s3://b", "b", "", ""},
		{"s3://b/", "b", "", ""},
		{"s3://b/team/hub/", "b", "team/hub/", ""},
		{"s3://b/team", "b", "team/", ""},
		{"b/team", "", "", "want s3://"},
		{"s3:///team", "", "", "no bucket"},
		{"s3://b/a//c", "", "", "empty"},
		{"s3://b/a/../c", "", "", ".."},
	} {
		b, p, err := s3store.ParseURL(c.in)
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("ParseURL(%q): %v, want an error saying %q", c.in, err, c.err)
			}
			continue
		}
		if err != nil || b != c.bucket || p != c.prefix {
			t.Errorf("ParseURL(%q) = %q, %q, %v; want %q, %q", c.in, b, p, err, c.bucket, c.prefix)
		}
	}
}

// TestKeys: every name is one key segment under its kind, so no key is a
// folder of another and no name reaches outside its kind.
func TestKeys(t *testing.T) {
	srv := s3test.Start(t)
	s := srv.Store(t, "s3://"+srv.NewBucket(t)+"/p")
	for name, key := range map[string]string{
		"models/ns/name": "p/repos/models%2Fns%2Fname",
		"..":             "p/repos/%2E.",
		".hidden":        "p/repos/%2Ehidden",
		"a b%c":          "p/repos/a%20b%25c",
		"Ab.c-d_e":       "p/repos/Ab.c-d_e",
	} {
		if got := s.Key("repos", name); got != key {
			t.Errorf("Key(repos, %q) = %q, want %q", name, got, key)
		}
	}
	if w := s.Where("xorbs", "x/y"); w != "s3://"+s.Bucket()+"/p/xorbs/x%2Fy" {
		t.Errorf("Where = %q", w)
	}
	// A record and one "below" it both exist (on a posix backend a folder
	// and a file of one name cannot), and list back under their names.
	for _, name := range []string{"models/a", "models/a/b", "models", "..", "a b%c"} {
		if err := s.Swap("repos", name, nil, []byte(name)); err != nil {
			t.Fatalf("create %q: %v", name, err)
		}
	}
	names, err := s.List("repos")
	if err != nil || fmt.Sprint(names) != "[.. a b%c models models/a models/a/b]" {
		t.Fatalf("List = %q, %v", names, err)
	}
	if _, err := s.Put("..", "x"); err == nil {
		t.Error("a put of kind \"..\" was accepted")
	}
	if _, err := s.Put("tmp", "x"); err == nil {
		t.Error("a put of kind tmp (the temporary objects') was accepted")
	}
}

// TestReplicas: stores of separate clients on one bucket, as separate
// processes have, see each other's writes at once, and of their
// concurrent swaps from one state exactly one wins, whatever each one
// last read.
func TestReplicas(t *testing.T) {
	srv := s3test.Start(t)
	uri := "s3://" + srv.NewBucket(t) + "/hub"
	const n = 6
	stores := make([]*s3store.Store, n)
	for i := range stores {
		stores[i] = srv.Store(t, uri)
	}
	if err := stores[0].Swap("repos", "r", nil, []byte("v0")); err != nil {
		t.Fatal(err)
	}
	cur := []byte("v0")
	for round := 1; round <= 5; round++ {
		var wg sync.WaitGroup
		errs := make([]error, n)
		for i, s := range stores {
			wg.Go(func() { errs[i] = s.Swap("repos", "r", cur, []byte(fmt.Sprintf("v%d by %d", round, i))) })
		}
		wg.Wait()
		winner := -1
		for i, err := range errs {
			if err == nil {
				if winner >= 0 {
					t.Fatalf("round %d: stores %d and %d both won", round, winner, i)
				}
				winner = i
			} else if !errors.Is(err, store.ErrSwapped) {
				t.Fatal(err)
			}
		}
		if winner < 0 {
			t.Fatalf("round %d: no store won", round)
		}
		cur = []byte(fmt.Sprintf("v%d by %d", round, winner))
		// Every store reads the winner's record at once, and a loser's
		// stale memory of the record does not let its next swap through.
		for i, s := range stores {
			o, err := s.Open("repos", "r")
			if err != nil {
				t.Fatal(err)
			}
			b := make([]byte, o.Size())
			o.ReadAt(b, 0)
			if string(b) != string(cur) {
				t.Fatalf("round %d: store %d reads %q, want %q", round, i, b, cur)
			}
		}
	}
	// A store that remembers an old version swaps from it in vain.
	stale := stores[1]
	if err := stores[2].Swap("repos", "r", cur, []byte("newer")); err != nil {
		t.Fatal(err)
	}
	if err := stale.Swap("repos", "r", cur, []byte("lost")); !errors.Is(err, store.ErrSwapped) {
		t.Fatalf("swap from a remembered but replaced record: %v, want ErrSwapped", err)
	}
	// Objects: of concurrent puts of one name through the stores, one writes.
	var wg sync.WaitGroup
	wrote := make([]bool, n)
	for i, s := range stores {
		wg.Go(func() {
			var err error
			if wrote[i], err = s.Put("xorbs", "x", []byte(fmt.Sprint(i))); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	count := 0
	for _, w := range wrote {
		if w {
			count++
		}
	}
	if count != 1 {
		t.Fatalf("%d of %d concurrent puts report they wrote", count, n)
	}
}

// TestEnv opens a store from the standard AWS environment variables.
func TestEnv(t *testing.T) {
	srv := s3test.Start(t)
	bucket := srv.NewBucket(t)
	srv.Env(t)
	s, err := s3store.Open(context.Background(), "s3://"+bucket+"/env", s3store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if wrote, err := s.Put("xorbs", "a", []byte("x")); err != nil || !wrote {
		t.Fatalf("put through the environment's client: %v, %v", wrote, err)
	}
	_, err = s3store.Open(context.Background(), "s3://no-such-bucket-here/x", s3store.Options{})
	if err == nil || !strings.Contains(err.Error(), "no-such-bucket-here") {
		t.Fatalf("opening a missing bucket: %v, want an error naming it", err)
	}
}

// resettingS3 is an S3 server that answers HEAD (200 for the bucket, and
// for an object when exists) and breaks the connection under every PUT,
// as versitygw does when it refuses a put on an existing key before
// reading the body.
func resettingS3(t *testing.T, exists bool) aws.Config {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				br := bufio.NewReader(c)
				for {
					req, err := http.ReadRequest(br)
					if err != nil {
						return
					}
					if req.Method == http.MethodPut {
						c.(*net.TCPConn).SetLinger(0) // close with a reset
						return
					}
					code := "200 OK"
					if strings.Count(req.URL.Path, "/") > 1 && !exists {
						code = "404 Not Found"
					}
					fmt.Fprintf(c, "HTTP/1.1 %s\r\nContent-Length: 0\r\n\r\n", code)
				}
			}()
		}
	}()
	return aws.Config{
		Region:           "us-east-1",
		BaseEndpoint:     aws.String("http://" + ln.Addr().String()),
		Credentials:      credentials.NewStaticCredentialsProvider("k", "s", ""),
		RetryMaxAttempts: 1,
	}
}

// TestPutWithoutAnswer: a put whose connection breaks is settled by
// whether the object is there: written by another (false, no error), or
// not (the error, naming the object).
func TestPutWithoutAnswer(t *testing.T) {
	for _, exists := range []bool{true, false} {
		s, err := s3store.Open(context.Background(), "s3://b/p", s3store.Options{Client: s3store.NewClient(resettingS3(t, exists))})
		if err != nil {
			t.Fatal(err)
		}
		wrote, err := s.Put("xorbs", "aa", make([]byte, 1<<20))
		switch {
		case exists && (wrote || err != nil):
			t.Errorf("put on an existing object whose answer was lost: wrote %v, %v; want false, nil", wrote, err)
		case !exists && (err == nil || !strings.Contains(err.Error(), "s3://b/p/xorbs/aa")):
			t.Errorf("put of a missing object whose answer was lost: wrote %v, %v; want an error naming s3://b/p/xorbs/aa", wrote, err)
		}
	}
}
