//go:build ignore

// gen.go writes decl.go and decl_core.go: exports.json as Go string
// constants, as Go reads it (Generated). The modules do not //go:embed
// exports.json because package embed brings io/fs, and with it the time
// package, into the core module (about 47 KB of gzip); the core module's
// constant holds only its own exports (3 KB of gzip less).
// TestDeclIsCurrent checks both files against exports.json.
package main

import (
	"os"

	"github.com/xetkit/xetkit/wasm/exports"
)

func main() {
	b, err := os.ReadFile("exports.json")
	if err != nil {
		panic(err)
	}
	full, core, err := exports.Generated(b)
	if err != nil {
		panic(err)
	}
	if err := os.WriteFile("decl.go", []byte(full), 0o644); err != nil {
		panic(err)
	}
	if err := os.WriteFile("decl_core.go", []byte(core), 0o644); err != nil {
		panic(err)
	}
}
