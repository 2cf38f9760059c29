package shard

import (
	"slices"
	"sort"

	"github.com/xetkit/xetkit/internal/textf"
	"github.com/xetkit/xetkit/xethash"
)

// Severity grades a Finding.
type Severity string

// The severities. An error means the shard is wrong for its purpose: a hub
// must reject it and a client must not trust it (a size, range, hash, table
// or offset that disagrees with the data it describes). A warning breaks a
// rule of the format without changing what the shard means (reserved bytes
// or flag bits set, totals that disagree, an expired key). Info notes what a
// reader may want to know but is allowed (a term whose xorb is not in the
// shard, so it cannot be checked; keyed chunk hashes; another app ID).
const (
	Error   Severity = "error"
	Warning Severity = "warning"
	Info    Severity = "info"
)

// Finding is a rule that a readable shard breaks.
type Finding struct {
	Severity Severity `json:"severity"`
	Offset   int64    `json:"offset"`  // byte offset from the start of the shard
	Section  string   `json:"section"` // "header", "files", "cas", "lookups" or "footer"
	Rule     string   `json:"rule"`    // one of the Rule constants
	Message  string   `json:"message"`
}

// Rules, with the severity Validate gives them.
const (
	RuleReserved       = "reserved"               // warning: reserved bytes not zero
	RuleFlagsReserved  = "flags-reserved"         // warning: reserved flag bits set (file bits 0–29, chunk bits 0–30, any term or xorb cas_flags)
	RuleAppID          = "app-id"                 // info: the header's app ID is not HFRepoMetaData
	RuleVerifyPartial  = "verification-partial"   // error: some files have verification entries, this one has none
	RuleFileNoTerms    = "file-no-terms"          // warning: a file with a non-zero hash and no terms
	RuleTermEmpty      = "term-empty"             // error: chunkStart ≥ chunkEnd
	RuleTermRange      = "term-range"             // error: chunkEnd past the chunk count of its xorb (in the shard)
	RuleTermSize       = "term-size"              // error: unpackedBytes ≠ the sum of its chunks
	RuleTermXorb       = "term-xorb-missing"      // info: its xorb is not in the shard, so range, size and hashes go unchecked
	RuleRangeHash      = "range-hash"             // error: verification hash ≠ the hash of its chunk range
	RuleFileHash       = "file-hash"              // error: file hash ≠ the hash of its terms' chunks
	RuleDuplicateXorb  = "duplicate-xorb"         // warning: a xorb described twice
	RuleXorbEmpty      = "xorb-empty"             // warning: a xorb with no chunks
	RuleByteRangeStart = "byte-range-start"       // error: byteRangeStart not the sum of the sizes before it
	RuleBytesInXorb    = "bytes-in-xorb"          // error: bytesInXorb ≠ the sum of its chunks
	RuleBytesOnDisk    = "bytes-on-disk"          // warning: bytesOnDisk smaller than its chunks' record headers alone
	RuleChunkEmpty     = "chunk-empty"            // warning: a chunk of 0 bytes
	RuleXorbHash       = "xorb-hash"              // error: xorb hash ≠ the merkle root of its chunks
	RuleKeyed          = "keyed"                  // info: chunk hashes are keyed, so xorb, range and file hashes go unchecked
	RuleTrailingBytes  = "trailing-bytes"         // error: bytes after the CAS info bookend of an upload-form shard
	RuleFooterVersion  = "footer-version"         // error: footer version is not 1
	RuleFooterOffset   = "footer-offset"          // error: a footer offset disagrees with where the section really is
	RuleFooterTotals   = "footer-totals"          // warning: a footer byte total disagrees with the sections
	RuleLookupRange    = "lookup-range"           // error (warning for an empty table): a table does not fit between the CAS info section and the footer
	RuleLookupOverlap  = "lookup-overlap"         // error: two tables overlap
	RuleLookupGap      = "lookup-gap"             // warning: bytes before the footer that belong to no table
	RuleLookupUnsorted = "lookup-unsorted"        // error: entries not sorted by truncated hash
	RuleLookupIndex    = "lookup-index"           // error: an entry points past the files, xorbs or chunks
	RuleLookupHash     = "lookup-hash"            // error: an entry's truncated hash is not that of what it points at
	RuleLookupCount    = "lookup-count"           // warning: a non-empty table without one entry per file, xorb or chunk
	RuleKeyExpired     = "key-expired"            // warning: the key expiry has passed
	RuleCreatedFuture  = "created-future"         // warning: created more than an hour after now
	RuleExpiryOrder    = "expiry-before-creation" // warning: key expiry earlier than creation
	RuleUploadVerify   = "upload-verification"    // error (ValidateUpload): a file without verification entries
	RuleUploadSHA256   = "upload-sha256"          // error (ValidateUpload): a file without a metadata ext
	RuleUploadKeyed    = "upload-keyed"           // error (ValidateUpload): keyed chunk hashes
	RuleTruncated      = "truncated-list"         // info: more findings of one rule than are listed
	RuleUnchecked      = "unchecked"              // info: range and file hashes past Validate's work bound were not recomputed
)

