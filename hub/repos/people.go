package repos

import (
	"bytes"
	"crypto/sha256"
	"crypto/subtle"
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
	byToken map[string]*User // SHA-256 of the token → who it is
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
		if err := checkNamespace(kind, n); err != nil {
			return fmt.Errorf("users file: %v", err)
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
	us := &Users{byToken: map[string]*User{}}
	for _, u := range f.Users {
		for i, t := range u.Tokens {
			r := map[string]Role{"read": RoleRead, "write": RoleWrite}[t.Role]
			if r == 0 {
				return nil, fmt.Errorf("users file: token %d of %s: role %q (want read or write)", i+1, u.Name, t.Role)
			}
			if sum, err := hex.DecodeString(t.SHA256); err != nil || len(sum) != sha256.Size || strings.ToLower(t.SHA256) != t.SHA256 {
				return nil, fmt.Errorf("users file: token %d of %s: sha256 must be the 64 lowercase hex digits of the token's SHA-256", i+1, u.Name)
			}
			if us.byToken[t.SHA256] != nil {
				return nil, fmt.Errorf("users file: token %d of %s is given twice", i+1, u.Name)
			}
			us.byToken[t.SHA256] = &User{Name: u.Name, Role: r, Orgs: orgsOf[strings.ToLower(u.Name)]}
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
func (us *Users) lookup(tok string) *User {
	if us == nil {
		return nil
	}
	sum := sha256.Sum256([]byte(tok))
	return us.byToken[hex.EncodeToString(sum[:])]
}

// Role is what a user token allows.
type Role int

// The roles of a user token.
const (
	RoleRead  Role = 1
	RoleWrite Role = 2 // writers also read
)

func (r Role) String() string {
	if r == RoleWrite {
		return "write"
	}
	return "read"
}

// User is who a request's user token says it comes from; a nil *User is
// a request without one.
type User struct {
	Name string
	Role Role
	Orgs []string // the organisations the user is a member of
	// Everywhere marks the single --token user, who owns every namespace.
	Everywhere bool
}

// Owns reports whether u may write (with a write token) and see the
// private repositories of namespace ns: its own, its organisations'.
func (u *User) Owns(ns string) bool {
	if u == nil {
		return false
	}
	if u.Everywhere || strings.EqualFold(u.Name, ns) {
		return true
	}
	for _, o := range u.Orgs {
		if strings.EqualFold(o, ns) {
			return true
		}
	}
	return false
}

// LocalName is the name of the single --token user: the namespace of a
// repo it creates without one.
const LocalName = "local"

// localUser is the single --token user, of role r.
func localUser(r Role) *User { return &User{Name: LocalName, Role: r, Everywhere: true} }

// Identify finds who user token tok is (present: the request carries
// one), or nil when no user has it. Without any configured token every
// caller is the local user, who writes everywhere.
func (s *Service) Identify(tok string, present bool) *User {
	switch {
	case s.cfg.UserToken == "" && s.cfg.Users == nil:
		return localUser(RoleWrite)
	case !present:
		return nil
	}
	if u := s.cfg.Users.lookup(tok); u != nil {
		return u
	}
	if s.cfg.UserToken != "" && subtle.ConstantTimeCompare([]byte(tok), []byte(s.cfg.UserToken)) == 1 {
		return localUser(RoleWrite)
	}
	if s.cfg.ReadUserToken != "" && subtle.ConstantTimeCompare([]byte(tok), []byte(s.cfg.ReadUserToken)) == 1 {
		return localUser(RoleRead)
	}
	return nil
}

// nameOf is the name a change by u is recorded under: the local user's
// for a request without a token (a hub without tokens).
func nameOf(u *User) string {
	if u == nil {
		return LocalName
	}
	return u.Name
}

// mayWrite refuses u a change to namespace ns: Unauthorized without a
// token, Forbidden for a read token or another's namespace.
func mayWrite(u *User, ns, what string) error {
	switch {
	case u == nil:
		return refuse(Unauthorized, "%s needs a user token", what)
	case u.Role < RoleWrite:
		return refuse(Forbidden, "this user token is read-only; %s needs a write token", what)
	case !u.Owns(ns):
		return refuse(Forbidden, "%s may not write to the namespace %s (a user writes to its own and its organisations')", u.Name, ns)
	}
	return nil
}

// signedIn refuses a request without a user token, and with write one
// whose token only reads.
func signedIn(u *User, what string, write bool) error {
	switch {
	case u == nil:
		return refuse(Unauthorized, "%s needs a user token", what)
	case write && u.Role < RoleWrite:
		return refuse(Forbidden, "this user token is read-only; %s needs a write token", what)
	}
	return nil
}
