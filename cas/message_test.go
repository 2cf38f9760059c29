package cas

import (
	"bytes"
	"context"
	"io"
	"strings"
	"testing"
)

func TestHeaderNames(t *testing.T) {
	for in, want := range map[string]string{
		"content-length": "Content-Length",
		"X-ERROR-CODE":   "X-Error-Code",
		"range":          "Range",
		"x-xet-hash":     "X-Xet-Hash",
		"Accept":         "Accept",
		"-a-":            "-A-",
		"bad name":       "bad name", // not a header name: left as it is
		"ünicode":        "ünicode",
	} {
		if got := canonicalKey(in); got != want {
			t.Errorf("canonicalKey(%q) = %q, want %q", in, got, want)
		}
	}
	h := Header{}
	h.Add("x-linked-size", "1")
	h.Add("X-Linked-Size", "2")
	h.Set("etag", `"a"`)
	if h.Get("X-LINKED-SIZE") != "1" || len(h["X-Linked-Size"]) != 2 || h.Get("ETag") != `"a"` || h["Etag"] == nil || h.Get("missing") != "" {
		t.Fatalf("header %v", h)
	}
}

func TestNewRequestBodies(t *testing.T) {
	for _, c := range []struct {
		name   string
		body   io.Reader
		length int64
		none   bool
	}{
		{"nil", nil, 0, true},
		{"empty bytes", bytes.NewReader(nil), 0, true},
		{"bytes", bytes.NewReader([]byte("abc")), 3, false},
		{"buffer", bytes.NewBufferString("abcd"), 4, false},
		{"string", strings.NewReader("ab"), 2, false},
		{"stream", io.MultiReader(strings.NewReader("x")), -1, false},
	} {
		r, err := NewRequest(context.Background(), "POST", "http://h/p?q=1", c.body)
		if err != nil {
			t.Fatal(err)
		}
		if (r.Body == nil) != c.none || (!c.none && r.ContentLength != c.length) {
			t.Errorf("%s: body %v, length %d; want none %v, length %d", c.name, r.Body, r.ContentLength, c.none, c.length)
		}
		// A body held in memory can be had again (a redirect resends it),
		// whole however much of it was read.
		if c.length > 0 {
			first, _ := io.ReadAll(r.Body)
			again, err := r.GetBody()
			if err != nil {
				t.Fatal(err)
			}
			if b, _ := io.ReadAll(again); !bytes.Equal(b, first) || int64(len(b)) != c.length {
				t.Errorf("%s: GetBody gave %q after %q", c.name, b, first)
			}
		} else if r.GetBody != nil && c.length == 0 {
			t.Errorf("%s: no body, but a GetBody", c.name)
		}
		if r.URL.Host != "h" || r.URL.RawQuery != "q=1" || r.Header == nil || r.Context() == nil {
			t.Errorf("%s: request %+v", c.name, r)
		}
	}
	if _, err := NewRequest(context.Background(), "GET", "http://h/%zz", nil); err == nil {
		t.Error("a URL that does not parse made a request")
	}
}
