package githttp

import (
	"bufio"
	"bytes"
	"compress/zlib"
	"crypto/sha1"
	"encoding/binary"
	"strings"
	"testing"

	"github.com/go-git/go-git/v5/plumbing"
)

// fuzzLimits are small, so that what the fuzzer finds past them is
// refused rather than read.
var fuzzLimits = Limits{PackBytes: 1 << 20, Objects: 64, ObjectBytes: 64 << 10}

// seedPack is a well-formed pack of the objects, each (type, body).
func seedPack(objs ...struct {
	typ  int
	body string
}) []byte {
	var b bytes.Buffer
	b.WriteString("PACK")
	binary.Write(&b, binary.BigEndian, uint32(2))
	binary.Write(&b, binary.BigEndian, uint32(len(objs)))
	for _, o := range objs {
		size := len(o.body)
		c := byte(o.typ<<4) | byte(size&0x0f)
		for size >>= 4; size > 0; size >>= 7 {
			b.WriteByte(c | 0x80)
			c = byte(size & 0x7f)
		}
		b.WriteByte(c)
		zw := zlib.NewWriter(&b)
		zw.Write([]byte(o.body))
		zw.Close()
	}
	sum := sha1.Sum(b.Bytes())
	b.Write(sum[:])
	return b.Bytes()
}

// FuzzReceive: whatever a push's body holds, receive answers an error or
// a pack whose every object it checked and bounded; it never panics or
// reads an object past the limits.
func FuzzReceive(f *testing.F) {
	blob := "hello\n"
	blobID := plumbing.ComputeHash(plumbing.BlobObject, []byte(blob))
	tree := "100644 a.txt\x00" + string(blobID[:])
	treeID := plumbing.ComputeHash(plumbing.TreeObject, []byte(tree))
	commit := "tree " + treeID.String() + "\nauthor a <a@b> 1 +0000\ncommitter a <a@b> 1 +0000\n\nm\n"
	type obj = struct {
		typ  int
		body string
	}
	f.Add(seedPack(obj{1, commit}, obj{2, tree}, obj{3, blob}))
	f.Add(seedPack(obj{3, blob}))
	f.Add(seedPack(obj{2, "100644 ..\x00" + strings.Repeat("\x01", 20)}))
	f.Add(seedPack())
	f.Add([]byte("PACK\x00\x00\x00\x02\xff\xff\xff\xff"))
	f.Fuzz(func(t *testing.T, b []byte) {
		p, err := receive(bytes.NewReader(b), fuzzLimits)
		if err != nil {
			return
		}
		defer p.Close()
		if int64(len(p.types)) > fuzzLimits.Objects {
			t.Fatalf("%d objects kept, past the limit of %d", len(p.types), fuzzLimits.Objects)
		}
		for id := range p.types {
			_, body, err := p.Object(id.String())
			if err != nil {
				t.Fatalf("object %s was checked but cannot be read: %v", id, err)
			}
			if int64(len(body)) > fuzzLimits.ObjectBytes {
				t.Fatalf("object %s is %d bytes, past the limit", id, len(body))
			}
		}
	})
}

// FuzzReadPackets: a v2 request's pkt-lines are read or refused, never
// a panic, and what is read adds up to no more than was sent.
func FuzzReadPackets(f *testing.F) {
	f.Add([]byte("0014command=ls-refs\n00010009peel\n0000"))
	f.Add([]byte("0000"))
	f.Add([]byte("0003"))
	f.Add([]byte("ffff"))
	f.Add([]byte("000"))
	f.Fuzz(func(t *testing.T, b []byte) {
		ps, err := readPackets(bufio.NewReader(bytes.NewReader(b)))
		if err != nil {
			return
		}
		n := 0
		for _, p := range ps {
			n += 4 + len(p.data)
		}
		if n > len(b)+len(ps) {
			t.Fatalf("%d bytes of packets from a request of %d", n, len(b))
		}
	})
}

// FuzzFsck: any tree or commit body is judged, never a panic.
func FuzzFsck(f *testing.F) {
	f.Add(true, []byte("100644 a\x00"+strings.Repeat("\x01", 20)+"40000 d\x00"+strings.Repeat("\x02", 20)))
	f.Add(false, []byte("tree "+strings.Repeat("0", 40)+"\nauthor a <a@b> 1 +0000\ncommitter a <a@b> 1 +0000\n\nm\n"))
	f.Add(true, []byte("100644 "))
	f.Fuzz(func(t *testing.T, isTree bool, b []byte) {
		typ := plumbing.CommitObject
		if isTree {
			typ = plumbing.TreeObject
		}
		fsck(typ, plumbing.ComputeHash(typ, b), b)
	})
}

// The fuzz seed of a good pack is taken, so that FuzzReceive's checks run.
func TestReceiveTakesAGoodPack(t *testing.T) {
	blob := "hello\n"
	p, err := receive(bytes.NewReader(seedPack(struct {
		typ  int
		body string
	}{3, blob})), fuzzLimits)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	id := plumbing.ComputeHash(plumbing.BlobObject, []byte(blob))
	if typ, body, err := p.Object(id.String()); err != nil || typ != "blob" || string(body) != blob {
		t.Fatalf("object %s: %q %q %v", id, typ, body, err)
	}
}
