// Package xorb reads and writes xorbs (draft-denis-xet §7): chunk records
// (an 8-byte header, then the chunk stored as is, as one LZ4 frame, or
// byte-grouped and then one LZ4 frame), followed by the CasObjectInfo footer
// and its 4-byte length.
//
// Writing: a Builder takes chunks (or records encoded elsewhere with
// EncodeChunk, e.g. by parallel workers), reports ErrFull when the next one
// would break the 64 MiB or 8,192-chunk limit, and Finish returns the bytes,
// the xorb hash and where each chunk went. LZ4 frames are laid out like the
// reference writer's (same frame descriptor, one block per chunk); the
// compressed blocks come from github.com/pierrec/lz4 and so differ from the
// reference's, which the format allows: nothing hashes compressed bytes.
//
// Reading: Parse and ParsePartial validate every header field before
// anything is allocated or decompressed and the footer against the records,
// without decompressing; Verify decompresses and checks the hashes. Every
// error about the data is a *formaterr.Error with the byte offset of the
// offending field.
package xorb
