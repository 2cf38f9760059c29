package chunking

import "github.com/xetkit/xetkit/internal/textf"

// EachChunk calls fn with each of the chunks that data holds back to
// back, lens giving their lengths in order (a chunk list as it crosses
// from JavaScript, or a batch of the pipeline's). The lengths must cover
// data exactly.
func EachChunk(data []byte, lens []int, fn func(chunk []byte) error) error {
	for i, n := range lens {
		if n < 0 || n > len(data) {
			return textf.Errorf("chunking: chunk %d of %d bytes runs past the %d bytes left", i, n, len(data))
		}
		if err := fn(data[:n]); err != nil {
			return err
		}
		data = data[n:]
	}
	if len(data) != 0 {
		return textf.Errorf("chunking: %d bytes left over after the chunks", len(data))
	}
	return nil
}
