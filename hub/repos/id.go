package repos

import (
	"fmt"
	"regexp"
	"strings"
)

// ID names a repository: its type ("model", "dataset" or "space") and
// namespace/name.
type ID struct {
	Type, NS, Name string
}

// String is "ns/name".
func (id ID) String() string { return id.NS + "/" + id.Name }

// Key is how CAS tokens and the store name the repo: "models/ns/name".
// Repository ids compare without case, as on the Hugging Face Hub: me/A
// and me/a are one repository.
func (id ID) Key() string { return strings.ToLower(id.Type + "s/" + id.NS + "/" + id.Name) }

// WebPrefix is the repo's path in web-style URLs: "ns/name" for models,
// "datasets/ns/name" and "spaces/ns/name" otherwise.
func (id ID) WebPrefix() string {
	if id.Type == "model" {
		return id.String()
	}
	return id.Type + "s/" + id.String()
}

// TypeOf maps "models"/"model" (and the others) to the singular type.
func TypeOf(s string) (string, bool) {
	switch strings.TrimSuffix(s, "s") {
	case "model", "dataset", "space":
		return strings.TrimSuffix(s, "s"), true
	}
	return "", false
}

// namePart is what a namespace or a repo name may be, as on the Hugging
// Face Hub: letters, digits, '-', '_' and '.', not starting with '-' or '.'.
var namePart = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,95}$`)

// ParseID checks a repository type and namespace/name.
func ParseID(typ, ns, name string) (ID, error) {
	t, ok := TypeOf(typ)
	if !ok {
		return ID{}, refuse(Invalid, "unknown repository type %q: want model, dataset or space", typ)
	}
	for _, p := range []string{ns, name} {
		if !namePart.MatchString(p) || strings.Contains(p, "..") || strings.Contains(p, "--") || strings.HasSuffix(p, ".git") {
			return ID{}, refuse(Invalid, "repository name %q is not namespace/name (each part: letters, digits, '-', '_', '.'; no '--' or '..'; at most 96 characters)", ns+"/"+name)
		}
	}
	if reservedNamespaces[strings.ToLower(ns)] {
		return ID{}, refuse(Invalid, "namespace %q is reserved: URLs under /%s/ lead elsewhere, so the repository's files could not be reached", ns, ns)
	}
	return ID{Type: t, NS: ns, Name: name}, nil
}

// ParseKey reads a Key ("models/ns/name").
func ParseKey(key string) (ID, error) {
	parts := strings.Split(key, "/")
	if len(parts) != 3 {
		return ID{}, refuse(Invalid, "repository key %q is not type/ns/name", key)
	}
	return ParseID(parts[0], parts[1], parts[2])
}

// reservedNamespaces are the namespaces whose URLs the server routes
// elsewhere: a model named datasets/x would have its resolve URLs taken by
// the dataset routes, /settings/tokens, /login and /logout are pages of
// the hub's own, and /wasm/ and /viewer/ are the shard viewer's, beside
// the hub under xetkit serve.
var reservedNamespaces = map[string]bool{"api": true, "models": true, "datasets": true, "spaces": true, "v1": true, "v2": true, "wasm": true,
	"settings": true, "login": true, "logout": true, "viewer": true}

// checkNamespace refuses a name that is no namespace.
func checkNamespace(kind, n string) error {
	if _, err := ParseID("model", n, "x"); err != nil || strings.Contains(n, "/") {
		return fmt.Errorf("%s name %q is not a namespace", kind, n)
	}
	return nil
}
