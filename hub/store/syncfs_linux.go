package store

import (
	"os"

	"golang.org/x/sys/unix"
)

// syncFS makes everything written to the file system holding dir durable,
// in one call.
func syncFS(dir string) error {
	f, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer f.Close()
	return unix.Syncfs(int(f.Fd()))
}
