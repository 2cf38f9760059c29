package repos

import (
	"errors"
	"fmt"
)

// Kind is what kind of refusal an Error is; each front maps it to its own
// answer (the Hub API to an HTTP status, git to its messages).
type Kind int

// The kinds of Error.
const (
	Invalid      Kind = iota + 1 // the request is malformed or breaks a rule of the hub
	Unauthorized                 // it needs a user token and has none
	Forbidden                    // the user may not do it
	NotFound                     // what it names is not there, or not for this user to see
	Conflict                     // it conflicts with what is there
	Precondition                 // what it builds on changed since (a parent commit, a status)
	TooMany                      // the user has done this as often as the hub allows
	// Moved is a read of a repository or bucket by a name it was moved
	// from: Error.MovedTo says where it is now, which a front answers as
	// a redirect.
	Moved
)

// Error is a request the service refuses. Code, where set, is the code
// Hub clients branch on (X-Error-Code): RepoNotFound, RevisionNotFound,
// EntryNotFound.
type Error struct {
	Kind Kind
	Code string
	Msg  string
	// MovedTo is where a Moved repository or bucket is now, MovedFrom
	// the name it was asked for by.
	MovedTo   *ID
	MovedFrom ID
}

func (e *Error) Error() string { return e.Msg }

// Is makes errors.Is(err, ErrX) match an Error of that kind and code.
func (e *Error) Is(target error) bool {
	t, ok := target.(*Error)
	return ok && t.Msg == "" && t.Kind == e.Kind && (t.Code == "" || t.Code == e.Code)
}

// Sentinels for errors.Is: any Error of the kind (and code).
var (
	ErrRepoNotFound     = &Error{Kind: NotFound, Code: CodeRepoNotFound}
	ErrRevisionNotFound = &Error{Kind: NotFound, Code: CodeRevisionNotFound}
	ErrEntryNotFound    = &Error{Kind: NotFound, Code: CodeEntryNotFound}
	ErrConflict         = &Error{Kind: Conflict}
)

// Error codes a Hub client branches on (the X-Error-Code header).
const (
	CodeRepoNotFound     = "RepoNotFound"
	CodeRevisionNotFound = "RevisionNotFound"
	CodeEntryNotFound    = "EntryNotFound"
)

// refuse returns an Error of kind k.
func refuse(k Kind, format string, args ...any) error {
	return &Error{Kind: k, Msg: fmt.Sprintf(format, args...)}
}

// missing returns a NotFound Error with a code.
func missing(code, format string, args ...any) error {
	return &Error{Kind: NotFound, Code: code, Msg: fmt.Sprintf(format, args...)}
}

// noRepo is the miss of repository id.
func noRepo(id ID) error {
	return missing(CodeRepoNotFound, "%s repository %s not found", id.Type, id)
}

// noRevision is the miss of revision rev of id.
func noRevision(id ID, rev string) error {
	return missing(CodeRevisionNotFound, "revision %s not found in %s %s", rev, id.Type, id)
}

// As returns err as an *Error, or nil.
func As(err error) *Error {
	var e *Error
	if errors.As(err, &e) {
		return e
	}
	return nil
}
