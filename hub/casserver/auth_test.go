package casserver

import (
	"strings"
	"testing"
	"time"

	"github.com/xetkit/xetkit/hub/internal/httpx"
	"github.com/xetkit/xetkit/hub/internal/keys"
)

// Only tokens this hub signed, unexpired, are accepted, whatever the input.
func FuzzParseToken(f *testing.F) {
	key, err := keys.New()
	if err != nil {
		f.Fatal(err)
	}
	h := &Server{cfg: Config{Base: httpx.Base{Key: key, Now: func() time.Time { return time.Unix(1000, 0) }}}}
	good := h.issueToken(tokenClaims{scope: scopeWrite, repo: "models/a/b", exp: 2000})
	f.Add(good)
	f.Add(h.issueToken(tokenClaims{scope: scopeRead, repo: "x", exp: 10}))
	f.Add("xk1.")
	f.Add("xk1.a.b")
	// Go's base64 skips CR and LF: the issued token with a line break
	// inside must still be refused.
	dot := strings.LastIndexByte(good, '.')
	f.Add(good[:dot+3] + "\r\n" + good[dot+3:])
	f.Add(good[:8] + "\n" + good[8:])
	f.Fuzz(func(t *testing.T, tok string) {
		c, msg := h.parseToken(tok)
		if msg == "" && (tok != good && !strings.HasPrefix(tok, tokenPrefix) || c.exp <= 1000) {
			t.Fatalf("%q accepted: %+v", tok, c)
		}
		if msg == "" && tok != good {
			// Another signed payload would need the secret: only the exact
			// token issued above verifies.
			t.Fatalf("%q accepted but was never issued", tok)
		}
	})
}
