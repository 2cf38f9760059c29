//go:build !js

package cas_test

import (
	"os"
	"os/exec"
	"strings"
	"testing"
)

// The WebAssembly module sends its requests with fetch: net/http (whose
// import alone links its transport's TLS stack, about a fifth of the
// module) must not come back in through the client.
func TestWasmModuleLeavesOutNetHTTP(t *testing.T) {
	cmd := exec.Command("go", "list", "-deps", "github.com/xetkit/xetkit/wasm")
	cmd.Env = append(os.Environ(), "GOOS=js", "GOARCH=wasm")
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	deps := strings.Fields(string(out))
	if len(deps) < 20 {
		t.Fatalf("go list gave %d packages: %q", len(deps), deps)
	}
	for _, p := range deps {
		if p == "net/http" || p == "crypto/tls" {
			t.Errorf("the WebAssembly module imports %s", p)
		}
	}
}