// maxPerRule bounds the findings listed per rule, so a hostile shard with a
// million bad entries gives a short report (and a count of the rest).
const maxPerRule = 100

// findings collects findings, listing at most maxPerRule per rule.
type findings struct {
	list    []Finding
	count   map[string]int
	dropped map[string]Finding // first unlisted finding of each rule
}

func (c *findings) add(sev Severity, section string, off int64, rule, msg string, args ...any) {
	if c.count == nil {
		c.count = map[string]int{}
	}
	n := c.count[rule]
	c.count[rule] = n + 1
	f := Finding{Severity: sev, Offset: off, Section: section, Rule: rule}
	if n >= maxPerRule {
		if n == maxPerRule {
			if c.dropped == nil {
				c.dropped = map[string]Finding{}
			}
			c.dropped[rule] = f
		}
		return
	}
	f.Message = textf.Sprintf(msg, args...)
	c.list = append(c.list, f)
}

func (c *findings) clone() findings {
	out := findings{list: slices.Clone(c.list), count: map[string]int{}, dropped: map[string]Finding{}}
	for k, v := range c.count {
		out.count[k] = v
	}
	for k, v := range c.dropped {
		out.dropped[k] = v
	}
	return out
}

// result lists what was collected, a truncated-list note per rule that had
// too many, sorted by offset.
func (c *findings) result() []Finding {
	out := c.list
	for rule, f := range c.dropped {
		out = append(out, Finding{Severity: Info, Offset: f.Offset, Section: f.Section, Rule: RuleTruncated,
			Message: textf.Sprintf("%d more %q findings not listed, the first at byte %d", c.count[rule]-maxPerRule, rule, f.Offset)})
	}
	sort.Stable(byOffset(out))
	if out == nil {
		out = []Finding{}
	}
	return out
}

// byOffset orders findings by offset, then rule. The sorts here and in
// write.go go through package sort's interface rather than slices' generic
// functions, each of whose instances weighs on the core WebAssembly module.
type byOffset []Finding

func (f byOffset) Len() int      { return len(f) }
func (f byOffset) Swap(i, j int) { f[i], f[j] = f[j], f[i] }
func (f byOffset) Less(i, j int) bool {
	if f[i].Offset != f[j].Offset {
		return f[i].Offset < f[j].Offset
	}
	return f[i].Rule < f[j].Rule
}

// note records a rule break seen while reading.
func (s *Shard) note(sev Severity, section string, off int64, rule, msg string, args ...any) {
	s.notes.add(sev, section, off, rule, msg, args...)
}

// Validate checks a parsed shard against the rules listed with the Rule
// constants and returns what it breaks, sorted by offset. now is the time
// (Unix seconds, as the footer keeps times) expiry and creation are judged
// against; 0 skips those checks. A key expiry or creation time of 0 means
// "not set".
//
// The work is bounded: chunk sizes are summed through per-xorb prefix sums,
// and range and file hashes are recomputed only until they have covered 16
// times the shard's chunk count, after which one info finding says what was
// skipped.
func Validate(s *Shard, now int64) []Finding {
	v := validator{s: s, c: s.notes.clone(), now: now}
	v.run()
	return v.c.result()
}

