package chunking

// Chunk is one chunk found by a Chunker.
type Chunk struct {
	Offset int64  // where the chunk starts in the stream
	Data   []byte // the chunk's bytes; see Chunker.Push for how long they stay valid
}

// Chunker cuts a stream pushed in pieces of any size into the same chunks
// Boundaries finds in the whole. It keeps at most two chunks (MaxSize
// bytes each) of its own, and keeps them from stream to stream: a Chunker
// reused for many small files allocates nothing per file.
type Chunker struct {
	find    Finder
	pending []byte // bytes of the current, unfinished chunk
	// spare is the buffer of the chunk last returned from pending (valid
	// until the next call), the next pending after it.
	spare  []byte
	offset int64 // stream offset of the current chunk's first byte
	out    []Chunk
}

// NewChunker returns a Chunker at the start of a stream.
func NewChunker() *Chunker { return &Chunker{} }

// handOut returns the pending bytes as a chunk's data and starts the
// next chunk in the other buffer: the one handed out last time, which the
// caller is done with by now.
func (c *Chunker) handOut() []byte {
	data := c.pending
	c.pending, c.spare = c.spare[:0], data
	return data
}

// Push adds the next bytes of the stream and returns the chunks they
// complete. A returned chunk's Data points into p or into the Chunker's own
// buffer: it is valid until the next call to Push or Finish, and only while
// p is unchanged. The returned slice is reused by the next call.
func (c *Chunker) Push(p []byte) []Chunk {
	c.out = c.out[:0]
	for len(p) > 0 {
		n, boundary := c.find.Next(p)
		if !boundary {
			if c.pending == nil {
				c.pending = make([]byte, 0, MaxSize)
			}
			c.pending = append(c.pending, p...)
			break
		}
		data := p[:n:n]
		if len(c.pending) > 0 {
			// The chunk began in an earlier piece: join it in our buffer.
			// Earlier chunks of this call never point at c.pending, which
			// only ever holds the first chunk completed by a call.
			c.pending = append(c.pending, data...)
			data = c.handOut()
		}
		c.out = append(c.out, Chunk{Offset: c.offset, Data: data})
		c.offset += int64(len(data))
		p = p[n:]
	}
	return c.out
}

// Finish ends the stream and returns the last chunk, if any bytes remain.
// The Chunker is then reset for a new stream.
func (c *Chunker) Finish() []Chunk {
	c.out = c.out[:0]
	if len(c.pending) > 0 {
		c.out = append(c.out, Chunk{Offset: c.offset, Data: c.handOut()})
	}
	c.find = Finder{}
	c.offset = 0
	return c.out
}

// Offset returns how many bytes of the stream have been pushed.
func (c *Chunker) Offset() int64 { return c.offset + int64(len(c.pending)) }
