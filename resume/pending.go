package resume

import (
	"encoding/json"
	"slices"
	"strings"
	"time"

	"github.com/xetkit/xetkit/xethash"
)

// repoLabel is the name, within a scope, of the Repo a State was opened
// for: a listing of unfinished uploads can then say whose they are (a
// scope is a hash). It is not a record: Open and the bound ignore it.
const repoLabel = "repo.json"

// Repo is the hub and repository a scope holds the uploads of.
type Repo struct {
	Hub  string `json:"hub"`
	Type string `json:"repoType"`
	Name string `json:"repo"`
}

// Pending sums up the records of one scope: what an unfinished upload
// (or several) to one repository has stored and not yet committed.
type Pending struct {
	Scope string `json:"scope"`
	// Repo is nil when the scope's label is missing or unreadable.
	Repo *Repo `json:"repo"`
	// Xorbs and Bytes count the xorbs the CAS confirmed and their chunk
	// data (uncompressed): what an upload of the same files would not
	// send.
	Xorbs int   `json:"xorbs"`
	Bytes int64 `json:"bytes"`
	// Unconfirmed counts the xorbs that were being sent when the upload
	// stopped: the next upload asks the CAS whether it has them.
	Unconfirmed int `json:"unconfirmed"`
	// First and Last are when the oldest and newest records were written.
	First time.Time `json:"first"`
	Last  time.Time `json:"last"`
}

// ListPending reads every scope of b and sums up its records, the scope
// with the newest record first. It only reads: records that do not read
// back whole and consistent are left out (the next upload to their
// repository deletes them), and so are scopes with no record left.
func ListPending(b Backend) ([]Pending, error) {
	entries, err := b.List()
	if err != nil {
		return nil, err
	}
	byScope := map[string]*Pending{}
	var out []*Pending
	// A xorb recorded both ways (stopped between the confirmed record's
	// write and the unconfirmed one's removal) counts as confirmed.
	type key struct {
		scope string
		x     xethash.Hash
	}
	confirmedXorbs, unconfirmedXorbs := map[key]bool{}, map[key]bool{}
	for _, e := range entries {
		at, x, confirmed, err := parseRecordName(e.Name)
		if err != nil || e.Size > maxRecordSize {
			continue
		}
		data, err := b.Read(e.Scope, e.Name)
		if err != nil {
			continue
		}
		info, err := decodeRecord(x, data)
		if err != nil {
			continue
		}
		p := byScope[e.Scope]
		if p == nil {
			p = &Pending{Scope: e.Scope, First: time.Unix(0, at)}
			byScope[e.Scope] = p
			out = append(out, p)
		}
		t := time.Unix(0, at)
		if t.Before(p.First) {
			p.First = t
		}
		if t.After(p.Last) {
			p.Last = t
		}
		if confirmed {
			p.Xorbs++
			p.Bytes += int64(info.BytesInXorb)
			confirmedXorbs[key{e.Scope, x}] = true
		} else {
			unconfirmedXorbs[key{e.Scope, x}] = true
		}
	}
	for k := range unconfirmedXorbs {
		if !confirmedXorbs[k] {
			byScope[k.scope].Unconfirmed++
		}
	}
	for _, p := range out {
		if data, err := b.Read(p.Scope, repoLabel); err == nil && len(data) <= 4096 {
			var r Repo
			if json.Unmarshal(data, &r) == nil && r.Name != "" {
				p.Repo = &r
			}
		}
	}
	slices.SortFunc(out, func(a, b *Pending) int {
		if c := b.Last.Compare(a.Last); c != 0 {
			return c
		}
		return strings.Compare(a.Scope, b.Scope)
	})
	res := make([]Pending, len(out))
	for i, p := range out {
		res[i] = *p
	}
	return res, nil
}
