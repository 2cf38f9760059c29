// Package layouts declares the record layouts of the shard format (draft
// §9) once, as data: each record's fields in byte order, what the JSON,
// the hex view, Go and TypeScript call them, and the model types that keep
// their values. Package shard does not import it: go generate ./shard
// (shard/internal/layoutgen) writes from it the model types and layout
// tables of package shard (layout_gen.go) and the matching members of
// wasm/xetkit.d.ts, and the shard tests read offsets from it.
//
// A new field is one entry in Records (taking bytes from a reserved field,
// or the format changes): its JSON key, kind, the model field that keeps it
// and that field's doc. A u32 field of a record with Columns also becomes a
// column of the module's rows and a key of their JavaScript objects.
package layouts

// Kind says how a field's bytes read.
type Kind uint8

const (
	Hash  Kind = iota // 32 bytes: a hash, its XET string in text and JSON
	U32               // little-endian
	U64               // little-endian
	Trunc             // 8 bytes: a truncated hash (a little-endian u64), 16 hex digits in text and JSON
	Count             // u32: a block header's count of the records that follow, written from the model, kept by no model field
	Text              // Size bytes of NUL-padded text
	Zero              // Size reserved bytes: written as zero, noted when they are not
	Fixed             // Size bytes every record has (a magic, a marker): Bytes names them
)

// Field is one field of a record.
type Field struct {
	Name string // its JSON key and its name in the hex view
	Kind Kind
	Size int // Text, Zero and Fixed only; the other kinds have their own size
	// Go is the model field that keeps the value ("Flags", or
	// "Totals.StoredBytes" for a field of a struct field of the model);
	// empty for Count, Zero and Fixed, and where the model is the value
	// itself (a record of one hash).
	Go string
	// Doc is the Go field's comment. One that starts with the field's
	// name is a doc comment above it, else it follows the field on its
	// line. A field kept by several records is documented by one of them.
	Doc    string
	TSDoc  string // the TypeScript member's comment, if it needs one
	Kept   bool   // read and written, left out of the JSON (TypeScript has no member for it)
	Source string // Fixed: the package shard array holding the bytes
}

// Record is the layout of one kind of record.
type Record struct {
	Var     string // its *layout in package shard
	Name    string // what the hex view and the wasm/xetkit.d.ts regions call it
	Section string // the section its findings name
	// Model is the Go type whose values the record is read into: one of
	// Models, or a type of its own (xethash.Hash) for a record of one
	// value; empty for a record that keeps nothing.
	Model  string
	Fields []Field
	// Columns names, for a record whose rows a parse ships to JavaScript
	// as columns (terms, chunks, chunk lookups: wasm/formats/shards.go),
	// the package shard variable listing its u32 fields: the module fills
	// a Uint32Array column per field, named by its JSON key, and
	// wasm/shardcolumns.js (generated too) turns the columns into objects.
	Columns string
	// Extra are the columns such a record has besides its fields, made by
	// hand (chunkLookup's xorb): keys its objects carry too.
	Extra []Extra
}

// Extra is a key of a record's JavaScript objects that no field holds.
type Extra struct {
	Name  string
	After string // the JSON key it follows in the objects (the JSON the CLI writes has it last)
}

// Model is a struct type of package shard that keeps the values of
// records: its fields are those of its records (in byte order) between
// the hand-written ones that no record holds.
type Model struct {
	Type   string
	Doc    string    // the type's doc comment
	Before []GoField // fields before the records'
	After  []GoField // fields after them
}

// GoField is a field of a model that no record holds.
type GoField struct {
	Name, Type, Doc string
}

// Bytes is the number of bytes the field takes.
func (f Field) Bytes() int {
	switch f.Kind {
	case Hash:
		return 32
	case U32, Count:
		return 4
	case U64, Trunc:
		return 8
	}
	return f.Size
}

// InJSON reports whether the field is a key of the record's JSON object.
func (f Field) InJSON() bool { return !f.Kept && f.Kind != Zero && f.Kind != Fixed }

// Size is the number of bytes of the record.
func (r *Record) Size() int {
	n := 0
	for _, f := range r.Fields {
		n += f.Bytes()
	}
	return n
}

// Span returns where the field named name lies in the record: its first
// byte and the byte after it. It panics when there is no such field.
func (r *Record) Span(name string) (start, end int64) {
	for _, f := range r.Fields {
		if f.Name == name {
			return start, start + int64(f.Bytes())
		}
		start += int64(f.Bytes())
	}
	panic("layouts: record " + r.Name + " has no field " + name)
}

