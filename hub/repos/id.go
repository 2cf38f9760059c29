package repos

import (
	"fmt"
	"regexp"
	"strings"
)

// ID names a repository: its type ("model", "dataset" or "space") and
// namespace/name; or, of type "bucket", a Storage Bucket (buckets.go).
type ID struct {
	Type, NS, Name string
}

// String is "ns/name".
func (id ID) String() string { return id.NS + "/" + id.Name }

// Key is how CAS tokens and the store name the repo: "models/ns/name"
// ("buckets/ns/name" for a bucket).
// Repository ids compare without case, as on the Hugging Face Hub: me/A
// and me/a are one repository.
func (id ID) Key() string { return strings.ToLower(id.Type + "s/" + id.NS + "/" + id.Name) }

// WebPrefix is the repo's path in web-style URLs: "ns/name" for models,
// "datasets/ns/name", "spaces/ns/name" and "buckets/ns/name" otherwise.
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
	if err := checkName("repository", ns, name); err != nil {
		return ID{}, err
	}
	return ID{Type: t, NS: ns, Name: name}, nil
}

// checkName refuses a namespace/name no repository or bucket (what) may
// have.
func checkName(what, ns, name string) error {
	for _, p := range []string{ns, name} {
		if !namePart.MatchString(p) || strings.Contains(p, "..") || strings.Contains(p, "--") || strings.HasSuffix(p, ".git") {
			return refuse(Invalid, "%s name %q is not namespace/name (each part: letters, digits, '-', '_', '.'; no '--' or '..'; at most 96 characters)", what, ns+"/"+name)
		}
	}
	if reservedNamespaces[strings.ToLower(ns)] {
		return refuse(Invalid, "namespace %q is reserved: URLs under /%s/ lead elsewhere, so the %s's files could not be reached", ns, ns, what)
	}
	return nil
}

// ParseBucketID checks a bucket's namespace/name, which follow the rules
// of a repository's.
func ParseBucketID(ns, name string) (ID, error) {
	if err := checkName("bucket", ns, name); err != nil {
		return ID{}, err
	}
	return ID{Type: BucketType, NS: ns, Name: name}, nil
}

// ParseAnyID reads the id of a repository (typ model, dataset or space,
// or their plurals) or, for typ "bucket", a bucket: "ns/name".
func ParseAnyID(typ, id string) (ID, error) {
	ns, name, ok := strings.Cut(id, "/")
	if !ok || strings.Contains(name, "/") {
		return ID{}, refuse(Invalid, "%q is not namespace/name", id)
	}
	if strings.TrimSuffix(typ, "s") == BucketType {
		return ParseBucketID(ns, name)
	}
	return ParseID(typ, ns, name)
}

// ParseKey reads a Key ("models/ns/name", "buckets/ns/name").
func ParseKey(key string) (ID, error) {
	parts := strings.Split(key, "/")
	if len(parts) != 3 {
		return ID{}, refuse(Invalid, "repository key %q is not type/ns/name", key)
	}
	if parts[0] == BucketType+"s" {
		return ParseBucketID(parts[1], parts[2])
	}
	return ParseID(parts[0], parts[1], parts[2])
}

// reservedNamespaces are the namespaces whose URLs the server routes
// elsewhere: a model named datasets/x would have its resolve URLs taken by
// the dataset routes, /buckets/ are the Storage Buckets', /settings/tokens,
// /login and /logout are pages of the hub's own, and /wasm/ and /viewer/ are the shard viewer's, beside
// the hub under xetkit serve.
var reservedNamespaces = map[string]bool{"api": true, "models": true, "datasets": true, "spaces": true, "buckets": true, "v1": true, "v2": true, "wasm": true,
	"settings": true, "login": true, "logout": true, "viewer": true}

// checkNamespace refuses a name that is no namespace.
func checkNamespace(kind, n string) error {
	if _, err := ParseID("model", n, "x"); err != nil || strings.Contains(n, "/") {
		return fmt.Errorf("%s name %q is not a namespace", kind, n)
	}
	return nil
}
