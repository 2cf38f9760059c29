package store

import (
	"errors"
	"os"
	"unsafe"

	"golang.org/x/sys/unix"
)

// directBlock is the alignment a direct write needs here: of the buffer's
// address, the length and the file offset (4 KiB covers 512-byte and
// 4 KiB devices alike).
const directBlock = 4096

// minDirect is the smallest part worth a direct write: below it the page
// cache's copy costs less than a write that waits for the device.
const minDirect = 1 << 20

// writeParts writes parts to f, a new empty file, one after another. A
// large first part goes to the device straight from its memory (O_DIRECT)
// for its whole 4 KiB blocks: a verified xorb is in memory already, and
// copying 64 MiB into the page cache costs the kernel more CPU than
// hashing it. The rest, and everything where the file system or the
// buffer's alignment does not allow it, is written as usual.
func writeParts(f *os.File, parts [][]byte) error {
	for i, p := range parts {
		if i == 0 {
			n, err := writeDirect(f, p)
			if err != nil {
				return err
			}
			p = p[n:]
		}
		if _, err := f.Write(p); err != nil {
			return err
		}
	}
	return nil
}

// writeDirect writes the whole 4 KiB blocks at the start of p to f with
// O_DIRECT and returns how many bytes it wrote: 0 when p is small or
// misaligned, or the file system refuses direct writes (tmpfs does).
func writeDirect(f *os.File, p []byte) (int, error) {
	n := len(p) &^ (directBlock - 1)
	if n < minDirect || uintptr(unsafe.Pointer(&p[0]))%directBlock != 0 {
		return 0, nil
	}
	fd := int(f.Fd())
	flags, err := unix.FcntlInt(uintptr(fd), unix.F_GETFL, 0)
	if err != nil {
		return 0, nil
	}
	if _, err := unix.FcntlInt(uintptr(fd), unix.F_SETFL, flags|unix.O_DIRECT); err != nil {
		return 0, nil
	}
	wrote := 0
	for wrote < n {
		m, err := unix.Write(fd, p[wrote:n])
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			if wrote == 0 && errors.Is(err, unix.EINVAL) {
				break // not allowed here after all: write it as usual
			}
			return wrote, err
		}
		wrote += m
	}
	if _, err := unix.FcntlInt(uintptr(fd), unix.F_SETFL, flags); err != nil {
		return wrote, err
	}
	return wrote, nil
}
