//go:build !js

package exports

//go:generate go run gen.go

import (
	"os"
	"testing"
)

// TestDeclIsCurrent: decl.go and decl_core.go hold exports.json as it is
// (go generate ./wasm/exports writes them).
func TestDeclIsCurrent(t *testing.T) {
	b, err := os.ReadFile("exports.json")
	if err != nil {
		t.Fatal(err)
	}
	full, core, err := Generated(b)
	if err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]string{"decl.go": full, "decl_core.go": core} {
		got, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		if string(got) != want {
			t.Errorf("%s is older than exports.json: run go generate ./wasm/exports", name)
		}
	}
}
