package repos

import (
	"bytes"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"unicode/utf8"
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
	// users and orgs are the names as the file gives them, keyed in lower
	// case; orgs maps each organisation to its members.
	users map[string]string
	orgs  map[string]orgEntry
}

// orgEntry is an organisation as the file gives it.
type orgEntry struct {
	name    string
	members []string
}

// ParseUsers reads a Users file, refusing what is not JSON, keys it does
// not know, names that are not namespaces, a name used twice, a member who
// is no user, and tokens that are not lowercase SHA-256 hex or are given
// twice. Each refusal says where, by line and column ("users file, line 3,
// column 14: ...").
func ParseUsers(b []byte) (*Users, error) {
	root, err := readJSONTree(b)
	if err != nil {
		return nil, err
	}
	f := &usersReader{b: b}
	top := f.object(root, "the file", "users", "orgs")
	users := f.list(top, "users")
	orgs := f.list(top, "orgs")
	for i, u := range users {
		users[i] = f.object(u, "a user", "name", "tokens")
	}
	for i, o := range orgs {
		orgs[i] = f.object(o, "an organisation", "name", "members")
	}
	if f.err != nil {
		return nil, f.err
	}
	names := map[string]bool{}
	name := func(n *jsonNode, kind string) string {
		v := f.str(n, "name", kind)
		if f.err != nil {
			return ""
		}
		if err := checkNamespace(strings.TrimPrefix(strings.TrimPrefix(kind, "a "), "an "), v); err != nil {
			f.fail(n.fields["name"], "%v", err)
		} else if names[strings.ToLower(v)] {
			f.fail(n.fields["name"], "the name %q is given twice", v)
		}
		names[strings.ToLower(v)] = true
		return v
	}
	userNames := make([]string, len(users))
	for i, u := range users {
		userNames[i] = name(u, "a user")
	}
	orgsOf := map[string][]string{}
	us := &Users{byToken: map[string]*User{}, users: map[string]string{}, orgs: map[string]orgEntry{}}
	for _, n := range userNames {
		us.users[strings.ToLower(n)] = n
	}
	for _, o := range orgs {
		orgName := name(o, "an organisation")
		entry := orgEntry{name: orgName}
		for _, m := range f.list(o, "members") {
			member := f.value(m, "a member")
			if f.err == nil && !slices.ContainsFunc(userNames, func(u string) bool { return strings.EqualFold(u, member) }) {
				f.fail(m, "member %q of %s is not a user", member, orgName)
			}
			orgsOf[strings.ToLower(member)] = append(orgsOf[strings.ToLower(member)], orgName)
			entry.members = append(entry.members, member)
		}
		sortNames(entry.members)
		us.orgs[strings.ToLower(orgName)] = entry
	}
	for i, u := range users {
		for j, t := range f.list(u, "tokens") {
			t = f.object(t, "a token", "sha256", "role")
			sum, roleName := f.str(t, "sha256", "a token"), f.str(t, "role", "a token")
			if f.err != nil {
				return nil, f.err
			}
			r := map[string]Role{"read": RoleRead, "write": RoleWrite}[roleName]
			if r == 0 {
				return nil, f.errorf(t.fields["role"], "token %d of %s: role %q (want read or write)", j+1, userNames[i], roleName)
			}
			if b, err := hex.DecodeString(sum); err != nil || len(b) != sha256.Size || strings.ToLower(sum) != sum {
				return nil, f.errorf(t.fields["sha256"], "token %d of %s: sha256 must be the 64 lowercase hex digits of the token's SHA-256 (printf %%s hf_... | sha256sum)", j+1, userNames[i])
			}
			if us.byToken[sum] != nil {
				return nil, f.errorf(t.fields["sha256"], "token %d of %s is given twice", j+1, userNames[i])
			}
			us.byToken[sum] = &User{Name: userNames[i], Role: r, Orgs: orgsOf[strings.ToLower(userNames[i])]}
		}
	}
	if f.err != nil {
		return nil, f.err
	}
	return us, nil
}

// usersReader reads the values of a users file's tree. It keeps the first
// mistake; reads after it return zero values.
type usersReader struct {
	b   []byte
	err error
}

// errorf is a mistake at n, by line and column.
func (f *usersReader) errorf(n *jsonNode, format string, args ...any) error {
	line, col := lineColumn(f.b, n.off)
	return fmt.Errorf("users file, line %d, column %d: %s", line, col, fmt.Sprintf(format, args...))
}

func (f *usersReader) fail(n *jsonNode, format string, args ...any) {
	if f.err == nil {
		f.err = f.errorf(n, format, args...)
	}
}

// object checks that n is an object with only the keys allowed.
func (f *usersReader) object(n *jsonNode, what string, allowed ...string) *jsonNode {
	switch {
	case f.err != nil:
	case n.fields == nil:
		f.fail(n, "%s must be an object {...}", what)
	default:
		for _, k := range n.keys {
			if !slices.Contains(allowed, k.name) {
				f.fail(k.at, "unknown key %q in %s (want %s)", k.name, what, strings.Join(allowed, " or "))
			}
		}
	}
	return n
}

// list reads obj's array at key; a key left out is an empty one.
func (f *usersReader) list(obj *jsonNode, key string) []*jsonNode {
	n := obj.fields[key]
	if f.err != nil || n == nil {
		return nil
	}
	if n.items == nil {
		f.fail(n, "%s must be an array [...]", key)
	}
	return n.items
}

