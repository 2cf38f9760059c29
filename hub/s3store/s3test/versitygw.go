package s3test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/s3"
)

// Finding, starting and stopping the versitygw process.

// Binary returns the path of the versitygw binary, or "" with the reason.
func Binary() (string, string) {
	if p := os.Getenv("VERSITYGW"); p != "" {
		if _, err := os.Stat(p); err != nil {
			return "", fmt.Sprintf("$VERSITYGW: %v", err)
		}
		return p, ""
	}
	dir, err := os.Getwd()
	if err != nil {
		return "", err.Error()
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			p := filepath.Join(dir, ".cache", "bin", "versitygw")
			if _, err := os.Stat(p); err != nil {
				return "", "versitygw is not installed at " + p + " (bash scripts/test.sh installs it, or set $VERSITYGW)"
			}
			return p, ""
		}
		up := filepath.Dir(dir)
		if up == dir {
			return "", "no go.mod above the test's folder"
		}
		dir = up
	}
}

// StartIn starts versitygw (the binary bin) over folder dir, which must
// exist, for a test process rather than one test; stop kills it.
func StartIn(bin, dir string) (srv *Server, stop func(), err error) {
	srv = &Server{AccessKey: "xetkit-test", SecretKey: randomHex(16), Region: "us-east-1"}
	for try := 0; try < 3; try++ {
		if stop, err = srv.start(bin, dir); err == nil {
			return srv, stop, nil
		}
	}
	return nil, nil, err
}

// start starts the server once on a port just found free.
func (srv *Server) start(bin, dir string) (func(), error) {
	addr, err := freePort()
	if err != nil {
		return nil, err
	}
	root, err := os.MkdirTemp(dir, "versitygw-")
	if err != nil {
		return nil, err
	}
	logf, err := os.Create(filepath.Join(root, "versitygw.log"))
	if err != nil {
		return nil, err
	}
	defer logf.Close()
	data := filepath.Join(root, "data")
	if err := os.Mkdir(data, 0o755); err != nil {
		return nil, err
	}
	cmd := exec.Command(bin, "--port", addr, "--access", srv.AccessKey, "--secret", srv.SecretKey,
		"--region", srv.Region, "--quiet", "posix", data)
	cmd.Stdout, cmd.Stderr = logf, logf
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	exited := make(chan struct{})
	go func() { cmd.Wait(); close(exited) }()
	stop := func() {
		cmd.Process.Kill()
		<-exited
	}
	srv.Endpoint = "http://" + addr
	c := srv.Client()
	deadline := time.Now().Add(15 * time.Second)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		_, err = c.ListBuckets(ctx, &s3.ListBucketsInput{})
		cancel()
		if err == nil {
			return stop, nil
		}
		select {
		case <-exited: // it will not answer: give up at once
		case <-time.After(50 * time.Millisecond):
			if time.Now().Before(deadline) {
				continue
			}
		}
		stop()
		log, _ := os.ReadFile(logf.Name())
		return nil, fmt.Errorf("versitygw on %s did not answer: %v\n%s", addr, err, strings.TrimSpace(string(log)))
	}
}

// freePort returns a loopback address with a port free a moment ago.
func freePort() (string, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer ln.Close()
	return ln.Addr().String(), nil
}

func randomHex(n int) string {
	b := make([]byte, n)
	rand.Read(b)
	return hex.EncodeToString(b)
}
