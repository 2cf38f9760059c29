package main

import (
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"
)

// TestCoreHoldsTheFormatsOnly lists the packages of the core module's
// build (GOOS=js, the xetkit_core tag, as scripts/build-wasm.sh builds it)
// and checks that no HTTP, transfer engine, Hub client, resume or worker
// protocol is among them, nor what would weigh on it for nothing (fmt,
// time, os, encoding/json, crypto, pierrec/lz4, zeebo/blake3), and that
// the formats are.
func TestCoreHoldsTheFormatsOnly(t *testing.T) {
	cmd := exec.Command("go", "list", "-deps", "-tags", "xetkit_core", ".")
	cmd.Env = append(os.Environ(), "GOOS=js", "GOARCH=wasm")
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	pkgs := strings.Fields(string(out))
	const mod = "github.com/xetkit/xetkit/"
	for _, p := range pkgs {
		for _, banned := range []string{
			mod + "cas", mod + "caswire", mod + "hubclient", mod + "pipeline", mod + "resume", mod + "hub",
			mod + "internal/jsoffload", mod + "internal/jsasync", mod + "chunkhash",
			"net", "net/http", "crypto", "fmt", "time", "os", "context", "encoding/json", "encoding/hex", "embed",
			"github.com/pierrec/lz4/v4", "github.com/zeebo/blake3", "github.com/klauspost/cpuid/v2",
		} {
			if p == banned || strings.HasPrefix(p, banned+"/") {
				t.Errorf("the core build holds %s", p)
			}
		}
	}
	for _, want := range []string{mod + "chunking", mod + "xethash", mod + "shard", mod + "shard/spec", mod + "xorb", mod + "wasm/formats"} {
		if !slices.Contains(pkgs, want) {
			t.Errorf("the core build lacks %s", want)
		}
	}
}
