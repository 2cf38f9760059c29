package kernels

import (
	"os"
	"testing"
)

// TestWATCurrent keeps kernels.wat, the file the build turns into bytes, in
// step with the generator: run "go generate ./wasm/kernels" after a change.
func TestWATCurrent(t *testing.T) {
	if b, err := os.ReadFile("kernels.wat"); err != nil || string(b) != WAT() {
		t.Fatalf("kernels.wat is not what WAT() writes (%v): run go generate ./wasm/kernels", err)
	}
}