// str reads obj's string at key, which must be there.
func (f *usersReader) str(obj *jsonNode, key, what string) string {
	if f.err != nil {
		return ""
	}
	n := obj.fields[key]
	if n == nil {
		f.fail(obj, "%s has no %q", what, key)
		return ""
	}
	return f.value(n, what+"'s "+key)
}

// value reads n as a string.
func (f *usersReader) value(n *jsonNode, what string) string {
	s, ok := n.value.(string)
	if !ok && f.err == nil {
		f.fail(n, "%s must be a string", what)
	}
	return s
}

// jsonNode is a JSON value with the byte offset it starts at: an object
// (fields, keys in order), an array (items, non-nil) or a scalar (value).
type jsonNode struct {
	off    int64
	value  any
	fields map[string]*jsonNode
	keys   []jsonKey
	items  []*jsonNode
}

// jsonKey is an object's key and the node it starts at.
type jsonKey struct {
	name string
	at   *jsonNode
}

// readJSONTree reads b, one JSON value, into nodes that know their offsets.
func readJSONTree(b []byte) (*jsonNode, error) {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	// start is where the next token begins: past the space, commas and
	// colons after the decoder's offset.
	start := func() int64 {
		off := dec.InputOffset()
		for off < int64(len(b)) && strings.IndexByte(" \t\r\n,:", b[off]) >= 0 {
			off++
		}
		return off
	}
	fail := func(err error) error {
		off := start()
		var se *json.SyntaxError
		if errors.As(err, &se) {
			off = se.Offset
		}
		if errors.Is(err, io.EOF) {
			err = io.ErrUnexpectedEOF
		}
		line, col := lineColumn(b, off)
		return fmt.Errorf("users file, line %d, column %d: not JSON: %v", line, col, strings.TrimPrefix(err.Error(), "json: "))
	}
	var value func() (*jsonNode, error)
	value = func() (*jsonNode, error) {
		n := &jsonNode{off: start()}
		tok, err := dec.Token()
		if err != nil {
			return nil, fail(err)
		}
		switch tok {
		case json.Delim('{'):
			n.fields = map[string]*jsonNode{}
			for dec.More() {
				k := &jsonNode{off: start()}
				kt, err := dec.Token()
				if err != nil {
					return nil, fail(err)
				}
				name, _ := kt.(string)
				v, err := value()
				if err != nil {
					return nil, err
				}
				if _, dup := n.fields[name]; dup {
					line, col := lineColumn(b, k.off)
					return nil, fmt.Errorf("users file, line %d, column %d: key %q given twice", line, col, name)
				}
				n.fields[name] = v
				n.keys = append(n.keys, jsonKey{name, k})
			}
		case json.Delim('['):
			n.items = []*jsonNode{}
			for dec.More() {
				v, err := value()
				if err != nil {
					return nil, err
				}
				n.items = append(n.items, v)
			}
		default:
			n.value = tok
			return n, nil
		}
		if _, err := dec.Token(); err != nil { // the closing } or ]
			return nil, fail(err)
		}
		return n, nil
	}
	root, err := value()
	if err != nil {
		return nil, err
	}
	if end := start(); end < int64(len(b)) {
		line, col := lineColumn(b, end)
		return nil, fmt.Errorf("users file, line %d, column %d: more after the JSON value", line, col)
	}
	return root, nil
}

// lineColumn is byte offset off of b as a line and a column, from 1 (the
// column counts characters).
func lineColumn(b []byte, off int64) (line, col int) {
	off = min(off, int64(len(b)))
	before := b[:off]
	nl := bytes.LastIndexByte(before, '\n')
	return bytes.Count(before, []byte("\n")) + 1, utf8.RuneCount(before[nl+1:]) + 1
}

// lookup finds the user of token tok, or nil (also for nil Users).
func (us *Users) lookup(tok string) *User {
	if us == nil {
		return nil
	}
	sum := sha256.Sum256([]byte(tok))
	return us.byToken[hex.EncodeToString(sum[:])]
}

// kindOf says whether ns is a user ("user") or an organisation ("org",
// with its members) of the file, and its name as the file spells it; ""
// for neither (and for nil Users).
func (us *Users) kindOf(ns string) (kind, name string, members []string) {
	if us == nil {
		return "", "", nil
	}
	if n, ok := us.users[strings.ToLower(ns)]; ok {
		return "user", n, nil
	}
	if o, ok := us.orgs[strings.ToLower(ns)]; ok {
		return "org", o.name, o.members
	}
	return "", "", nil
}

// tokensOf lists the tokens of user name, in the order of their hashes,
// marking the one whose text is current.
func (us *Users) tokensOf(name, current string) []TokenInfo {
	if us == nil {
		return nil
	}
	sum := sha256.Sum256([]byte(current))
	cur := hex.EncodeToString(sum[:])
	var out []TokenInfo
	for h, u := range us.byToken {
		if strings.EqualFold(u.Name, name) {
			out = append(out, TokenInfo{Role: u.Role, Prefix: h[:12], Current: h == cur})
		}
	}
	slices.SortFunc(out, func(a, b TokenInfo) int { return strings.Compare(a.Prefix, b.Prefix) })
	return out
}

// named is the user called name (without case), with the organisations
// of the file, or nil (also for nil Users).
func (us *Users) named(name string) *User {
	if us == nil {
		return nil
	}
	for _, u := range us.byToken {
		if strings.EqualFold(u.Name, name) {
			return &User{Name: u.Name, Role: RoleRead, Orgs: u.Orgs}
		}
	}
	return nil
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
