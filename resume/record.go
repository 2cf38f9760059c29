package resume

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/xetkit/xetkit/shard"
	"github.com/xetkit/xetkit/xethash"
	"github.com/xetkit/xetkit/xorb"
)

// A record is one xorb an upload sent: an upload-form shard (the MDB
// shard format) holding that xorb's CAS info alone, as the reference
// client keeps the xorbs of an unfinished session in local shards. It is
// named "<time>-<xorb hash>.shard" once the CAS accepted the xorb, and
// "<time>-<xorb hash>.sending" from just before the xorb is sent until
// then (an unconfirmed record: the CAS may or may not have the xorb), the
// time (16 hex digits of Unix nanoseconds) ordering records oldest first
// across scopes.

const (
	recordSuffix      = ".shard"
	unconfirmedSuffix = ".sending"
)

// maxRecordSize bounds what is read of a record: one of a full xorb
// (8,192 chunks of 48 bytes, with the shard's header and bookends) is
// under 400 KiB.
const maxRecordSize = 1 << 20

func recordName(at int64, x xethash.Hash, confirmed bool) string {
	if !confirmed {
		return fmt.Sprintf("%016x-%s%s", at, x, unconfirmedSuffix)
	}
	return fmt.Sprintf("%016x-%s%s", at, x, recordSuffix)
}

// parseRecordName returns the time and xorb hash of a record name, and
// whether the record is confirmed.
func parseRecordName(name string) (at int64, x xethash.Hash, confirmed bool, err error) {
	stem, confirmed := strings.CutSuffix(name, recordSuffix)
	if !confirmed {
		var ok bool
		if stem, ok = strings.CutSuffix(name, unconfirmedSuffix); !ok {
			return 0, x, false, fmt.Errorf("not a record name")
		}
	}
	t, h, ok := strings.Cut(stem, "-")
	if !ok || len(t) != 16 {
		return 0, x, false, fmt.Errorf("not a record name")
	}
	u, err := strconv.ParseUint(t, 16, 64)
	if err != nil {
		return 0, x, false, fmt.Errorf("not a record name")
	}
	if x, err = xethash.Parse(h); err != nil {
		return 0, x, false, fmt.Errorf("not a record name: %v", err)
	}
	return int64(u), x, confirmed, nil
}

// encodeRecord returns the bytes of x's record.
func encodeRecord(x *shard.Xorb) ([]byte, error) {
	s := &shard.Shard{Header: shard.Header{AppID: shard.DefaultAppID, Version: shard.HeaderVersion}, Xorbs: []shard.Xorb{*x}}
	return s.Marshal(shard.WriteOptions{})
}

// decodeRecord reads a record back and checks it against itself: one
// xorb, the one its name gives, whose chunk list hashes to that xorb hash
// and whose offsets and sizes add up. A record that passes cannot make an
// upload name chunks a xorb does not hold; whether the CAS still has the
// xorb is checked by the hub when the upload's shard names it.
func decodeRecord(want xethash.Hash, b []byte) (*shard.Xorb, error) {
	if len(b) > maxRecordSize {
		return nil, fmt.Errorf("%d bytes, more than a record can hold", len(b))
	}
	s, err := shard.Parse(b)
	if err != nil {
		return nil, err
	}
	if len(s.Files) != 0 || len(s.Xorbs) != 1 {
		return nil, fmt.Errorf("holds %d files and %d xorbs, not one xorb", len(s.Files), len(s.Xorbs))
	}
	if s.Footer != nil && !s.Footer.ChunkHashKey.IsZero() {
		return nil, errors.New("its chunk hashes are keyed")
	}
	x := &s.Xorbs[0]
	if x.Hash != want {
		return nil, fmt.Errorf("names xorb %s, not %s", x.Hash, want)
	}
	if len(x.Chunks) == 0 || len(x.Chunks) > xorb.MaxChunks {
		return nil, fmt.Errorf("lists %d chunks", len(x.Chunks))
	}
	entries := make([]xethash.Entry, len(x.Chunks))
	var at uint64
	for i, c := range x.Chunks {
		if uint64(c.ByteRangeStart) != at || c.UnpackedBytes == 0 {
			return nil, fmt.Errorf("chunk %d starts at %d with %d bytes, after %d bytes", i, c.ByteRangeStart, c.UnpackedBytes, at)
		}
		at += uint64(c.UnpackedBytes)
		entries[i] = xethash.Entry{Hash: c.Hash, Size: uint64(c.UnpackedBytes)}
	}
	if at != uint64(x.BytesInXorb) || at > xorb.MaxBytes {
		return nil, fmt.Errorf("gives %d bytes in the xorb; its chunks hold %d", x.BytesInXorb, at)
	}
	if got := xethash.Xorb(entries); got != want {
		return nil, fmt.Errorf("its chunks hash to xorb %s, not %s", got, want)
	}
	x.Offset = 0
	return x, nil
}
