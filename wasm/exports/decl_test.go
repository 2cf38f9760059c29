package exports

//go:generate go run gen.go

import (
	"os"
	"testing"
)

// TestDeclIsCurrent: decl.go holds exports.json as it is (go generate ./wasm/exports writes it).
func TestDeclIsCurrent(t *testing.T) {
	b, err := os.ReadFile("exports.json")
	if err != nil {
		t.Fatal(err)
	}
	if string(b) != declJSON {
		t.Fatal("decl.go is older than exports.json: run go generate ./wasm/exports")
	}
}
