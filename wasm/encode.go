//go:build js && wasm

package main

import (
	"syscall/js"

	"github.com/xetkit/xetkit/xorb"
)

// modeArg parses a compression name (xorb.ParseMode).
func modeArg(v js.Value) (xorb.Mode, error) {
	if v.Type() != js.TypeString {
		return 0, errorf(codeType, "compression must be a string")
	}
	m, err := xorb.ParseMode(v.String())
	if err != nil {
		return 0, errorf(codeValue, "%v", err)
	}
	return m, nil
}
