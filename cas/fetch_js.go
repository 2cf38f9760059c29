//go:build js && wasm

package cas

import (
	"context"
	"errors"
	"fmt"
	"io"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall/js"
	"unsafe"

	"github.com/xetkit/xetkit/internal/jsasync"
	"github.com/xetkit/xetkit/internal/jsx"
)

// FetchTransport is the Doer over the fetch API. net/http's
// own one under GOOS=js reads a request body with io.ReadAll (doubling
// slices up to twice the body, which WebAssembly memory then keeps), sends
// it as a Uint8Array and is switched off in Node. This one copies a body of
// known length straight into one Uint8Array and sends it wrapped in a
// Blob. Chromium feeds a Uint8Array body to its network service from the
// page's thread, the one that also runs Go (an upload's bottleneck: 15 %
// more of its time than a Blob in a 128 MiB upload), and a DevTools client
// that records request bodies, as Playwright's does, gets a copy of it
// (under 10 MB/s); a Blob's bytes go from the browser's own threads. It
// works wherever fetch exists.
type FetchTransport struct {
	// BlobOf, if set, is a JavaScript function (ptr, len) → Blob of that
	// span of this instance's memory: a body of bytes Go holds whole is
	// then sent without copying it into a JavaScript array first.
	BlobOf js.Value
}

// FetchError is a request that got no answer (fetch rejected).
type FetchError struct {
	url string
	msg string
}

func (e *FetchError) Error() string { return fmt.Sprintf("fetch %s: %s", e.url, e.msg) }

var (
	jsFetch           = js.Global().Get("fetch")
	jsHeaders         = js.Global().Get("Headers")
	jsAbortController = js.Global().Get("AbortController")
	jsBlob            = js.Global().Get("Blob")
	// jsHeaderLines is the loader's reader of Headers (headerOf).
	jsHeaderLines = js.Global().Get("xetkitHeaderLines")
	// ignoreRejection is a catch handler for promises whose failure does
	// not matter (cancelling a stream already ending).
	ignoreRejection = js.FuncOf(func(js.Value, []js.Value) any { return nil })
)

// defaultHTTP under GOOS=js is fetch.
func defaultHTTP() Doer { return &FetchTransport{} }

// Do sends req with fetch.
func (t *FetchTransport) Do(req *Request) (resp *Response, err error) {
	// It runs on the upload's goroutines, where a panic would end the
	// instance: a JavaScript exception (a header value fetch refuses)
	// becomes this request's error.
	defer func() {
		if r := recover(); r != nil {
			resp, err = nil, fmt.Errorf("fetch %s: %v", req.URL.Redacted(), r)
		}
	}()
	if jsFetch.Type() != js.TypeFunction {
		return nil, errors.New("this JavaScript environment has no fetch")
	}
	ctx := req.Context()
	ac := jsAbortController.New()
	opt := jsx.Object.New()
	opt.Set("method", req.Method)
	opt.Set("credentials", "same-origin")
	opt.Set("signal", ac.Get("signal"))
	headers := jsHeaders.New()
	for k, vs := range req.Header {
		for _, v := range vs {
			headers.Call("append", k, v)
		}
	}
	opt.Set("headers", headers)
	if req.Body != nil {
		body, err := t.body(req)
		req.Body.Close()
		if err != nil {
			return nil, err
		}
		if !body.IsUndefined() {
			opt.Set("body", body)
		}
	}
	url := req.URL.String()
	res, err := jsasync.Await(ctx, jsFetch.Invoke(url, opt))
	if err != nil {
		ac.Call("abort")
		if ctx.Err() != nil {
			return nil, err
		}
		return nil, &FetchError{url: req.URL.Redacted(), msg: err.Error()}
	}
	header := headerOf(res.Get("headers"))
	length := int64(-1)
	if n, err := strconv.ParseInt(header.Get("Content-Length"), 10, 64); err == nil && n >= 0 {
		length = n
	}
	status := res.Get("status").Int()
	var body io.ReadCloser = noBody
	if b := res.Get("body"); b.Type() == js.TypeObject && !b.IsNull() {
		body = newFetchBody(ctx, b, ac)
	}
	return &Response{StatusCode: status, Header: header, ContentLength: length, Body: body}, nil
}

