package resume

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
	"time"
)

// Dir is a Backend in a folder: one subfolder per scope, one file per
// record. A record is written to a temporary file in the folder's .tmp,
// synced, renamed into its scope's folder and that folder synced, so a
// crash leaves in a scope's folder the whole record or none; a temporary
// file a crash left behind is deleted by a later List once it is an hour
// old.
type Dir struct {
	Root string
}

// DefaultDir is the folder uploads keep their state in: $XETKIT_CACHE/uploads
// when XETKIT_CACHE is set, else the user's cache folder's xetkit/uploads
// ($XDG_CACHE_HOME/xetkit/uploads, or ~/.cache/xetkit/uploads, on Linux).
func DefaultDir() (string, error) {
	if d := os.Getenv("XETKIT_CACHE"); d != "" {
		return filepath.Join(d, "uploads"), nil
	}
	d, err := os.UserCacheDir()
	if err != nil {
		return "", fmt.Errorf("no folder to keep upload state in (set XETKIT_CACHE): %w", err)
	}
	return filepath.Join(d, "xetkit", "uploads"), nil
}

// staleTemp is how old a temporary file must be before List deletes it:
// a younger one may be a write still under way in another process.
const staleTemp = time.Hour

// tempDir holds the records being written.
const tempDir = ".tmp"

// List returns the records in the folder; a missing folder holds none.
func (d Dir) List() ([]Entry, error) {
	scopes, err := os.ReadDir(d.Root)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	d.removeStaleTemps()
	var out []Entry
	for _, s := range scopes {
		if !s.IsDir() || checkName(s.Name()) != nil {
			continue
		}
		files, err := os.ReadDir(filepath.Join(d.Root, s.Name()))
		if err != nil {
			continue // removed meanwhile, or unreadable: nothing to resume from
		}
		for _, f := range files {
			info, err := f.Info()
			if err != nil || !info.Mode().IsRegular() || checkName(f.Name()) != nil {
				continue
			}
			out = append(out, Entry{Scope: s.Name(), Name: f.Name(), Size: info.Size()})
		}
	}
	return out, nil
}

// removeStaleTemps deletes the temporary files of writes that a crash cut
// short. A younger one may be a write under way in another process.
func (d Dir) removeStaleTemps() {
	dir := filepath.Join(d.Root, tempDir)
	files, _ := os.ReadDir(dir)
	for _, f := range files {
		if info, err := f.Info(); err == nil && time.Since(info.ModTime()) > staleTemp {
			os.Remove(filepath.Join(dir, f.Name()))
		}
	}
}

// Read returns a record's bytes.
func (d Dir) Read(scope, name string) ([]byte, error) {
	p, err := d.path(scope, name)
	if err != nil {
		return nil, err
	}
	b, err := os.ReadFile(p)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, ErrNotFound
	}
	return b, err
}

// Write stores a record durably.
func (d Dir) Write(scope, name string, data []byte) error {
	p, err := d.path(scope, name)
	if err != nil {
		return err
	}
	tmps := filepath.Join(d.Root, tempDir)
	if err := os.MkdirAll(tmps, 0o700); err != nil {
		return err
	}
	f, err := os.CreateTemp(tmps, name+"-*")
	if err != nil {
		return err
	}
	tmp := f.Name()
	_, err = f.Write(data)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	dir := filepath.Dir(p)
	if err == nil {
		err = moveInto(tmp, dir, p)
	}
	if err != nil {
		os.Remove(tmp)
		return err
	}
	return syncDir(dir)
}

// moveInto renames tmp to p, making p's folder dir first. A Remove of the
// scope's last record may take the folder away between the two: then
// once more.
func moveInto(tmp, dir, p string) error {
	for try := 0; ; try++ {
		err := os.MkdirAll(dir, 0o700)
		if err == nil {
			err = os.Rename(tmp, p)
		}
		if err == nil || try == 1 || !errors.Is(err, fs.ErrNotExist) {
			return err
		}
	}
}

// Remove deletes a record, and its scope's folder once empty.
func (d Dir) Remove(scope, name string) error {
	p, err := d.path(scope, name)
	if err != nil {
		return err
	}
	if err := os.Remove(p); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	os.Remove(filepath.Dir(p)) // fails, as it should, while the folder holds anything
	return nil
}

// Rename moves a record to another name in its scope, durably.
func (d Dir) Rename(scope, from, to string) error {
	p, err := d.path(scope, from)
	if err != nil {
		return err
	}
	q, err := d.path(scope, to)
	if err != nil {
		return err
	}
	if err := os.Rename(p, q); err != nil {
		return err
	}
	return syncDir(filepath.Dir(q))
}

func (d Dir) path(scope, name string) (string, error) {
	if d.Root == "" {
		return "", errors.New("resume: Dir has no Root")
	}
	if err := checkName(scope); err != nil {
		return "", err
	}
	if err := checkName(name); err != nil {
		return "", err
	}
	return filepath.Join(d.Root, scope, name), nil
}

// checkName accepts the scopes and record names a State makes, and
// nothing that could reach outside the folder.
func checkName(s string) error {
	if s == "" || len(s) > 128 || s[0] == '.' {
		return fmt.Errorf("resume: bad record name %q", s)
	}
	for _, c := range s {
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c == '.' || c == '-') {
			return fmt.Errorf("resume: bad record name %q", s)
		}
	}
	return nil
}

// syncDir makes a rename in dir durable. Where folders cannot be synced
// (EINVAL, ENOTSUP: some platforms and file systems) the rename is as
// durable as the platform makes it.
func syncDir(dir string) error {
	f, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer f.Close()
	err = f.Sync()
	if errors.Is(err, syscall.EINVAL) || errors.Is(err, syscall.ENOTSUP) || errors.Is(err, errors.ErrUnsupported) {
		return nil
	}
	return err
}
