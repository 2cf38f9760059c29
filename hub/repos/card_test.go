package repos

import (
	"reflect"
	"testing"
)

// A README's metadata block is read when it is a closed YAML mapping;
// anything else gives no card.
func TestFrontMatter(t *testing.T) {
	for _, c := range []struct {
		readme string
		want   map[string]any
	}{
		{"---\nlicense: mit\ntags:\n- a\n---\n# Title\n", map[string]any{"license": "mit", "tags": []any{"a"}}},
		{"---\r\nlicense: mit\r\n---\r\n", map[string]any{"license": "mit"}},
		{"---\nlicense: mit\n---", map[string]any{"license": "mit"}},
		{"---\nlicense: mit\n", nil},               // never closed
		{"# Title\n---\nlicense: mit\n---\n", nil}, // not on the first line
		{"---\n- a list\n---\n", nil},              // not a mapping
		{"---\nlicense: [mit\n---\n", nil},         // not YAML
		{"---\n? [a, b]\n: c\n---\n", nil},         // a key JSON cannot hold
		{"", nil},
	} {
		if got := frontMatter([]byte(c.readme)); !reflect.DeepEqual(got, c.want) {
			t.Errorf("%q: %#v, want %#v", c.readme, got, c.want)
		}
	}
	tags := cardTags(map[string]any{"license": "mit", "library_name": "transformers", "tags": []any{"b", 3, "a"}})
	if want := []string{"a", "b", "license:mit", "transformers"}; !reflect.DeepEqual(tags, want) {
		t.Errorf("cardTags: %q, want %q", tags, want)
	}
}

// A README splits into its metadata and the Markdown after it; one whose
// block does not parse is all Markdown.
func TestSplitCard(t *testing.T) {
	for _, c := range []struct{ in, license, body string }{
		{"---\nlicense: mit\n---\n# Title\n", "mit", "# Title\n"},
		{"---\r\nlicense: mit\r\n---", "mit", ""},
		{"# no card\n", "", "# no card\n"},
		{"---\n[unclosed\n---\nbody\n", "", "---\n[unclosed\n---\nbody\n"},
	} {
		card, body := SplitCard([]byte(c.in))
		if got, _ := card["license"].(string); got != c.license || string(body) != c.body {
			t.Errorf("%q: license %q body %q, want %q %q", c.in, got, body, c.license, c.body)
		}
	}
}
