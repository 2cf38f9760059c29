package kernels

import (
	"os"
	"testing"
)

// TestWATCurrent keeps kernels.wat, the file the build turns into bytes, in
// step with the generator: run "go generate ./wasm/kernels" after a change.
func TestWATCurrent(t *testing.T) {
	b, err := os.ReadFile("kernels.wat")
	if err != nil {
		t.Fatal(err)
	}
	if string(b) != WAT() {
		t.Fatal("kernels.wat is not what WAT() writes: run go generate ./wasm/kernels")
	}
}