// headerOf reads a response's Headers: in one string where the loader
// gives the function for it (wasm/runtime.js), else header by header.
func headerOf(h js.Value) Header {
	header := Header{}
	if jsHeaderLines.Type() == js.TypeFunction {
		for _, line := range strings.Split(jsHeaderLines.Invoke(h).String(), "\n") {
			if k, v, ok := strings.Cut(line, ": "); ok {
				header.Add(k, v)
			}
		}
		return header
	}
	it := h.Call("entries")
	for {
		n := it.Call("next")
		if n.Get("done").Bool() {
			break
		}
		kv := n.Get("value")
		header.Add(kv.Index(0).String(), kv.Index(1).String())
	}
	return header
}

// body returns the request body as a Blob (or a Uint8Array where there is
// no Blob). A body that holds its bytes whole (the CAS client's) is read
// straight out of Go's memory.
func (t *FetchTransport) body(req *Request) (js.Value, error) {
	if wb, ok := req.Body.(interface{ Bytes() []byte }); ok && t.BlobOf.Type() == js.TypeFunction {
		if b := wb.Bytes(); len(b) > 0 && int64(len(b)) == req.ContentLength {
			// The Blob copies the span before Go runs again, so the memory
			// cannot move or be reused under it.
			v := t.BlobOf.Invoke(uintptr(unsafe.Pointer(unsafe.SliceData(b))), len(b))
			runtime.KeepAlive(b)
			return v, nil
		}
	}
	body, err := bodyToJS(req)
	if err != nil || body.IsUndefined() || jsBlob.Type() != js.TypeFunction {
		return body, err
	}
	return jsBlob.New([]any{body}), nil
}

// bodyToJS copies a request body into one Uint8Array, through a small
// buffer when its length is known.
func bodyToJS(req *Request) (js.Value, error) {
	n := req.ContentLength
	if n <= 0 {
		b, err := io.ReadAll(req.Body)
		if err != nil || len(b) == 0 {
			return js.Undefined(), err
		}
		return jsx.Bytes(b), nil
	}
	out := jsx.Uint8Array.New(float64(n))
	buf := make([]byte, min(n, 1<<20))
	var off int64
	for off < n {
		k, err := req.Body.Read(buf[:min(int64(len(buf)), n-off)])
		if k > 0 {
			js.CopyBytesToJS(out.Call("subarray", float64(off), float64(off+int64(k))), buf[:k])
			off += int64(k)
		}
		if err == io.EOF {
			break
		}
		if err != nil {
			return js.Undefined(), err
		}
	}
	if off != n {
		return js.Undefined(), fmt.Errorf("request body has %d bytes, ContentLength says %d", off, n)
	}
	return out, nil
}

// fetchBody reads a response body from its stream reader.
type fetchBody struct {
	ctx    context.Context
	reader js.Value
	abort  js.Value
	// own is the ArrayBuffer a BYOB reader fills, read after read (each
	// read hands it back); undefined with a default reader, whose every
	// piece is a new array the JavaScript collector frees only later (a
	// large download then holds hundreds of MiB of them).
	own  js.Value
	rest []byte // of the last piece, not yet read
	err  error
}

// byobSize is the most one BYOB read asks for.
const byobSize = 1 << 20

// byobFree keeps the BYOB buffers of bodies read to their end for the
// next bodies: a download of thousands of pieces would otherwise leave a
// garbage buffer each, which the collector lets pile up (by tens of MiB).
var byobFree struct {
	sync.Mutex
	list []js.Value
}

