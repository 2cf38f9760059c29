//go:build !linux

package store

import "errors"

// syncFS is not available here: callers sync file by file.
func syncFS(string) error { return errors.New("no syncfs on this system") }