// Find returns the record named name. It panics when there is none.
func Find(name string) *Record {
	for i := range Records {
		if Records[i].Name == name {
			return &Records[i]
		}
	}
	panic("layouts: no record " + name)
}

// bookend is the record that closes the file info or CAS info section.
func bookend(varName, section string) Record {
	return Record{Var: varName, Name: section + " bookend", Section: section, Fields: []Field{
		{Name: "marker", Kind: Fixed, Size: 32, Source: "bookendHash"},
		{Name: "reserved", Kind: Zero, Size: 16},
	}}
}

// Records are the layouts of every record of the format.
var Records = []Record{
	{Var: "headerLayout", Name: "header", Section: "header", Model: "Header", Fields: []Field{
		{Name: "appId", Kind: Text, Size: 14, Go: "AppID", Doc: `tag bytes 0–13 without the trailing NUL padding; Marshal writes DefaultAppID for ""`},
		{Name: "null", Kind: Zero, Size: 1},
		{Name: "magic", Kind: Fixed, Size: 17, Source: "magicSequence"},
		{Name: "version", Kind: U64, Go: "Version"},
		{Name: "footerSize", Kind: U64, Go: "FooterSize"},
	}},
	{Var: "fileLayout", Name: "file", Section: "files", Model: "File", Fields: []Field{
		{Name: "hash", Kind: Hash, Go: "Hash"},
		{Name: "flags", Kind: U32, Go: "Flags", Doc: "Flags as stored. The writer sets the verification and metadata-ext bits from Verification and SHA256 and keeps the others."},
		{Name: "numEntries", Kind: Count, TSDoc: "entries.length."},
		{Name: "reserved", Kind: Zero, Size: 8},
	}},
	{Var: "termLayout", Name: "term", Section: "files", Model: "Term", Columns: "TermColumns", Fields: []Field{
		{Name: "xorbHash", Kind: Hash, Go: "Xorb"},
		{Name: "flags", Kind: U32, Go: "Flags", Doc: "cas_flags, reserved"},
		{Name: "unpackedBytes", Kind: U32, Go: "UnpackedBytes"},
		{Name: "chunkStart", Kind: U32, Go: "ChunkStart"},
		{Name: "chunkEnd", Kind: U32, Go: "ChunkEnd", Doc: "exclusive"},
	}},
	{Var: "verificationLayout", Name: "verification entry", Section: "files", Model: "xethash.Hash", Fields: []Field{
		{Name: "rangeHash", Kind: Hash},
		{Name: "reserved", Kind: Zero, Size: 16},
	}},
	{Var: "metadataExtLayout", Name: "metadata ext", Section: "files", Model: "xethash.Hash", Fields: []Field{
		{Name: "sha256", Kind: Hash},
		{Name: "reserved", Kind: Zero, Size: 16},
	}},
	{Var: "xorbLayout", Name: "xorb", Section: "cas", Model: "Xorb", Fields: []Field{
		{Name: "hash", Kind: Hash, Go: "Hash"},
		{Name: "flags", Kind: U32, Go: "Flags", Doc: "cas_flags, reserved"},
		{Name: "numChunks", Kind: Count},
		{Name: "bytesInXorb", Kind: U32, Go: "BytesInXorb", Doc: "BytesInXorb is num_bytes_in_cas as stored: the sum of the chunks' unpacked sizes in a correct shard."},
		{Name: "bytesOnDisk", Kind: U32, Go: "BytesOnDisk", Doc: "length of the serialized xorb"},
	}},
	{Var: "chunkLayout", Name: "chunk", Section: "cas", Model: "Chunk", Columns: "ChunkColumns", Fields: []Field{
		{Name: "hash", Kind: Hash, Go: "Hash", Doc: "Hash is the chunk hash, keyed with the footer's chunk hash key when that key is not zero."},
		{Name: "byteRangeStart", Kind: U32, Go: "ByteRangeStart", Doc: "offset of the chunk in the xorb's unpacked bytes"},
		{Name: "unpackedBytes", Kind: U32, Go: "UnpackedBytes"},
		{Name: "flags", Kind: U32, Go: "Flags"},
		{Name: "reserved", Kind: U32, Go: "Reserved", Kept: true},
	}},
	bookend("fileBookendLayout", "files"),
	bookend("casBookendLayout", "cas"),
	{Var: "footerLayout", Name: "footer", Section: "footer", Model: "Footer", Fields: []Field{
		{Name: "version", Kind: U64, Go: "Version"},
		{Name: "fileInfoOffset", Kind: U64, Go: "FileInfoOffset"},
		{Name: "casInfoOffset", Kind: U64, Go: "CASInfoOffset"},
		{Name: "fileLookupOffset", Kind: U64, Go: "FileLookupOffset"},
		{Name: "fileLookupCount", Kind: U64, Go: "FileLookupCount"},
		{Name: "casLookupOffset", Kind: U64, Go: "XorbLookupOffset"},
		{Name: "casLookupCount", Kind: U64, Go: "XorbLookupCount"},
		{Name: "chunkLookupOffset", Kind: U64, Go: "ChunkLookupOffset"},
		{Name: "chunkLookupCount", Kind: U64, Go: "ChunkLookupCount"},
		{Name: "chunkHashKey", Kind: Hash, Go: "ChunkHashKey"},
		{Name: "createdAt", Kind: U64, Go: "CreatedAt", Doc: "Unix seconds; 0 = not set"},
		{Name: "keyExpiry", Kind: U64, Go: "KeyExpiry", Doc: "Unix seconds; 0 = not set"},
		{Name: "reserved", Kind: Zero, Size: 48},
		{Name: "storedBytesOnDisk", Kind: U64, Go: "Totals.StoredBytesOnDisk", Doc: "Σ xorb bytesOnDisk"},
		{Name: "materializedBytes", Kind: U64, Go: "Totals.MaterializedBytes", Doc: "Σ term unpackedBytes over all files"},
		{Name: "storedBytes", Kind: U64, Go: "Totals.StoredBytes", Doc: "Σ xorb bytesInXorb"},
		{Name: "footerOffset", Kind: U64, Go: "FooterOffset"},
	}},
	{Var: "fileLookupLayout", Name: "fileLookup", Section: "lookups", Model: "LookupEntry", Fields: []Field{
		{Name: "truncatedHash", Kind: Trunc, Go: "Truncated"},
		{Name: "entry", Kind: U32, Go: "Entry"},
	}},
	{Var: "xorbLookupLayout", Name: "casLookup", Section: "lookups", Model: "LookupEntry", Fields: []Field{
		{Name: "truncatedHash", Kind: Trunc, Go: "Truncated"},
		{Name: "entry", Kind: U32, Go: "Entry"},
	}},
	{Var: "chunkLookupLayout", Name: "chunkLookup", Section: "lookups", Model: "LookupEntry", Columns: "ChunkLookupColumns", Extra: []Extra{{Name: "xorb", After: "entry"}}, Fields: []Field{
		{Name: "truncatedHash", Kind: Trunc, Go: "Truncated"},
		{Name: "entry", Kind: U32, Go: "Entry"},
		{Name: "chunk", Kind: U32, Go: "Chunk"},
	}},
}