// byobFreeMax is the most buffers byobFree keeps: more than a download's
// requests at once.
const byobFreeMax = 16

// takeBYOB returns a kept BYOB buffer, else a new one.
func takeBYOB() js.Value {
	byobFree.Lock()
	defer byobFree.Unlock()
	if n := len(byobFree.list); n > 0 {
		b := byobFree.list[n-1]
		byobFree.list = byobFree.list[:n-1]
		return b
	}
	return jsx.ArrayBuffer.New(byobSize)
}

// releaseOwn gives the body's BYOB buffer to byobFree, unless a read
// holds it (then it is detached: its length 0).
func (b *fetchBody) releaseOwn() {
	own := b.own
	b.own = js.Undefined()
	if own.IsUndefined() || own.Get("byteLength").Int() != byobSize {
		return
	}
	byobFree.Lock()
	defer byobFree.Unlock()
	if len(byobFree.list) < byobFreeMax {
		byobFree.list = append(byobFree.list, own)
	}
}

// newFetchBody reads stream with a BYOB reader where it is a byte stream
// (browsers and Node: fetch bodies are), else with a default reader.
func newFetchBody(ctx context.Context, stream, abort js.Value) *fetchBody {
	b := &fetchBody{ctx: ctx, abort: abort, own: js.Undefined()}
	func() {
		defer func() { recover() }() // getReader throws on a stream that is not a byte stream
		opt := jsx.Object.New()
		opt.Set("mode", "byob")
		b.reader = stream.Call("getReader", opt)
		b.own = takeBYOB()
	}()
	if b.own.IsUndefined() {
		b.reader = stream.Call("getReader")
	}
	return b
}

func (b *fetchBody) Read(p []byte) (int, error) {
	if !b.own.IsUndefined() {
		return b.readOwn(p)
	}
	if len(b.rest) > 0 {
		n := copy(p, b.rest)
		b.rest = b.rest[n:]
		return n, nil
	}
	if b.err != nil {
		return 0, b.err
	}
	v, err := jsasync.Await(b.ctx, b.reader.Call("read"))
	if err != nil {
		b.abort.Call("abort")
		b.err = fmt.Errorf("reading the answer: %w", err)
		return 0, b.err
	}
	if v.Get("done").Bool() {
		b.err = io.EOF
		return 0, io.EOF
	}
	u := v.Get("value")
	n := u.Get("length").Int()
	jsx.Held(n)
	jsx.Collect()
	if n <= len(p) {
		return js.CopyBytesToGo(p, u), nil
	}
	piece := make([]byte, n)
	js.CopyBytesToGo(piece, u)
	k := copy(p, piece)
	b.rest = piece[k:]
	return k, nil
}

// readOwn reads into p through the BYOB reader's buffer.
func (b *fetchBody) readOwn(p []byte) (int, error) {
	if b.err != nil {
		return 0, b.err
	}
	if len(p) == 0 {
		return 0, nil
	}
	view := jsx.Uint8Array.New(b.own, 0, min(len(p), byobSize))
	v, err := jsasync.Await(b.ctx, b.reader.Call("read", view))
	if err != nil {
		b.abort.Call("abort")
		b.err = fmt.Errorf("reading the answer: %w", err)
		return 0, b.err
	}
	u := v.Get("value")
	if !u.IsUndefined() {
		b.own = u.Get("buffer") // the same memory, handed back
	}
	if v.Get("done").Bool() || u.IsUndefined() {
		b.err = io.EOF
		if !u.IsUndefined() {
			b.releaseOwn()
		}
		return 0, io.EOF
	}
	return js.CopyBytesToGo(p, u), nil
}

func (b *fetchBody) Close() error {
	if b.err == nil {
		b.err = errors.New("read after Close")
		b.reader.Call("cancel").Call("catch", ignoreRejection)
		b.releaseOwn() // no read holds it
	}
	return nil
}
