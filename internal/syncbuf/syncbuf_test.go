package syncbuf

import (
	"strings"
	"sync"
	"testing"
)

// TestConcurrentWrites: lines written from many goroutines while the
// buffer is read all end up in it whole (go test -race checks the locking).
func TestConcurrentWrites(t *testing.T) {
	var b Buffer
	var wg sync.WaitGroup
	for i := 0; i < 8; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := 0; j < 100; j++ {
				b.Write([]byte("line\n"))
				_ = b.String()
			}
		}()
	}
	wg.Wait()
	if got := strings.Count(b.String(), "line\n"); got != 800 || len(b.String()) != 800*5 {
		t.Fatalf("%d whole lines in %d bytes, want 800 in 4000", got, len(b.String()))
	}
}
