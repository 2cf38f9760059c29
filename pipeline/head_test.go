package pipeline_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"io"
	"math/rand/v2"
	"testing"

	"github.com/xetkit/xetkit/pipeline"
)

// headFile is a source of unknown size whose reader gives its start in
// one piece, with the SHA-256 of all of it when the start is all of it
// (as a browser's File, read by the platform, does): a
// pipeline.HeadReader. sha is what it says the SHA-256 is.
type headFile struct {
	data []byte
	sha  [32]byte
	at   int
}

func (f *headFile) ReadHead(n int) ([]byte, *[32]byte, error) {
	if len(f.data) <= n {
		f.at = len(f.data)
		if len(f.data) == 0 {
			return nil, &f.sha, nil // an empty File gives no bytes at all
		}
		return f.data, &f.sha, nil
	}
	f.at = n
	return f.data[:n], nil, nil
}

func (f *headFile) Read(p []byte) (int, error) {
	if f.at == len(f.data) {
		return 0, io.EOF
	}
	n := copy(p, f.data[f.at:])
	f.at += n
	return n, nil
}

// The start a HeadReader gives is the file, its SHA-256 taken as given
// (the upload does not compute it again), and an empty start is an empty
// file; a start that is not the whole file is read on from the reader,
// and its SHA-256 computed. Each is checked against the same bytes
// uploaded from a plain reader of known size.
func TestHeadReaderSources(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	big := make([]byte, 3<<20+5) // more than one read's start
	for i := range big {
		big[i] = byte(rng.Uint32())
	}
	given := sha256.Sum256([]byte("what the platform said"))
	for _, c := range []struct {
		name     string
		data     []byte
		shaGiven bool // the result's SHA-256 is the one the reader gave
	}{
		{"small", []byte("a small file, read whole at once"), true},
		{"empty", []byte{}, true},
		{"larger than its start", big, false},
	} {
		head := &headFile{data: c.data, sha: given}
		plain := bytes.NewReader(c.data)
		sources := []pipeline.Source{
			{Name: "head", Size: -1, Open: func() (io.Reader, error) { return head, nil }},
			{Name: "plain", Size: int64(len(c.data)), Open: func() (io.Reader, error) { return plain, nil }},
		}
		u := &pipeline.Uploader{NoGlobalDedupe: true}
		res, err := u.Run(context.Background(), &pipeline.Collector{}, sources)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		got, ref := res[0], res[1]
		if got.Size != int64(len(c.data)) || got.Hash != ref.Hash {
			t.Errorf("%s: %d bytes, hash %s; want %d bytes, hash %s", c.name, got.Size, got.Hash, len(c.data), ref.Hash)
		}
		sum := sha256.Sum256(c.data)
		wantSHA := hex.EncodeToString(sum[:])
		if c.shaGiven {
			wantSHA = hex.EncodeToString(given[:])
		}
		if got.SHA256 != wantSHA || ref.SHA256 != hex.EncodeToString(sum[:]) {
			t.Errorf("%s: SHA-256 %s (plain %s), want %s", c.name, got.SHA256, ref.SHA256, wantSHA)
		}
	}
}
