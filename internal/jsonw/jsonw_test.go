package jsonw

import (
	"encoding/json"
	"testing"

	"github.com/xetkit/xetkit/xethash"
)

type inner struct {
	N uint32 `json:"n"`
}

type sample struct {
	Name    string        `json:"name"`
	Skip    string        `json:"-"`
	Opt     string        `json:"opt,omitempty"`
	Count   int64         `json:"count"`
	Small   uint8         `json:"small"`
	OK      bool          `json:"ok"`
	Hash    xethash.Hash  `json:"hash"`
	HashP   *xethash.Hash `json:"hashP"`
	Nil     *inner        `json:"nil"`
	List    []inner       `json:"list"`
	Empty   []string      `json:"empty"`
	None    []string      `json:"none"`
	Raw     []uint32      `json:"raw"`
	Untaged int
	private int
}

// TestLikeEncodingJSON: the bytes are encoding/json's for the shapes the
// module's results have, strings with every kind of escape included.
func TestLikeEncodingJSON(t *testing.T) {
	h := xethash.Chunk([]byte("x"))
	for _, v := range []any{
		sample{Name: "a\"b\\c\n\t<&>\u2028\x01\xff é", Skip: "s", Count: -5, Small: 200, OK: true, Hash: h, HashP: &h,
			List: []inner{{1}, {2}}, Empty: []string{}, Raw: []uint32{1, 4294967295}, Untaged: 3, private: 4},
		sample{Opt: "set"},
		[]sample{{}, {Name: "x"}},
		(*sample)(nil),
	} {
		want, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		if got := Marshal(v); string(got) != string(want) {
			t.Errorf("Marshal:\n%s\nwant\n%s", got, want)
		}
	}
}
