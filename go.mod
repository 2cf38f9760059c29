module github.com/xetkit/xetkit

go 1.26.8

require (
	github.com/agnivade/levenshtein v1.2.2
	github.com/pierrec/lz4/v4 v4.1.33
	github.com/tetratelabs/wazero v1.12.0
	github.com/zeebo/blake3 v0.2.4
	golang.org/x/sys v0.50.0
	golang.org/x/text v0.44.0
)

require (
	github.com/klauspost/cpuid/v2 v2.0.12 // indirect
	gopkg.in/yaml.v3 v3.0.1 // indirect
)
