package shard

import "testing"

// TestLayoutSizes: every record the tables declare is as long as the
// format says (draft §9), so a field added to one must take bytes from a
// reserved field or change the format.
func TestLayoutSizes(t *testing.T) {
	for _, c := range []struct {
		name       string
		size, want int
	}{
		{headerLayout.name, headerLayout.size, HeaderSize},
		{fileLayout.name, fileLayout.size, RecordSize},
		{termLayout.name, termLayout.size, RecordSize},
		{verificationLayout.name, verificationLayout.size, RecordSize},
		{metadataExtLayout.name, metadataExtLayout.size, RecordSize},
		{xorbLayout.name, xorbLayout.size, RecordSize},
		{chunkLayout.name, chunkLayout.size, RecordSize},
		{fileBookendLayout.name, fileBookendLayout.size, RecordSize},
		{footerLayout.name, footerLayout.size, FooterSize},
		{fileLookupLayout.name, fileLookupLayout.size, 12},
		{xorbLookupLayout.name, xorbLookupLayout.size, 12},
		{chunkLookupLayout.name, chunkLookupLayout.size, 16},
	} {
		if c.size != c.want {
			t.Errorf("%s: the layout adds up to %d bytes, want %d", c.name, c.size, c.want)
		}
	}
}
