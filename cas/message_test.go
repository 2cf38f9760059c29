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

// doerFunc is a Doer written as a function.
type doerFunc func(*Request) (*Response, error)

func (f doerFunc) Do(r *Request) (*Response, error) { return f(r) }

// A Doer need fill in only the status, header and body it has: the client
// gives the handlers the request answered and an empty body.
func TestBareDoerAnswers(t *testing.T) {
	c := &Client{HTTP: doerFunc(func(r *Request) (*Response, error) {
		if r.Header.Get("Authorization") != "Bearer u" || r.Method != "POST" || r.ContentLength != 2 {
			t.Errorf("request %s %v, %d bytes", r.Method, r.Header, r.ContentLength)
		}
		return &Response{StatusCode: 204}, nil
	})}
	err := c.HubCall(context.Background(), "op", "POST", "http://h/x", "", []byte("ab"), Header{"Authorization": {"Bearer u"}}, func(resp *Response) error {
		if resp.Request == nil || resp.Request.URL.Path != "/x" {
			t.Errorf("answer's request %+v", resp.Request)
		}
		b, err := io.ReadAll(resp.Body)
		if err != nil || len(b) != 0 {
			t.Errorf("body %q, %v", b, err)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
