//go:build js && wasm

package resume

import (
	"context"
	"errors"
	"fmt"
	"syscall/js"
	"time"

	"github.com/xetkit/xetkit/internal/jsasync"
	"github.com/xetkit/xetkit/internal/jsx"
)

// JS is a Backend whose records a JavaScript object keeps: in Node a
// folder (the package's node.js), in a browser the Origin Private File
// System or IndexedDB. V has the methods list() → [{scope, name, size}],
// read(scope, name) → Uint8Array or null, write(scope, name, bytes),
// remove(scope, name) and, if it can, rename(scope, from, to); each may
// return a promise, and write must resolve only once the record is durable. A promise may also carry done(), a
// check that returns true once the call has succeeded (a write's record
// is durable), which works while the event loop is not turning (the
// browser store's worker marks its calls done in shared memory); a call
// whose done() says so returns before its promise settles. Its methods
// block until then, so they must not be called on the event loop's own
// goroutine (the pipeline never does).
type JS struct{ V js.Value }

// call invokes a method of V and awaits what it returns: the promise's
// value, or, where the promise carries done() (see JS), nothing once
// done() says the call succeeded.
func (b JS) call(method string, args ...any) (v js.Value, err error) {
	defer func() {
		if r := recover(); r != nil { // a method that throws, or is missing
			err = fmt.Errorf("upload state %s: %v", method, r)
		}
	}()
	r := b.V.Call(method, args...)
	p := js.Global().Get("Promise").Call("resolve", r)
	if done := doneOf(r); done.Type() == js.TypeFunction {
		err = awaitDone(p, done)
	} else {
		v, err = jsasync.Await(context.Background(), p)
	}
	if err != nil {
		err = fmt.Errorf("upload state %s: %w", method, err)
	}
	return v, err
}

// doneOf returns the done() a method's result carries, or undefined (a
// method may return a plain value, undefined included).
func doneOf(r js.Value) js.Value {
	if r.Type() != js.TypeObject {
		return js.Undefined()
	}
	return r.Get("done")
}

// donePoll is how often awaitDone asks done().
const donePoll = time.Millisecond

// awaitDone waits until the promise p settles or done() says the call
// succeeded, whichever comes first. On a page busy uploading, a promise
// settles only when the event loop next turns (100-250 ms apart): that
// long a xorb would wait for its record. done() reads a mark the store's
// worker sets the moment the record is written. It is asked after a
// sleep, never in a loop, so the event loop still turns when Go is idle.
func awaitDone(p, done js.Value) error {
	settled := make(chan error, 1)
	jsx.Then(p, func(_ js.Value, err error) { settled <- err })
	t := time.NewTicker(donePoll)
	defer t.Stop()
	for {
		select {
		case err := <-settled:
			return err
		case <-t.C:
			if done.Invoke().Truthy() {
				return nil
			}
		}
	}
}

// List returns the records V lists.
func (b JS) List() ([]Entry, error) {
	v, err := b.call("list")
	if err != nil {
		return nil, err
	}
	if v.Type() != js.TypeObject || v.Get("length").Type() != js.TypeNumber {
		return nil, fmt.Errorf("upload state list: not an array")
	}
	out := make([]Entry, 0, v.Length())
	for i := range v.Length() {
		e := v.Index(i)
		s, n, size := e.Get("scope"), e.Get("name"), e.Get("size")
		if s.Type() != js.TypeString || n.Type() != js.TypeString || size.Type() != js.TypeNumber || !(size.Float() >= 0) {
			continue
		}
		if checkName(s.String()) != nil || checkName(n.String()) != nil {
			continue
		}
		out = append(out, Entry{Scope: s.String(), Name: n.String(), Size: int64(size.Float())})
	}
	return out, nil
}

// Read returns a record's bytes.
func (b JS) Read(scope, name string) ([]byte, error) {
	v, err := b.call("read", scope, name)
	if err != nil {
		return nil, err
	}
	if v.IsNull() || v.IsUndefined() {
		return nil, ErrNotFound
	}
	if !v.InstanceOf(jsx.Uint8Array) {
		return nil, fmt.Errorf("upload state read: not a Uint8Array")
	}
	return jsx.CopyInto(nil, v), nil
}

// Write stores a record; V's write resolves once it is durable.
func (b JS) Write(scope, name string, data []byte) error {
	if err := checkName(scope); err != nil {
		return err
	}
	if err := checkName(name); err != nil {
		return err
	}
	_, err := b.call("write", scope, name, jsx.Bytes(data))
	return err
}

// Rename moves a record to another name, where V has rename(scope,
// from, to).
func (b JS) Rename(scope, from, to string) error {
	if b.V.Get("rename").Type() != js.TypeFunction {
		return errors.New("upload state: no rename")
	}
	if err := checkName(to); err != nil {
		return err
	}
	_, err := b.call("rename", scope, from, to)
	return err
}

// Remove deletes a record.
func (b JS) Remove(scope, name string) error {
	_, err := b.call("remove", scope, name)
	return err
}

// OpenJS opens the State of repo kept by the JavaScript object v (see
// JS), telling the console of the records it had to ignore; nil when v is
// not an object (the caller keeps no state).
func OpenJS(v js.Value, repo Repo) *State {
	if v.Type() != js.TypeObject {
		return nil
	}
	return Open(JS{V: v}, Scope(repo.Hub, repo.Type, repo.Name), Options{Repo: &repo, Warn: func(msg string) {
		js.Global().Get("console").Call("warn", "xetkit: "+msg)
	}})
}
