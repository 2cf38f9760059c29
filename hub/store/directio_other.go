//go:build !linux

package store

import "os"

// writeParts writes parts to f one after another.
func writeParts(f *os.File, parts [][]byte) error {
	for _, p := range parts {
		if _, err := f.Write(p); err != nil {
			return err
		}
	}
	return nil
}