// ValidateUpload is Validate plus what the upload API requires of a shard:
// verification entries and a metadata ext for every file, and chunk hashes
// that are not keyed.
func ValidateUpload(s *Shard, now int64) []Finding {
	v := validator{s: s, c: s.notes.clone(), now: now}
	v.run()
	for i := range s.Files {
		f := &s.Files[i]
		if f.Verification == nil {
			v.c.add(Error, "files", f.Offset+32, RuleUploadVerify, "file %s has no verification entries; the upload API requires them", f.Hash)
		}
		if f.SHA256 == nil {
			v.c.add(Error, "files", f.Offset+32, RuleUploadSHA256, "file %s has no metadata ext (SHA-256); the upload API requires it", f.Hash)
		}
	}
	if v.keyed {
		v.c.add(Error, "footer", s.Footer.Offset+72, RuleUploadKeyed, "chunk hashes are keyed; an uploaded shard must carry plain chunk hashes")
	}
	return v.c.result()
}

type validator struct {
	s     *Shard
	c     findings
	now   int64
	keyed bool
	// xorbIndex maps a xorb hash to its first CAS block.
	xorbIndex map[xethash.Hash]int
	// prefix[x][i] is the sum of the sizes of chunks 0..i-1 of xorb x.
	prefix [][]uint64
	// roots[x] is the merkle root of xorb x's chunks, computed to check
	// its hash (unless keyed), and the root of a file made of exactly
	// those chunks: its file hash is checked without hashing them again.
	roots []xethash.Hash
	// budget is how many more chunk hashes range and file checks may visit.
	budget     int64
	overBudget bool
	hashes     []xethash.Hash
	entries    []xethash.Entry
}

func (v *validator) run() {
	s := v.s
	if s.Header.AppID != DefaultAppID {
		v.c.add(Info, "header", 0, RuleAppID, "application ID %q, not %q", s.Header.AppID, DefaultAppID)
	}
	v.keyed = s.Footer != nil && !s.Footer.ChunkHashKey.IsZero()
	if v.keyed {
		v.c.add(Info, "footer", s.Footer.Offset+72, RuleKeyed, "chunk hashes are keyed with the footer's chunk hash key; xorb, range and file hashes cannot be checked")
	}
	total := 0
	for i := range s.Xorbs {
		total += len(s.Xorbs[i].Chunks)
	}
	v.budget = 16*int64(total) + 1<<16
	v.xorbs()
	v.files()
	if s.Footer != nil {
		v.footer()
		v.lookups()
	} else if s.Layout.AfterCAS < s.Layout.Footer {
		v.c.add(Error, "cas", s.Layout.AfterCAS, RuleTrailingBytes, "%d bytes follow the CAS info bookend of an upload-form shard (footer size 0)", s.Layout.Footer-s.Layout.AfterCAS)
	}
}

func (v *validator) xorbs() {
	s := v.s
	v.xorbIndex = make(map[xethash.Hash]int, len(s.Xorbs))
	v.prefix = make([][]uint64, len(s.Xorbs))
	v.roots = make([]xethash.Hash, len(s.Xorbs))
	for i := range s.Xorbs {
		x := &s.Xorbs[i]
		if first, dup := v.xorbIndex[x.Hash]; dup {
			v.c.add(Warning, "cas", x.Offset, RuleDuplicateXorb, "xorb %s is described again (first at byte %d)", x.Hash, s.Xorbs[first].Offset)
		} else {
			v.xorbIndex[x.Hash] = i
		}
		if x.Flags != 0 {
			v.c.add(Warning, "cas", x.Offset+32, RuleFlagsReserved, "xorb cas_flags 0x%08x, want 0 (reserved)", x.Flags)
		}
		if len(x.Chunks) == 0 {
			v.c.add(Warning, "cas", x.Offset+36, RuleXorbEmpty, "xorb %s has no chunks", x.Hash)
		}
		prefix := make([]uint64, len(x.Chunks)+1)
		var pos uint64
		cumulative := true
		for j := range x.Chunks {
			ch := &x.Chunks[j]
			off := x.ChunkOffset(j)
			if cumulative && uint64(ch.ByteRangeStart) != pos {
				cumulative = false // later ones follow from this one; report the first
				v.c.add(Error, "cas", off+32, RuleByteRangeStart, "chunk %d of xorb %s: byteRangeStart %d, want %d (the sum of the sizes before it)", j, x.Hash, ch.ByteRangeStart, pos)
			}
			if ch.UnpackedBytes == 0 {
				v.c.add(Warning, "cas", off+36, RuleChunkEmpty, "chunk %d of xorb %s has 0 bytes", j, x.Hash)
			}
			if ch.Flags&^chunkFlagsKnown != 0 {
				v.c.add(Warning, "cas", off+40, RuleFlagsReserved, "chunk flags 0x%08x set reserved bits 0–30", ch.Flags)
			}
			if ch.Reserved != 0 {
				v.c.add(Warning, "cas", off+44, RuleReserved, "chunk entry reserved bytes 44–47 are 0x%08x, want 0", ch.Reserved)
			}
			pos += uint64(ch.UnpackedBytes)
			prefix[j+1] = pos
		}
		v.prefix[i] = prefix
		if pos != uint64(x.BytesInXorb) {
			v.c.add(Error, "cas", x.Offset+40, RuleBytesInXorb, "xorb %s: bytesInXorb %d, but its chunks add up to %d", x.Hash, x.BytesInXorb, pos)
		}
		if x.BytesOnDisk != 0 && uint64(x.BytesOnDisk) < 8*uint64(len(x.Chunks)) {
			v.c.add(Warning, "cas", x.Offset+44, RuleBytesOnDisk, "xorb %s: bytesOnDisk %d is less than the %d bytes of its %d chunk record headers", x.Hash, x.BytesOnDisk, 8*len(x.Chunks), len(x.Chunks))
		}
		if !v.keyed && len(x.Chunks) > 0 {
			v.entries = v.entries[:0]
			for j := range x.Chunks {
				v.entries = append(v.entries, xethash.Entry{Hash: x.Chunks[j].Hash, Size: uint64(x.Chunks[j].UnpackedBytes)})
			}
			v.roots[i] = xethash.MerkleRootInPlace(v.entries)
			if got := v.roots[i]; got != x.Hash { // the xorb hash
				v.c.add(Error, "cas", x.Offset, RuleXorbHash, "xorb hash %s, but its chunks hash to %s", x.Hash, got)
			}
		}
	}
}

