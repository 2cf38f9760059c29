package repos

import (
	"crypto/sha256"
	"encoding/hex"
	"strings"
	"testing"
)

func hashOf(tok string) string {
	sum := sha256.Sum256([]byte(tok))
	return hex.EncodeToString(sum[:])
}

// A users file is taken whole or refused with a message naming the fault.
func TestParseUsers(t *testing.T) {
	good := `{"users": [{"name": "alice", "tokens": [{"sha256": "` + hashOf("hf_a") + `", "role": "write"},
		{"sha256": "` + hashOf("hf_ar") + `", "role": "read"}]}, {"name": "bob", "tokens": []}],
		"orgs": [{"name": "team", "members": ["alice", "bob"]}]}`
	us, err := ParseUsers([]byte(good))
	if err != nil {
		t.Fatal(err)
	}
	if u := us.lookup("hf_a"); u == nil || u.Name != "alice" || u.Role != RoleWrite || !u.Owns("team") || !u.Owns("Alice") || u.Owns("bob") {
		t.Errorf("hf_a: %+v", u)
	}
	if u := us.lookup("hf_ar"); u == nil || u.Role != RoleRead {
		t.Errorf("hf_ar: %+v", u)
	}
	if us.lookup("hf_other") != nil || us.lookup(hashOf("hf_a")) != nil {
		t.Error("a token no user has (or a stored hash sent as a token) was accepted")
	}
	for _, c := range []struct{ file, want string }{
		{`{"users": [{"name": "a", "tokens": [{"sha256": "hf_plain", "role": "write"}]}]}`, "sha256 must be"},
		{`{"users": [{"name": "a", "tokens": [{"sha256": "` + strings.ToUpper(hashOf("x")) + `", "role": "write"}]}]}`, "sha256 must be"},
		{`{"users": [{"name": "a", "tokens": [{"sha256": "` + hashOf("x") + `", "role": "admin"}]}]}`, `role "admin"`},
		{`{"users": [{"name": "a", "tokens": [{"sha256": "` + hashOf("x") + `", "role": "read"}]}, {"name": "b", "tokens": [{"sha256": "` + hashOf("x") + `", "role": "read"}]}]}`, "given twice"},
		{`{"users": [{"name": "a"}, {"name": "A"}]}`, "given twice"},
		{`{"users": [{"name": "a/b"}]}`, "not a namespace"},
		{`{"users": [{"name": "api"}]}`, "not a namespace"},
		{`{"users": [{"name": "a"}], "orgs": [{"name": "o", "members": ["z"]}]}`, `member "z"`},
		{`{"users": [{"name": "a"}], "orgs": [{"name": "o", "members": ["o"]}]}`, `member "o"`},
		{`{"users": [], "admins": []}`, `line 1, column 15: unknown key "admins"`},
		{`[`, "line 1, column 2: not JSON"},
		{"{\"users\": [\n  {\"name\": \"a\",\n   \"tokens\": [{\"sha256\": 7}]}]}", `line 3, column 26: a token's sha256 must be a string`},
		{"{\"users\": [\n  {\"name\": \"a\", \"tokns\": []}]}", `line 2, column 17: unknown key "tokns" in a user (want name or tokens)`},
		{"{\"users\": [\n  {\"tokens\": []}]}", `line 2, column 3: a user has no "name"`},
		{"{\"users\": [{\"name\": \"a\"}],\n \"orgs\": [{\"name\": \"o\", \"members\": [\"a\", \"zed\"]}]}", `line 2, column 42: member "zed" of o is not a user`},
		{"{\"users\": {}}", `line 1, column 11: users must be an array`},
		{"{\"users\": []}\n{}", `line 2, column 1: more after the JSON value`},
		{"{\"users\": [],\n \"users\": []}", `line 2, column 2: key "users" given twice`},
		{"{\"users\": [\n  {\"name\": \"a\" \"tokens\": []}]}", `line 2, column 16: not JSON`},
	} {
		if _, err := ParseUsers([]byte(c.file)); err == nil || !strings.Contains(err.Error(), c.want) || !strings.HasPrefix(err.Error(), "users file") {
			t.Errorf("%s: %v, want an error with %q", c.file, err, c.want)
		}
	}
}
