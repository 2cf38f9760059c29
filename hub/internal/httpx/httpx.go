// Package httpx holds what both layers of xetkit serve are built on and
// answer with: their common configuration, JSON bodies, errors in the
// Hub's shape, user tokens and the 401 that asks for one.
package httpx

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/xetkit/xetkit/hub/internal/keys"
	"github.com/xetkit/xetkit/hub/internal/sweep"
	"github.com/xetkit/xetkit/hub/store"
)

// Base is what both layers are built on, the same for each; every field
// is required.
type Base struct {
	Store   store.Store
	Key     *keys.Key                  // signs what the layer hands out (tokens, URLs)
	BaseURL func(*http.Request) string // the base URL answers are built on
	Answer  Answer                     // how errors are answered and counted
	Now     func() time.Time           // the clock
}

// Answer writes errors as the Hub does ({"error": message} and the
// X-Error-Message header huggingface_hub shows), counting the 4xx ones.
type Answer struct {
	Rejected *atomic.Int64 // requests answered with a 4xx
}

// Fail answers with status and a JSON {"error": message}.
func (a Answer) Fail(w http.ResponseWriter, status int, format string, args ...any) {
	a.FailWith(w, status, nil, format, args...)
}

// FailCode answers like Fail with the X-Error-Code a Hub client branches on.
func (a Answer) FailCode(w http.ResponseWriter, status int, code, format string, args ...any) {
	w.Header().Set("X-Error-Code", code)
	a.Fail(w, status, format, args...)
}

// FailWith answers like Fail, with more fields in the JSON body.
func (a Answer) FailWith(w http.ResponseWriter, status int, fields map[string]string, format string, args ...any) {
	if status >= 400 && status < 500 && a.Rejected != nil {
		a.Rejected.Add(1)
	}
	msg := fmt.Sprintf(format, args...)
	// huggingface_hub shows X-Error-Message; a header holds one line.
	w.Header().Set("X-Error-Message", strings.NewReplacer("\r", " ", "\n", " ").Replace(msg))
	body := map[string]string{"error": msg}
	for k, v := range fields {
		body[k] = v
	}
	WriteJSON(w, status, body)
}

// WriteJSON answers with status and v as JSON.
func WriteJSON(w http.ResponseWriter, status int, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(append(b, '\n'))
}

// Bearer returns the token of an "Authorization: Bearer" header.
func Bearer(r *http.Request) (string, bool) {
	a := r.Header.Get("Authorization")
	if len(a) < 7 || !strings.EqualFold(a[:7], "bearer ") {
		return "", false
	}
	return strings.TrimSpace(a[7:]), true
}

// Refusal is a request whose content the hub refuses (answered 400), as
// opposed to a failure of its own.
type Refusal struct{ Msg string }

func (e *Refusal) Error() string { return e.Msg }

// FailStore answers a failed store write: 507 when the disk is full (the
// client should not retry: nothing will change soon), else 500.
func (a Answer) FailStore(w http.ResponseWriter, what string, err error) {
	status := http.StatusInternalServerError
	switch {
	case errors.Is(err, syscall.ENOSPC) || errors.Is(err, syscall.EDQUOT):
		status = http.StatusInsufficientStorage
	case errors.Is(err, store.ErrSwapped):
		// Another request (here or on another replica) changed the same
		// record first: the change can be sent again.
		status = http.StatusConflict
	case errors.Is(err, sweep.ErrSweeping):
		// Store gc is deleting: the write can be sent again after it.
		status = http.StatusServiceUnavailable
		w.Header().Set("Retry-After", strconv.Itoa(sweep.RetryAfter))
	}
	a.Fail(w, status, "%s: %v", what, err)
}

// FailUpload answers a failed upload: 400 for a Refusal, else as
// FailStore.
func (a Answer) FailUpload(w http.ResponseWriter, what string, err error) {
	var re *Refusal
	if errors.As(err, &re) {
		a.Fail(w, http.StatusBadRequest, "%s", re.Msg)
		return
	}
	a.FailStore(w, what, err)
}

// UserToken returns the user token of r: an "Authorization: Bearer"
// header's, or the password of HTTP Basic, as git and git-lfs send it
// from git's credential helper (the user name is ignored).
func UserToken(r *http.Request) (string, bool) {
	if t, ok := Bearer(r); ok {
		return t, true
	}
	if _, pass, ok := r.BasicAuth(); ok && pass != "" {
		return pass, true
	}
	return "", false
}

// GitChallenge is the WWW-Authenticate of a 401 to git and git-lfs:
// Basic, so that they ask git's credential helper for a token, saying
// where the token goes.
const GitChallenge = `Basic realm="xetkit hub: your hf_… token as the password"`

// Unauthorized answers 401 with why, and challenge as its
// WWW-Authenticate: the scheme and realm under which the client is to
// send a token (GitChallenge for git).
func (a Answer) Unauthorized(w http.ResponseWriter, challenge, why string) {
	w.Header().Set("WWW-Authenticate", challenge)
	a.Fail(w, http.StatusUnauthorized, "%s", why)
}

// Caller is who the user token of r (see UserToken) says sent it, as
// identify (a front's repository service) knows the token: nil for a
// request without one. A token that is present but unknown is answered
// as Unauthorized with challenge and unknown, and ok is false: the
// request is not served as anybody's.
func Caller[U any](w http.ResponseWriter, r *http.Request, a Answer, identify func(tok string, present bool) *U, challenge, unknown string) (u *U, ok bool) {
	tok, present := UserToken(r)
	if u = identify(tok, present); u == nil && present {
		a.Unauthorized(w, challenge, unknown)
		return nil, false
	}
	return u, true
}