// spend takes n chunk visits from the budget, and says once when it is out.
func (v *validator) spend(n int, off int64) bool {
	if v.budget < int64(n) {
		if !v.overBudget {
			v.overBudget = true
			v.c.add(Info, "files", off, RuleUnchecked, "range and file hashes from byte %d on were not recomputed: they cover more than 16 times the shard's chunks", off)
		}
		return false
	}
	v.budget -= int64(n)
	return true
}

func (v *validator) files() {
	s := v.s
	withVer := 0
	for i := range s.Files {
		if s.Files[i].Verification != nil {
			withVer++
		}
	}
	for i := range s.Files {
		f := &s.Files[i]
		if withVer > 0 && f.Verification == nil {
			v.c.add(Error, "files", f.Offset+32, RuleVerifyPartial, "file %s has no verification entries, but %d of the shard's %d files do", f.Hash, withVer, len(s.Files))
		}
		if f.Flags&^fileFlagsKnown != 0 {
			v.c.add(Warning, "files", f.Offset+32, RuleFlagsReserved, "file flags 0x%08x set reserved bits 0–29", f.Flags)
		}
		if len(f.Terms) == 0 && !f.Hash.IsZero() {
			v.c.add(Warning, "files", f.Offset+36, RuleFileNoTerms, "file %s has no terms (only the empty file, hash 0, has none)", f.Hash)
		}
		checkFile := !v.keyed && len(f.Terms) > 0
		var fileChunks int
		for j, t := range f.Terms {
			off := f.EntryOffset(j)
			if t.Flags != 0 {
				v.c.add(Warning, "files", off+32, RuleFlagsReserved, "term cas_flags 0x%08x, want 0 (reserved)", t.Flags)
			}
			if t.ChunkStart >= t.ChunkEnd {
				v.c.add(Error, "files", off+40, RuleTermEmpty, "term %d of file %s: chunk range [%d, %d) is empty", j, f.Hash, t.ChunkStart, t.ChunkEnd)
				checkFile = false
				continue
			}
			xi, ok := v.xorbIndex[t.Xorb]
			if !ok {
				v.c.add(Info, "files", off, RuleTermXorb, "term %d of file %s: xorb %s is not in this shard; its range, size and hashes cannot be checked", j, f.Hash, t.Xorb)
				checkFile = false
				continue
			}
			x := &s.Xorbs[xi]
			if int(t.ChunkEnd) > len(x.Chunks) {
				v.c.add(Error, "files", off+44, RuleTermRange, "term %d of file %s: chunk range [%d, %d) runs past the %d chunks of xorb %s", j, f.Hash, t.ChunkStart, t.ChunkEnd, len(x.Chunks), t.Xorb)
				checkFile = false
				continue
			}
			if sum := v.prefix[xi][t.ChunkEnd] - v.prefix[xi][t.ChunkStart]; sum != uint64(t.UnpackedBytes) {
				v.c.add(Error, "files", off+36, RuleTermSize, "term %d of file %s: unpackedBytes %d, but chunks [%d, %d) of its xorb add up to %d", j, f.Hash, t.UnpackedBytes, t.ChunkStart, t.ChunkEnd, sum)
			}
			fileChunks += int(t.ChunkEnd - t.ChunkStart)
			if f.Verification == nil || v.keyed || !v.spend(int(t.ChunkEnd-t.ChunkStart), off) {
				continue
			}
			v.hashes = v.hashes[:0]
			for _, ch := range x.Chunks[t.ChunkStart:t.ChunkEnd] {
				v.hashes = append(v.hashes, ch.Hash)
			}
			if got := xethash.Verification(v.hashes); got != f.Verification[j] {
				v.c.add(Error, "files", f.VerificationOffset(j), RuleRangeHash, "term %d of file %s: verification hash %s, but chunks [%d, %d) of xorb %s hash to %s", j, f.Hash, f.Verification[j], t.ChunkStart, t.ChunkEnd, t.Xorb, got)
			}
		}
		if !checkFile || !v.spend(fileChunks, f.Offset) {
			continue
		}
		if got := xethash.FileOfRoot(v.fileRoot(f)); got != f.Hash {
			v.c.add(Error, "files", f.Offset, RuleFileHash, "file hash %s, but its terms' chunks hash to %s", f.Hash, got)
		}
	}
}

