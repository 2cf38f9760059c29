//go:build ignore

// gen writes kernels.wat from WAT().
//
//	go run gen.go
package main

import (
	"log"
	"os"

	"github.com/xetkit/xetkit/wasm/kernels"
)

func main() {
	if err := os.WriteFile("kernels.wat", []byte(kernels.WAT()), 0o644); err != nil {
		log.Fatal(err)
	}
}
