//go:build js && wasm

package main

import (
	"encoding/json"
	"syscall/js"
	"time"

	"github.com/xetkit/xetkit/shard"
	"github.com/xetkit/xetkit/xorb"
)

func exportFormats(api js.Value) {
	// buildShard(specJSON) → bytes
	export(api, "buildShard", func(args []js.Value) (any, error) {
		s, err := stringArg(args, 0, "spec")
		if err != nil {
			return nil, err
		}
		sp, err := shard.ParseSpec([]byte(s))
		if err != nil {
			return nil, err
		}
		b, err := shard.Build(sp)
		if err != nil {
			return nil, err
		}
		return toJS(b), nil
	})
	// parseShard(bytes, upload, validate) → ParsedShard JSON; upload adds
	// the checks of the upload API (as "xetkit shard parse --upload");
	// validate false skips the validator (findings: []), so a huge shard's
	// structure is ready sooner.
	export(api, "parseShard", func(args []js.Value) (any, error) {
		s, err := shardArg(args)
		if err != nil {
			return nil, err
		}
		var findings []shard.Finding
		if v := arg(args, 2); v.IsUndefined() || v.Truthy() {
			findings = validateShard(s, boolArg(args, 1))
		}
		return string(shard.AppendParsedJSON(nil, s, findings)), nil
	})
	// validateShard(bytes, upload) → findings JSON: the findings parseShard
	// would include.
	export(api, "validateShard", func(args []js.Value) (any, error) {
		s, err := shardArg(args)
		if err != nil {
			return nil, err
		}
		findings := validateShard(s, boolArg(args, 1))
		if findings == nil {
			findings = []shard.Finding{}
		}
		out, err := json.Marshal(findings)
		if err != nil {
			return nil, err
		}
		return string(out), nil
	})
	// parseXorb(bytes, verify) → xorb summary JSON
	export(api, "parseXorb", func(args []js.Value) (any, error) {
		b, err := bytesArg(args, 0, "bytes", nil)
		if err != nil {
			return nil, err
		}
		x, err := xorb.ParsePartial(b)
		if err != nil {
			return nil, err
		}
		if v := arg(args, 1); v.IsUndefined() || v.Truthy() {
			if err := x.Verify(); err != nil {
				return nil, err
			}
		}
		out, err := json.Marshal(x.Summary())
		if err != nil {
			return nil, err
		}
		return string(out), nil
	})
}

func validateShard(s *shard.Shard, upload bool) []shard.Finding {
	if upload {
		return shard.ValidateUpload(s, time.Now())
	}
	return shard.Validate(s, time.Now())
}

// shardArg parses the shard bytes of the first argument.
func shardArg(args []js.Value) (*shard.Shard, error) {
	b, err := bytesArg(args, 0, "bytes", nil)
	if err != nil {
		return nil, err
	}
	return shard.Parse(b)
}
