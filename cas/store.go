package cas

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"

	"github.com/xetkit/xetkit/shard"
	"github.com/xetkit/xetkit/xethash"
	"github.com/xetkit/xetkit/xorb"
)

// A Client is the pipeline's Store (pipeline.Store): what an upload
// session asks and sends goes through these three calls.

// Query asks the global dedupe API about a chunk: nil when the hub
// does not know it (404), is too busy to say (429: dedupe is an
// optimisation, not worth waiting for) or answers with something that is
// not a shard, which just means no dedupe. Other failures are errors like
// any other request's.
func (c *Client) Query(ctx context.Context, h xethash.Hash) (*shard.Shard, error) {
	var out *shard.Shard
	err := c.call(ctx, "dedupe query "+h.String(), scopeWrite, []int{statusNotFound, statusTooManyRequests},
		func(base string) (*Request, error) {
			return NewRequest(ctx, "GET", base+"/v1/chunks/default/"+h.String(), nil)
		}, func(resp *Response) error {
			if resp.StatusCode != statusOK {
				return nil
			}
			b, err := io.ReadAll(io.LimitReader(resp.Body, shard.MaxSize+1))
			if err != nil {
				return transient(err)
			}
			if sh, err := shard.Parse(b); err == nil {
				out = sh
			}
			return nil
		})
	return out, err
}

// PutXorb POSTs one xorb's chunk records. Like the reference client it
// sends no footer: the reference CAS rebuilds the footer from the records
// (and stops reading at one it is sent), so the footer would only cost
// bytes on the wire.
func (c *Client) PutXorb(ctx context.Context, b *xorb.Built) error {
	return c.call(ctx, "upload xorb "+b.Hash.String(), scopeWrite, nil, func(base string) (*Request, error) {
		req, err := postBytes(ctx, base+"/v1/xorbs/default/"+b.Hash.String(), b.Records())
		if err == nil {
			req.bulk = req.ContentLength >= BulkRequest
		}
		return req, err
	}, func(resp *Response) error {
		var r struct {
			WasInserted *bool `json:"was_inserted"`
		}
		return DecodeJSON(resp, &r)
	})
}

// PutShard registers one upload-form shard: POST /v2/shards, which streams
// its progress as NDJSON and ends in a result or an error event, as the
// reference client prefers; a hub without it (404 or 501) gets
// POST /v1/shards, then and from then on.
func (c *Client) PutShard(ctx context.Context, b []byte) error {
	if !c.shardV1.Load() {
		err := c.call(ctx, "upload shard", scopeWrite, nil, func(base string) (*Request, error) {
			return postBytes(ctx, base+"/v2/shards", b)
		}, readShardEvents)
		var he *HTTPError
		if !errors.As(err, &he) || (he.Status != statusNotFound && he.Status != statusNotImplemented) {
			return err
		}
		c.shardV1.Store(true)
	}
	return c.call(ctx, "upload shard", scopeWrite, nil, func(base string) (*Request, error) {
		return postBytes(ctx, base+"/v1/shards", b)
	}, func(resp *Response) error {
		var r struct {
			Result *int `json:"result"`
		}
		return DecodeJSON(resp, &r)
	})
}

// maxEventLine bounds one NDJSON event of a shard upload's answer.
const maxEventLine = 1 << 20

// readShardEvents reads a /v2/shards answer to its last event: "result" is
// success, "error" a refusal (retried when the hub says it may pass), and
// a stream that ends without either was cut short (retried).
func readShardEvents(resp *Response) error {
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 0, 4096), maxEventLine)
	for sc.Scan() {
		line := bytes.TrimSpace(sc.Bytes())
		if len(line) == 0 {
			continue
		}
		var ev struct {
			Type      string `json:"type"`
			Message   string `json:"message"`
			Retryable bool   `json:"retryable"`
		}
		if err := json.Unmarshal(line, &ev); err != nil {
			return fmt.Errorf("shard upload: an event that is not JSON: %q", line)
		}
		switch ev.Type {
		case "result":
			return nil
		case "error":
			herr := &HTTPError{Op: "upload shard", Method: resp.Request.Method, URL: redact(resp.Request),
				Status: resp.StatusCode, Message: ev.Message, Attempts: 1}
			if ev.Retryable {
				return transient(herr)
			}
			return herr
		}
		// "validating" and "committing" report progress; unknown types are
		// skipped, as the reference client does.
	}
	if err := sc.Err(); err != nil {
		return transient(fmt.Errorf("shard upload: reading the events: %w", err))
	}
	return transient(errors.New("shard upload: the answer ended without a result or error event"))
}
