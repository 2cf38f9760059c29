package pages_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"testing"

	"github.com/xetkit/xetkit/hub"
)

// BenchmarkPages times the hub's side of the pages bench/pages-chromium.mjs
// opens in a browser: a repository page, and the first page (500
// entries) of a folder of 20,000 files, rendered and sent over loopback.
func BenchmarkPages(b *testing.B) {
	s := newSite(b, hub.Config{})
	s.api("POST", "/api/repos/create", aliceToken, map[string]any{"type": "model", "name": "many", "organization": "alice"})
	var body bytes.Buffer
	enc := json.NewEncoder(&body)
	enc.Encode(map[string]any{"key": "header", "value": map[string]any{"summary": "20,000 files"}})
	enc.Encode(map[string]any{"key": "file", "value": map[string]any{"path": "README.md", "content": "# many\n", "encoding": "utf-8"}})
	for i := range 20_000 {
		enc.Encode(map[string]any{"key": "file", "value": map[string]any{"path": fmt.Sprintf("data/f%05d.txt", i), "content": fmt.Sprint(i), "encoding": "utf-8"}})
	}
	s.api("POST", "/api/models/alice/many/commit/main", aliceToken, body.Bytes())
	for _, c := range []struct{ name, path string }{{"repository", "/alice/many"}, {"folder-20000", "/alice/many/tree/main/data"}} {
		b.Run(c.name, func(b *testing.B) {
			var n int64
			for range b.N {
				resp, err := http.Get(s.srv.URL + c.path)
				if err != nil || resp.StatusCode != 200 {
					b.Fatal(err, resp.StatusCode)
				}
				m, _ := io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				n = m
			}
			b.ReportMetric(float64(n), "bytes/page")
		})
	}
}