// fileRoot is the merkle root of the chunks of f's terms, each of which
// names a xorb of the shard and a range within it: the xorb's root when f
// is one term over all of one xorb's chunks (a file stored alone in its
// xorb), else computed.
func (v *validator) fileRoot(f *File) xethash.Hash {
	if t := f.Terms[0]; len(f.Terms) == 1 && t.ChunkStart == 0 {
		if xi := v.xorbIndex[t.Xorb]; int(t.ChunkEnd) == len(v.s.Xorbs[xi].Chunks) {
			return v.roots[xi]
		}
	}
	v.entries = v.entries[:0]
	for _, t := range f.Terms {
		for _, ch := range v.s.Xorbs[v.xorbIndex[t.Xorb]].Chunks[t.ChunkStart:t.ChunkEnd] {
			v.entries = append(v.entries, xethash.Entry{Hash: ch.Hash, Size: uint64(ch.UnpackedBytes)})
		}
	}
	return xethash.MerkleRootInPlace(v.entries)
}

func (v *validator) footer() {
	s, f := v.s, v.s.Footer
	if f.Version != FooterVersion {
		v.c.add(Error, "footer", f.Offset, RuleFooterVersion, "footer version %d, want %d", f.Version, FooterVersion)
	}
	for _, c := range []struct {
		field     int64
		name      string
		got, want uint64
	}{
		{8, "file info section", f.FileInfoOffset, uint64(s.Layout.FileInfo)},
		{16, "CAS info section", f.CASInfoOffset, uint64(s.Layout.CASInfo)},
		{192, "footer", f.FooterOffset, uint64(s.Layout.Footer)},
	} {
		if c.got != c.want {
			v.c.add(Error, "footer", f.Offset+c.field, RuleFooterOffset, "footer says the %s is at %d, but it is at %d", c.name, c.got, c.want)
		}
	}
	want := s.ComputeTotals()
	for _, c := range []struct {
		field     int64
		name      string
		got, want uint64
	}{
		{168, "storedBytesOnDisk (Σ xorb bytesOnDisk)", f.Totals.StoredBytesOnDisk, want.StoredBytesOnDisk},
		{176, "materializedBytes (Σ term unpackedBytes)", f.Totals.MaterializedBytes, want.MaterializedBytes},
		{184, "storedBytes (Σ xorb bytesInXorb)", f.Totals.StoredBytes, want.StoredBytes},
	} {
		if c.got != c.want {
			v.c.add(Warning, "footer", f.Offset+c.field, RuleFooterTotals, "footer %s is %d, but the sections give %d", c.name, c.got, c.want)
		}
	}
	if v.now == 0 {
		return
	}
	now := v.now
	if f.KeyExpiry != 0 && f.KeyExpiry <= uint64(now) {
		v.c.add(Warning, "footer", f.Offset+112, RuleKeyExpired, "key expired at %s (%d); the shard must not be used to deduplicate", unixString(f.KeyExpiry), f.KeyExpiry)
	}
	if f.CreatedAt != 0 && f.CreatedAt > uint64(now)+3600 {
		v.c.add(Warning, "footer", f.Offset+104, RuleCreatedFuture, "created at %s (%d), in the future", unixString(f.CreatedAt), f.CreatedAt)
	}
	if f.CreatedAt != 0 && f.KeyExpiry != 0 && f.KeyExpiry < f.CreatedAt {
		v.c.add(Warning, "footer", f.Offset+112, RuleExpiryOrder, "key expiry %s is before creation %s", unixString(f.KeyExpiry), unixString(f.CreatedAt))
	}
}

