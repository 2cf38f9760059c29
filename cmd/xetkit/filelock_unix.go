//go:build unix

package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
	"time"
)

// lockFile takes the exclusive lock (flock) of the file at path, made if
// it is not there, as huggingface_hub's filelock takes the same file: two
// downloads of one blob, by xetkit or by huggingface_hub, then write its
// partial file one after the other, never together. It waits while
// another holds it (waiting is called once, when it first has to) until
// ctx ends; unlock releases it.
func lockFile(ctx context.Context, path string, waiting func()) (unlock func(), err error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o777); err != nil {
		return nil, fmt.Errorf("making the folder for the lock %s: %w", path, pathless(err))
	}
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o664)
	if err != nil {
		return nil, fmt.Errorf("opening the lock %s: %w", path, pathless(err))
	}
	for told := false; ; {
		err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		if err == nil {
			return func() {
				syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
				f.Close()
			}, nil
		}
		if !errors.Is(err, syscall.EWOULDBLOCK) && !errors.Is(err, syscall.EINTR) {
			f.Close()
			if errors.Is(err, syscall.ENOTSUP) || errors.Is(err, syscall.ENOSYS) {
				return func() {}, nil // a file system without locks: as huggingface_hub, go on
			}
			return nil, fmt.Errorf("locking %s: %w", path, err)
		}
		if !told && waiting != nil {
			waiting()
			told = true
		}
		select {
		case <-ctx.Done():
			f.Close()
			return nil, context.Cause(ctx)
		case <-time.After(50 * time.Millisecond):
		}
	}
}
