package cas

import (
	"context"
	"testing"
)

// The download buffer's rules: a body begins when its bytes fit, the
// buffer is empty or the writer waits for its job; else it waits while the
// writer's job will be done without another request, and goes at once
// when it will not (that request may need the place the body holds).
func TestBufferLetsABodyBegin(t *testing.T) {
	const limit = 10
	for _, tc := range []struct {
		name string
		held int64
		want string // the writer's job: "self", "moving", "finished", "stalled", "" (none yet)
		fits bool
	}{
		{"room for it", 4, "moving", true},
		{"an empty buffer, even for a job larger than it", 0, "moving", true},
		{"no room, the writer's job moving", 8, "moving", false},
		{"no room, the writer's job done", 8, "finished", false},
		{"no room, but the writer waits for it", 8, "self", true},
		{"no room, the writer's job needs another request", 8, "stalled", true},
		{"no room, the writer waits for nothing yet", 8, "", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := newBuffer(limit)
			b.held = tc.held
			j := &job{seq: 2, bytes: 6}
			switch tc.want {
			case "self":
				b.want = j
			case "moving":
				b.want = &job{seq: 1, moving: true}
			case "finished":
				b.want = &job{seq: 1, finished: true}
			case "stalled":
				b.want = &job{seq: 1, room: true}
			}
			if got := b.fits(j); got != tc.fits {
				t.Fatalf("fits = %v, want %v", got, tc.fits)
			}
		})
	}
}

// A body that waits for room begins once the writer has written a job, or
// once the writer's job stalls; its bytes then move from the requested to
// the held ones, once however many bodies the job has.
func TestBufferBodyWaitsForRoom(t *testing.T) {
	ctx := context.Background()
	for _, unblock := range []string{"written", "stalled"} {
		t.Run(unblock, func(t *testing.T) {
			b := newBuffer(10)
			first, later := &job{seq: 0, bytes: 8}, &job{seq: 1, bytes: 6}
			b.waitFor(first)
			for _, step := range []func() error{
				func() error { return b.ask(ctx, first) },
				func() error { return b.begin(ctx, first) },
				func() error { return b.ask(ctx, later) },
			} {
				if err := step(); err != nil {
					t.Fatal(err)
				}
			}
			began := make(chan error)
			go func() { began <- b.begin(ctx, later) }()
			// It waits (TestBufferLetsABodyBegin): let it through.
			if unblock == "written" {
				b.finish(first)
				b.release(first)
			} else {
				b.stall(first)
			}
			if err := <-began; err != nil {
				t.Fatal(err)
			}
			if err := b.begin(ctx, later); err != nil { // a second body (a retry)
				t.Fatal(err)
			}
			b.mu.Lock()
			defer b.mu.Unlock()
			wantHeld := int64(6)
			if unblock == "stalled" {
				wantHeld = 14 // past the bound: the writer's job needs a request
			}
			if b.held != wantHeld || b.asked != 0 {
				t.Errorf("held %d, asked %d; want %d and 0", b.held, b.asked, wantHeld)
			}
		})
	}
}

// Requests run ahead of the buffer by at most a buffer's worth of bytes
// (one job at least), and a body that begins makes room for the next.
func TestBufferAsksAheadOneBuffer(t *testing.T) {
	ctx := context.Background()
	b := newBuffer(10)
	jobs := []*job{{seq: 0, bytes: 12}, {seq: 1, bytes: 4}, {seq: 2, bytes: 4}}
	if err := b.ask(ctx, jobs[0]); err != nil { // larger than the buffer: alone
		t.Fatal(err)
	}
	asked := make(chan error)
	go func() { asked <- b.ask(ctx, jobs[1]) }()
	b.waitFor(jobs[0])
	if err := b.begin(ctx, jobs[0]); err != nil {
		t.Fatal(err)
	}
	if err := <-asked; err != nil {
		t.Fatal(err)
	}
	if err := b.ask(ctx, jobs[2]); err != nil {
		t.Fatal(err)
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.asked != 8 || b.held != 12 {
		t.Errorf("asked %d, held %d; want 8 and 12", b.asked, b.held)
	}
	// A cancelled download wakes whoever waits.
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	if err := b.wait(cctx); err == nil {
		t.Error("wait on a cancelled context returned no error")
	}
}