// unixString writes Unix seconds as an RFC 3339 time in UTC, as
// time.Unix(sec, 0).UTC().Format(time.RFC3339) does (the time package
// would weigh on the WebAssembly module for this one use).
func unixString(sec uint64) string {
	if sec > 1<<40 {
		return "the far future"
	}
	days, rest := int64(sec/86400), int64(sec%86400)
	// The proleptic Gregorian date of a day count from 1970-01-01, by
	// eras of 400 years (H. Hinnant's days_from_civil, inverted).
	z := days + 719468
	era := z / 146097
	doe := z - era*146097
	yoe := (doe - doe/1460 + doe/36524 - doe/146096) / 365
	doy := doe - (365*yoe + yoe/4 - yoe/100)
	mp := (5*doy + 2) / 153
	d := doy - (153*mp+2)/5 + 1
	m := mp + 3
	if m > 12 {
		m -= 12
	}
	y := yoe + era*400
	if m <= 2 {
		y++
	}
	return textf.Sprintf("%04d-%02d-%02dT%02d:%02d:%02dZ", y, m, d, rest/3600, rest/60%60, rest%60)
}

func (v *validator) lookups() {
	s, f := v.s, v.s.Footer
	lo, hi := s.Layout.AfterCAS, s.Layout.Footer
	type span struct {
		name       string
		start, end uint64
	}
	var spans []span
	for _, t := range f.lookupTables() {
		if !tableFits(t.off, t.count, t.size, lo, hi) {
			// An empty table points at nothing, so a stray offset is only
			// untidy: some clients write 0 there in the shards they upload.
			severity := Error
			if t.count == 0 {
				severity = Warning
			}
			v.c.add(severity, "footer", f.Offset+t.field, RuleLookupRange, "%s lookup table: %d entries at %d do not fit between the end of the CAS info section (%d) and the footer (%d)", t.name, t.count, t.off, lo, hi)
			continue
		}
		if t.count > 0 {
			spans = append(spans, span{t.name, t.off, t.off + t.count*t.size})
		}
	}
	for i := 1; i < len(spans); i++ { // three at most
		for j := i; j > 0 && spans[j].start < spans[j-1].start; j-- {
			spans[j], spans[j-1] = spans[j-1], spans[j]
		}
	}
	at := uint64(lo)
	for i, sp := range spans {
		if i > 0 && sp.start < spans[i-1].end {
			v.c.add(Error, "lookups", int64(sp.start), RuleLookupOverlap, "%s lookup table at %d overlaps the %s lookup table ending at %d", sp.name, sp.start, spans[i-1].name, spans[i-1].end)
		}
		if sp.start > at {
			v.c.add(Warning, "lookups", int64(at), RuleLookupGap, "%d bytes at %d..%d belong to no lookup table", sp.start-at, at, sp.start)
		}
		at = max(at, sp.end)
	}
	if at < uint64(hi) {
		v.c.add(Warning, "lookups", int64(at), RuleLookupGap, "%d bytes at %d..%d, before the footer, belong to no lookup table", uint64(hi)-at, at, hi)
	}

	l := &s.Lookups
	fileAt, xorbAt := s.fileEntries(), s.xorbEntries()
	checkCount := func(field int64, name string, got, want int) {
		if got > 0 && got != want {
			v.c.add(Warning, "footer", f.Offset+field, RuleLookupCount, "%s lookup table has %d entries for %d %ss", name, got, want, name)
		}
	}
	checkCount(32, "file", len(l.Files), len(s.Files))
	checkCount(48, "CAS", len(l.Xorbs), len(s.Xorbs))
	total := 0
	for i := range s.Xorbs {
		total += len(s.Xorbs[i].Chunks)
	}
	checkCount(64, "chunk", len(l.Chunks), total)

	for _, t := range []recordLookupTable{
		{"file", "file info", "file", int64(f.FileLookupOffset), int64(fileLookupLayout.size), fileAt, len(l.Files),
			func(i int) (uint64, uint32) { return l.Files[i].Truncated, l.Files[i].Entry },
			func(i int) uint64 { return s.Files[i].Hash.Truncated() }},
		{"CAS", "CAS info", "xorb", int64(f.XorbLookupOffset), int64(xorbLookupLayout.size), xorbAt, len(l.Xorbs),
			func(i int) (uint64, uint32) { return l.Xorbs[i].Truncated, l.Xorbs[i].Entry },
			func(i int) uint64 { return s.Xorbs[i].Hash.Truncated() }},
	} {
		v.recordLookups(t)
	}
	for i, e := range l.Chunks {
		off := int64(f.ChunkLookupOffset) + int64(i*chunkLookupLayout.size)
		if i > 0 {
			v.lookupOrder("chunk", i, off, l.Chunks[i-1].Truncated, e.Truncated)
		}
		xi := entryOwner(xorbAt, e.Entry)
		switch {
		case xi < 0:
			v.c.add(Error, "lookups", off+8, RuleLookupIndex, "chunk lookup entry %d points at record %d of the CAS info section, which starts no xorb", i, e.Entry)
		case int(e.Chunk) >= len(s.Xorbs[xi].Chunks):
			v.c.add(Error, "lookups", off+12, RuleLookupIndex, "chunk lookup entry %d points at chunk %d of the %d of xorb %d", i, e.Chunk, len(s.Xorbs[xi].Chunks), xi)
		default:
			if h := s.Xorbs[xi].Chunks[e.Chunk].Hash.Truncated(); h != e.Truncated {
				v.c.add(Error, "lookups", off, RuleLookupHash, "chunk lookup entry %d: truncated hash %016x, but chunk %d of xorb %d has %016x", i, e.Truncated, e.Chunk, xi, h)
			}
		}
	}
}

