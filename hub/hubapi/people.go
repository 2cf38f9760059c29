package hubapi

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strings"
)

// Users are the people of a hub (xetkit serve --users FILE): users with
// their tokens, and organisations with their members. The file is JSON:
//
//	{"users": [{"name": "alice", "tokens": [{"sha256": "<hex>", "role": "write"}]}],
//	 "orgs":  [{"name": "team", "members": ["alice"]}]}
//
// A token is kept as the SHA-256 (hex) of its text, never the text: the
// hub hashes the bearer token of each request and looks the hash up. A
// "read" token reads what its user may see; a "write" token also writes
// to its user's namespace and its organisations'.
type Users struct {
	byToken map[string]*identity // SHA-256 of the token → who it is
}

// usersFile is the JSON of a Users file.
type usersFile struct {
	Users []struct {
		Name   string `json:"name"`
		Tokens []struct {
			SHA256 string `json:"sha256"`
			Role   string `json:"role"`
		} `json:"tokens"`
	} `json:"users"`
	Orgs []struct {
		Name    string   `json:"name"`
		Members []string `json:"members"`
	} `json:"orgs"`
}

// ParseUsers reads a Users file, refusing unknown fields, names that are
// not namespaces, a name used twice, a member who is no user, and tokens
// that are not lowercase SHA-256 hex or are given twice.
func ParseUsers(b []byte) (*Users, error) {
	var f usersFile
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&f); err != nil {
		return nil, fmt.Errorf("users file: %v", err)
	}
	names := map[string]bool{}
	checkName := func(kind, n string) error {
		if _, err := parseRepoID("model", n, "x"); err != nil || strings.Contains(n, "/") {
			return fmt.Errorf("users file: %s name %q is not a namespace", kind, n)
		}
		if names[strings.ToLower(n)] {
			return fmt.Errorf("users file: the name %q is given twice", n)
		}
		names[strings.ToLower(n)] = true
		return nil
	}
	orgsOf := map[string][]string{}
	for _, u := range f.Users {
		if err := checkName("user", u.Name); err != nil {
			return nil, err
		}
	}
	for _, o := range f.Orgs {
		if err := checkName("organisation", o.Name); err != nil {
			return nil, err
		}
		for _, m := range o.Members {
			if !names[strings.ToLower(m)] || isOrg(f, m) {
				return nil, fmt.Errorf("users file: member %q of %s is not a user", m, o.Name)
			}
			orgsOf[strings.ToLower(m)] = append(orgsOf[strings.ToLower(m)], o.Name)
		}
	}
	us := &Users{byToken: map[string]*identity{}}
	for _, u := range f.Users {
		for i, t := range u.Tokens {
			r := map[string]role{"read": roleRead, "write": roleWrite}[t.Role]
			if r == 0 {
				return nil, fmt.Errorf("users file: token %d of %s: role %q (want read or write)", i+1, u.Name, t.Role)
			}
			if sum, err := hex.DecodeString(t.SHA256); err != nil || len(sum) != sha256.Size || strings.ToLower(t.SHA256) != t.SHA256 {
				return nil, fmt.Errorf("users file: token %d of %s: sha256 must be the 64 lowercase hex digits of the token's SHA-256", i+1, u.Name)
			}
			if us.byToken[t.SHA256] != nil {
				return nil, fmt.Errorf("users file: token %d of %s is given twice", i+1, u.Name)
			}
			us.byToken[t.SHA256] = &identity{name: u.Name, role: r, orgs: orgsOf[strings.ToLower(u.Name)]}
		}
	}
	return us, nil
}

// isOrg reports whether name is one of f's organisations.
func isOrg(f usersFile, name string) bool {
	for _, o := range f.Orgs {
		if strings.EqualFold(o.Name, name) {
			return true
		}
	}
	return false
}

// lookup finds the user of token tok, or nil (also for nil Users).
func (us *Users) lookup(tok string) *identity {
	if us == nil {
		return nil
	}
	sum := sha256.Sum256([]byte(tok))
	return us.byToken[hex.EncodeToString(sum[:])]
}