// Models are the struct types of package shard that records are read
// into, in the order layout_gen.go declares them.
var Models = []Model{
	{Type: "Header", Doc: "Header is the 48-byte MDBShardFileHeader."},
	{Type: "File", Doc: "File is one file info block: the reconstruction of one file.",
		Before: []GoField{{"Offset", "int64", "of its FileDataSequenceHeader"}},
		After: []GoField{
			{"Terms", "[]Term", ""},
			{"Verification", "[]xethash.Hash", "Verification holds one range hash per term, or is nil when the file has no verification entries."},
			{"SHA256", "*xethash.Hash", "SHA256 is the metadata ext's SHA-256 of the file contents, in stored byte order (its String() is the standard hex digest), or nil."},
		}},
	{Type: "Term", Doc: "Term is a FileDataSequenceEntry: a run of chunks of one xorb."},
	{Type: "Xorb", Doc: "Xorb is one CAS info block.",
		Before: []GoField{{"Offset", "int64", "of its CASChunkSequenceHeader"}},
		After:  []GoField{{"Chunks", "[]Chunk", ""}}},
	{Type: "Chunk", Doc: "Chunk is a CASChunkSequenceEntry."},
	{Type: "Footer", Doc: "Footer is the 200-byte MDBShardFileFooter of a stored shard.",
		Before: []GoField{{"Offset", "int64", "where it was read: the shard size minus 200"}}},
	{Type: "Totals", Doc: "Totals are the byte totals a footer carries."},
	{Type: "LookupEntry", Doc: "LookupEntry is an entry of a lookup table. Entry counts 48-byte records, as the reference writes and reads it (a reader seeks to the section's offset + 48·Entry), not files or xorbs: in the file table it is the file's header record in the file info section; in the CAS and chunk tables the xorb's header record in the CAS info section. Chunk, in the chunk table only, is the chunk's index within that xorb."},
}
