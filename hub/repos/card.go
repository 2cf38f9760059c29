package repos

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"sort"

	"gopkg.in/yaml.v3"

	"github.com/xetkit/xetkit/hub/store"
	"github.com/xetkit/xetkit/xethash"
)

// maxCardSize bounds the README a repo info reads its metadata from.
const maxCardSize = 1 << 20

// cardData is the metadata block of the README.md at commit cid: the YAML
// between a first line "---" and the next line "---", as a JSON object.
// A repo without one, or whose block is not a YAML mapping (or is larger
// than maxCardSize), has none (nil), as the Hub shows a card it cannot
// read; only failures to read the store are errors.
func (s *Service) cardData(c *Commit) (map[string]any, error) {
	e, ok, err := s.entry(c, "README.md")
	if err != nil || !ok || e.Size > maxCardSize {
		return nil, err
	}
	var b []byte
	if e.Xet == "" {
		b, err = store.Read(s.store, store.Blobs, e.SHA256)
	} else {
		var f xethash.Hash
		if f, err = xethash.Parse(e.Xet); err == nil {
			var content io.ReaderAt
			if content, _, err = s.cas.Open(f); err == nil {
				b = make([]byte, e.Size)
				_, err = content.ReadAt(b, 0)
				if err == io.EOF {
					err = nil
				}
			}
		}
	}
	if err != nil {
		return nil, fmt.Errorf("README.md: %w", err)
	}
	return frontMatter(b), nil
}

// frontMatter parses a README's metadata block, or returns nil.
func frontMatter(b []byte) map[string]any {
	card, _ := SplitCard(b)
	return card
}

// SplitCard cuts a README into its metadata block (the YAML between a
// first line "---" and the next line "---", as a JSON object; nil when
// there is none or it is not a mapping JSON can hold) and the Markdown
// after it (all of b when the block does not parse).
func SplitCard(b []byte) (map[string]any, []byte) {
	b = bytes.ReplaceAll(b, []byte("\r\n"), []byte("\n"))
	rest, ok := bytes.CutPrefix(b, []byte("---\n"))
	if !ok {
		return nil, b
	}
	end, after := bytes.Index(rest, []byte("\n---\n")), 5
	if end < 0 {
		if !bytes.HasSuffix(rest, []byte("\n---")) {
			return nil, b
		}
		end, after = len(rest)-4, 4
	}
	var card map[string]any
	if err := yaml.Unmarshal(rest[:end+1], &card); err != nil || card == nil {
		return nil, b
	}
	if _, err := json.Marshal(card); err != nil {
		return nil, b // keys JSON cannot hold (a mapping keyed by lists)
	}
	return card, rest[end+after:]
}

// cardTags are the tags a repo info shows for a card, as the Hub derives
// them: the card's tags, its library and "license:" its license.
func cardTags(card map[string]any) []string {
	tags := []string{}
	add := func(v any, prefix string) {
		switch v := v.(type) {
		case string:
			tags = append(tags, prefix+v)
		case []any:
			for _, x := range v {
				if s, ok := x.(string); ok {
					tags = append(tags, prefix+s)
				}
			}
		}
	}
	add(card["library_name"], "")
	add(card["tags"], "")
	add(card["license"], "license:")
	sort.Strings(tags)
	return tags
}
