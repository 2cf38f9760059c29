package repos

import (
	"errors"
	"fmt"

	"github.com/xetkit/xetkit/hub/internal/casapi"
	"github.com/xetkit/xetkit/xethash"
)

// LFS objects, by SHA-256: what the LFS batch may skip, and copies of
// files between repositories (lfs-files/duplicate). A SHA-256 leads only
// to files the repository may read (casapi.Lookup).

// LFSStored reports whether u need not send the LFS object oid (hex) of
// size bytes to repository id: u's own upload to id holds it, or a file
// of id whose bytes the hub hashed. Anything else is sent again, so the
// answer tells nothing of other repositories' files.
func (s *Service) LFSStored(u *User, id ID, oid string, size int64) bool {
	_, _, err := s.fileBySHA(casapi.Lookup{Repo: id.Key(), User: nameOf(u), Own: true}, oid, size)
	return err == nil
}

// LFSUploaded reports whether repository id (named by its Key) holds the
// LFS object oid of size bytes that an LFS transfer just sent (the
// transfer's verify step): a file of it whose bytes the hub hashed.
func (s *Service) LFSUploaded(key, oid string, size int64) error {
	_, _, err := s.fileBySHA(casapi.Lookup{Repo: key}, oid, size)
	return err
}

// LFSCopy is a file to copy from one repository to another: its Xet
// hash and SHA-256 (hex).
type LFSCopy struct{ XetHash, SHA256 string }

// DuplicateLFS lets repository dst read the files of src that u names,
// before a commit of dst that copies them (lfs-files/duplicate): u must
// read src and write dst, and each file must be one src holds whose bytes
// have that SHA-256 (the hub hashes them if it has not yet). It returns
// the failures, by SHA-256, saying nothing of files src does not hold.
func (s *Service) DuplicateLFS(u *User, src, dst ID, files []LFSCopy) (map[string]string, error) {
	if _, err := s.Repo(u, src); err != nil {
		return nil, err
	}
	if err := signedIn(u, "lfs-files/duplicate", true); err != nil {
		return nil, err
	}
	if _, err := s.writable(u, dst, "copying files into a repository"); err != nil {
		return nil, err
	}
	failed := map[string]string{}
	for _, f := range files {
		sha, err := xethash.Parse(f.SHA256)
		var xet xethash.Hash
		if err == nil && sha.String() == f.SHA256 {
			xet, _, err = s.cas.FileBySHA256(casapi.Lookup{Repo: src.Key(), SHA256: sha, Verify: true})
		}
		if err != nil && !errors.Is(err, casapi.ErrNoFile) && !errors.Is(err, xethash.ErrSyntax) {
			return nil, err
		}
		if err != nil || xet.String() != f.XetHash {
			failed[f.SHA256] = fmt.Sprintf("%s has no file with SHA-256 %q and xet hash %q", src, f.SHA256, f.XetHash)
			continue
		}
		if err := s.cas.Grant(dst.Key(), xet); err != nil {
			return nil, err
		}
	}
	return failed, nil
}

// LFSHeld reports whether repository key (a Key) holds the LFS object oid
// (hex) of size bytes as one of its own files, for a download: a file of
// it whose bytes the hub hashed to oid (the hub hashes one an upload only
// claims, once).
func (s *Service) LFSHeld(key, oid string, size int64) error {
	_, _, err := s.fileBySHA(casapi.Lookup{Repo: key, Verify: true}, oid, size)
	return err
}

// OpenLFS opens the LFS object oid of size bytes of repository key (as
// LFSHeld finds it): its bytes rebuilt from Xet, every chunk checked.
func (s *Service) OpenLFS(key, oid string, size int64) (Content, int64, error) {
	f, n, err := s.fileBySHA(casapi.Lookup{Repo: key, Verify: true}, oid, size)
	if err != nil {
		return nil, 0, err
	}
	return s.Open(xetEntry("", n, oid, f))
}
