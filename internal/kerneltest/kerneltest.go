// Package kerneltest runs the built WebAssembly kernels (wasm/kernels.wasm,
// made by scripts/build-wasm.sh) natively in wazero, so Go tests can compare
// them with zeebo/blake3 and crypto/sha256 on any input. Only tests import
// it.
package kerneltest

import (
	"context"
	"encoding/binary"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/api"
)

// memPages is the size of the memory the kernels get: 16 MiB.
const memPages = 256

// memoryModule is a WebAssembly module that only defines and exports a
// memory, standing in for xetkit.wasm's: the kernels import "env"
// "memory".
var memoryModule = []byte{
	0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00, // magic, version 1
	0x05, 0x04, 0x01, 0x00, 0x80, 0x02, // memory section: one memory, min 256 pages (LEB128)
	0x07, 0x0a, 0x01, 0x06, 'm', 'e', 'm', 'o', 'r', 'y', 0x02, 0x00, // export "memory"
}

// Kernels is one instance of kernels.wasm on its own memory. Its methods
// copy their arguments into that memory, call, and copy results back; they
// are safe for concurrent use.
type Kernels struct {
	mu      sync.Mutex
	mem     api.Memory
	x4      api.Function
	roots   api.Function
	sha256  api.Function
	scratch uint32 // where inputs go: the memory above 1 MiB
}

var (
	once   sync.Once
	shared *Kernels
	err    error
)

// Load returns the kernels, failing the test when kernels.wasm is not built.
func Load(t testing.TB) *Kernels {
	t.Helper()
	once.Do(func() { shared, err = load() })
	if err != nil {
		t.Fatal(err)
	}
	return shared
}

func load() (*Kernels, error) {
	path, err := find()
	if err != nil {
		return nil, err
	}
	bin, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("kerneltest: %v (build it: bash scripts/build-wasm.sh)", err)
	}
	ctx := context.Background()
	rt := wazero.NewRuntime(ctx)
	env, err := rt.InstantiateWithConfig(ctx, memoryModule, wazero.NewModuleConfig().WithName("env"))
	if err != nil {
		return nil, fmt.Errorf("kerneltest: memory module: %v", err)
	}
	mod, err := rt.InstantiateWithConfig(ctx, bin, wazero.NewModuleConfig().WithName("kernels"))
	if err != nil {
		return nil, fmt.Errorf("kerneltest: %s: %v", path, err)
	}
	k := &Kernels{mem: env.Memory(), x4: mod.ExportedFunction("blake3_x4"), roots: mod.ExportedFunction("blake3_roots_x4"),
		sha256: mod.ExportedFunction("sha256_blocks"), scratch: 1 << 20}
	if k.x4 == nil || k.roots == nil || k.sha256 == nil {
		return nil, fmt.Errorf("kerneltest: %s lacks blake3_x4, blake3_roots_x4 or sha256_blocks", path)
	}
	return k, nil
}

// find locates wasm/kernels.wasm from the module root above the working
// directory.
func find() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return filepath.Join(dir, "wasm", "kernels.wasm"), nil
		}
		up := filepath.Dir(dir)
		if up == dir {
			return "", fmt.Errorf("kerneltest: no go.mod above the working directory")
		}
		dir = up
	}
}

// put writes words as little-endian u32s at addr.
func (k *Kernels) putWords(addr uint32, words *[8]uint32) {
	var b [32]byte
	for i, w := range words {
		binary.LittleEndian.PutUint32(b[4*i:], w)
	}
	k.mem.Write(addr, b[:])
}

// BLAKE3x4 runs blake3_x4 (the contract of blake3.Lanes4) on copies of in
// and out. When out aliases in (same first byte), they share one copy, as
// they would in xetkit.wasm.
func (k *Kernels) BLAKE3x4(key *[8]uint32, in []byte, stride, nblocks int, counter, step, flags, start, end uint32, out []byte, groups int) {
	k.mu.Lock()
	defer k.mu.Unlock()
	keyAt := k.scratch
	inAt := keyAt + 64
	outAt := inAt + uint32(len(in)) + 64
	if len(in) > 0 && len(out) > 0 && &in[0] == &out[0] {
		outAt = inAt
	}
	if int(outAt)+len(out) > memPages<<16 {
		panic("kerneltest: input too large for the kernels' memory")
	}
	k.putWords(keyAt, key)
	k.mem.Write(inAt, in)
	if outAt != inAt {
		k.mem.Write(outAt, out)
	}
	_, err := k.x4.Call(context.Background(), uint64(keyAt), uint64(inAt), uint64(stride), uint64(nblocks),
		uint64(counter), uint64(step), uint64(flags), uint64(start), uint64(end), uint64(outAt), uint64(groups))
	if err != nil {
		panic(fmt.Sprintf("kerneltest: blake3_x4: %v", err))
	}
	got, _ := k.mem.Read(outAt, uint32(len(out)))
	copy(out, got)
}

// BLAKE3Roots4 runs blake3_roots_x4 (the contract of xethash's
// blake3.Roots4) on copies of its arguments.
func (k *Kernels) BLAKE3Roots4(key *[8]uint32, flags uint32, in []byte, stride int, lens []uint32, out []byte, groups int) {
	k.mu.Lock()
	defer k.mu.Unlock()
	keyAt := k.scratch
	lensAt := keyAt + 64
	inAt := lensAt + 4*uint32(len(lens)) + 64
	outAt := inAt + uint32(len(in)) + 64
	if int(outAt)+len(out) > memPages<<16 {
		panic("kerneltest: input too large for the kernels' memory")
	}
	k.putWords(keyAt, key)
	lb := make([]byte, 4*len(lens))
	for i, n := range lens {
		binary.LittleEndian.PutUint32(lb[4*i:], n)
	}
	k.mem.Write(lensAt, lb)
	k.mem.Write(inAt, in)
	_, err := k.roots.Call(context.Background(), uint64(keyAt), uint64(flags), uint64(inAt), uint64(stride),
		uint64(lensAt), uint64(outAt), uint64(groups))
	if err != nil {
		panic(fmt.Sprintf("kerneltest: blake3_roots_x4: %v", err))
	}
	got, _ := k.mem.Read(outAt, uint32(len(out)))
	copy(out, got)
}

// SHA256Blocks runs sha256_blocks over every whole block of p, updating
// state.
func (k *Kernels) SHA256Blocks(state *[8]uint32, p []byte) {
	k.mu.Lock()
	defer k.mu.Unlock()
	// The kernel's 1 KiB of scratch lies between the state and the input:
	// a write outside it would show in the result.
	stAt := k.scratch
	schedAt := stAt + 32
	inAt := schedAt + 1024
	if int(inAt)+len(p) > memPages<<16 {
		panic("kerneltest: input too large for the kernels' memory")
	}
	k.putWords(stAt, state)
	k.mem.Write(inAt, p)
	if _, err := k.sha256.Call(context.Background(), uint64(stAt), uint64(inAt), uint64(len(p)/64), uint64(schedAt)); err != nil {
		panic(fmt.Sprintf("kerneltest: sha256_blocks: %v", err))
	}
	b, _ := k.mem.Read(stAt, 32)
	for i := range state {
		state[i] = binary.LittleEndian.Uint32(b[4*i:])
	}
}