// recordLookupTable is the file or the CAS lookup table, as recordLookups
// checks it: both map a truncated hash to the header record that starts the
// file or xorb with that hash.
type recordLookupTable struct {
	table     string  // the table's name in messages: "file" or "CAS"
	section   string  // the section whose records an entry counts
	item      string  // what a header record starts: "file" or "xorb"
	offset    int64   // the table's first byte in the shard
	entrySize int64   // bytes in one entry
	starts    []int64 // the header record of each item, ascending
	count     int     // entries in the table
	entry     func(i int) (truncated uint64, record uint32)
	itemHash  func(item int) uint64 // the truncated hash of an item
}

// recordLookups checks that the entries of t are sorted and that each
// points at the header record of an item with the entry's truncated hash.
func (v *validator) recordLookups(t recordLookupTable) {
	var previous uint64
	for i := range t.count {
		off := t.offset + int64(i)*t.entrySize
		truncated, record := t.entry(i)
		if i > 0 {
			v.lookupOrder(t.table, i, off, previous, truncated)
		}
		previous = truncated
		if item := entryOwner(t.starts, record); item < 0 {
			v.c.add(Error, "lookups", off+8, RuleLookupIndex, "%s lookup entry %d points at record %d of the %s section, which starts no %s", t.table, i, record, t.section, t.item)
		} else if h := t.itemHash(item); h != truncated {
			v.c.add(Error, "lookups", off, RuleLookupHash, "%s lookup entry %d: truncated hash %016x, but %s %d's is %016x", t.table, i, truncated, t.item, item, h)
		}
	}
}

// lookupOrder reports entry i of a lookup table when its truncated hash is
// below the one before it: readers binary-search the tables.
func (v *validator) lookupOrder(table string, i int, off int64, previous, truncated uint64) {
	if truncated < previous {
		v.c.add(Error, "lookups", off, RuleLookupUnsorted, "%s lookup entry %d is out of order (truncated hash %016x after %016x)", table, i, truncated, previous)
	}
}
