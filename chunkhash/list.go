package chunkhash

import (
	"bufio"
	"bytes"
	"io"
	"strconv"

	"github.com/xetkit/xetkit/formaterr"
	"github.com/xetkit/xetkit/xethash"
)

// AppendLine appends the line "<hash> <length>\n" of a chunk list, the
// format of the reference .chunks files and of "xetkit chunk".
func AppendLine(dst []byte, h xethash.Hash, length uint64) []byte {
	dst = h.AppendString(dst)
	dst = append(dst, ' ')
	dst = strconv.AppendUint(dst, length, 10)
	return append(dst, '\n')
}

// maxListChunk bounds a chunk length in a list: no chunk is longer than
// the 24-bit size field of a xorb chunk header allows.
const maxListChunk = 1<<24 - 1

// ParseList reads a chunk list ("<hash> <length>" per line; blank lines
// ignored) into (hash, size) entries. Errors name the line and byte offset.
func ParseList(r io.Reader) ([]xethash.Entry, error) {
	const format = "chunks list"
	var out []xethash.Entry
	br := bufio.NewReader(r)
	var offset int64
	for lineNo := 1; ; lineNo++ {
		line, err := br.ReadBytes('\n')
		if err != nil && err != io.EOF {
			return nil, err
		}
		start := offset
		offset += int64(len(line))
		fields := bytes.Fields(line)
		switch {
		case len(fields) == 0:
		case len(fields) != 2:
			return nil, formaterr.New(format, start, "line %d: want \"<hash> <length>\", got %d fields", lineNo, len(fields))
		default:
			h, perr := xethash.Parse(string(fields[0]))
			if perr != nil {
				return nil, formaterr.Wrap(format, start, perr, "line %d", lineNo)
			}
			n, perr := strconv.ParseUint(string(fields[1]), 10, 64)
			if perr != nil || n == 0 || n > maxListChunk {
				return nil, formaterr.New(format, start+int64(bytes.Index(line, fields[1])),
					"line %d: chunk length %q is not a number from 1 to %d", lineNo, fields[1], maxListChunk)
			}
			out = append(out, xethash.Entry{Hash: h, Size: n})
		}
		if err == io.EOF {
			return out, nil
		}
	}
}
