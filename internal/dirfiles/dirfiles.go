// Package dirfiles lists the regular files under a folder by their
// slash-separated paths inside it: the one walk behind the folder store's
// listings and the command's folder uploads.
package dirfiles

import (
	"io/fs"
	"path/filepath"
)

// Walk calls fn, in lexical order, for each regular file under root with
// its path, its slash-separated path relative to root, and its FileInfo.
// Links, devices and the like are passed over, and so is every entry
// (root included) for which skip reports true: a folder with all it
// holds. The first error of the walk or of fn ends it and is returned.
func Walk(root string, skip func(path string, d fs.DirEntry) bool, fn func(path, rel string, info fs.FileInfo) error) error {
	return filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if skip(p, d) {
			if d.IsDir() {
				return fs.SkipDir
			}
			return nil
		}
		if !d.Type().IsRegular() {
			return nil
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(root, p)
		if err != nil {
			return err
		}
		return fn(p, filepath.ToSlash(rel), info)
	})
}
