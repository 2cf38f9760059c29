package spec

import (
	"bytes"
	"encoding/json"
	"reflect"
	"testing"

	"github.com/xetkit/xetkit/formaterr"
)

// FuzzParse: Parse never panics, refuses with a formaterr.Error whose
// offset lies in the input, and what it accepts encoding/json reads into
// the same Spec (with unknown keys refused).
func FuzzParse(f *testing.F) {
	h := `"0101010101010101010101010101010101010101010101010101010101010101"`
	for _, seed := range []string{
		`{}`, `{"files": null, "xorbs": [], "footer": null}`, `{"appId": "a\u00e9\\n\"b"}`,
		`{"files": [{"hash": ` + h + `, "sha256": ` + h + `, "verification": true, "flags": 3221225472, "terms": [{"xorb": ` + h + `, "chunkStart": 0, "chunkEnd": 2, "unpackedBytes": 9, "rangeHash": ` + h + `, "flags": 0}]}]}`,
		`{"xorbs": [{"hash": ` + h + `, "flags": 1, "bytesInXorb": 5, "bytesOnDisk": 7, "chunks": [{"hash": ` + h + `, "unpackedBytes": 5, "flags": 2147483648, "byteRangeStart": 0}]}]}`,
		`{"footer": {"createdAt": 1, "keyExpiry": 18446744073709551615, "chunkHashKey": ` + h + `, "lookupTables": true, "storedBytesOnDisk": 1, "materializedBytes": 2, "storedBytes": 3}}`,
		"{\"appId\": \"\xff\xfe\u00e9\"}", `{"filez": []}`, `{"files": [`, ``, `[]`, `{} {}`, `{"xorbs": [{"bytesOnDisk": 01}]}`,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		sp, err := Parse(data)
		if err != nil {
			fe := formaterr.Find(err)
			if fe == nil || fe.Offset < 0 || fe.Offset > int64(len(data)) {
				t.Fatalf("error %v: want a formaterr.Error with an offset in the %d bytes", err, len(data))
			}
			return
		}
		var want Spec
		dec := json.NewDecoder(bytes.NewReader(data))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&want); err != nil {
			t.Fatalf("Parse accepted what encoding/json refuses (%v): %q", err, data)
		}
		if !reflect.DeepEqual(sp, &want) {
			t.Fatalf("Parse and encoding/json differ on %q:\n%+v\n%+v", data, sp, &want)
		}
	})
}
