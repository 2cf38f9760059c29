package casserver

import "sync"

// uploadSlots bounds the upload bodies read at once: max in all, and at
// most a user's share per uploader, so that one user's uploads (slow or
// stalled bodies among them) always leave slots for everyone else's.
type uploadSlots struct {
	mu      sync.Mutex
	max     int
	perUser int
	n       int
	byUser  map[string]int
}

// newUploadSlots returns n slots of which one user takes at most three
// quarters (and at least one).
func newUploadSlots(n int) *uploadSlots {
	return &uploadSlots{max: n, perUser: max(1, n*3/4), byUser: map[string]int{}}
}

// take takes a slot for user, or reports false when none is free to them:
// the reason for the refusal in why.
func (s *uploadSlots) take(user string) (ok bool, why string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	switch {
	case s.n >= s.max:
		return false, "the hub is reading as many uploads as it reads at once"
	case s.byUser[user] >= s.perUser:
		return false, "this user's uploads hold their share of the hub's upload slots"
	}
	s.n++
	s.byUser[user]++
	return true, ""
}

// give gives back a slot user took.
func (s *uploadSlots) give(user string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.n--
	if s.byUser[user]--; s.byUser[user] == 0 {
		delete(s.byUser, user)
	}
}

// reading is how many slots are taken.
func (s *uploadSlots) reading() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.n
}
