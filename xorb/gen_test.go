package xorb

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/xetkit/xetkit/formaterr"
)

// Generated test data: deterministic for a seed.

func randomData(n int, seed uint64) []byte {
	r := rand.New(rand.NewPCG(seed, 1))
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(r.Uint32())
	}
	return b
}

// textData is CSV-like text: repetitive structure, varying values.
func textData(n int, seed uint64) []byte {
	r := rand.New(rand.NewPCG(seed, 2))
	words := []string{"Seattle", "Tacoma", "Olympia", "King", "Pierce", "Thurston", "TESLA", "NISSAN", "KIA", "Battery Electric Vehicle (BEV)", "Plug-in Hybrid Electric Vehicle (PHEV)"}
	b := make([]byte, 0, n+128)
	for len(b) < n {
		b = fmt.Appendf(b, "%s,%s,WA,%d,%d,%s,%d\n", words[r.IntN(len(words))], words[r.IntN(len(words))],
			98000+r.IntN(999), 2010+r.IntN(15), words[6+r.IntN(5)], r.IntN(300))
	}
	return b[:n]
}

// floatData is a float32 array of a smooth signal with a little noise: the
// data byte grouping is made for.
func floatData(n int, seed uint64) []byte {
	r := rand.New(rand.NewPCG(seed, 3))
	b := make([]byte, n)
	for i := 0; i+4 <= n; i += 4 {
		v := float32(math.Sin(float64(i)/4000)*100 + r.NormFloat64()*0.01)
		binary.LittleEndian.PutUint32(b[i:], math.Float32bits(v))
	}
	return b
}

// wantErrAt fails unless err is a *formaterr.Error of format "xorb" at off.
func wantErrAt(t *testing.T, err error, off int64, what string) {
	t.Helper()
	var fe *formaterr.Error
	if !errors.As(err, &fe) {
		t.Errorf("%s: got %v, want a *formaterr.Error at offset %d", what, err, off)
		return
	}
	if fe.Format != "xorb" || fe.Offset != off {
		t.Errorf("%s: got %q (format %q, offset %d), want offset %d", what, err, fe.Format, fe.Offset, off)
	}
}

// wantFormatErr fails unless err is a *formaterr.Error of format "xorb"
// with an offset inside [0, size].
func wantFormatErr(t *testing.T, err error, size int, what string) {
	t.Helper()
	var fe *formaterr.Error
	if !errors.As(err, &fe) || fe.Format != "xorb" || fe.Offset < 0 || fe.Offset > int64(size) {
		t.Errorf("%s: got %v, want a xorb *formaterr.Error within the input", what, err)
	}
}
