// Package ingest turns bytes into Xet through the upload pipeline, for the
// LFS transfers of clients without Xet: Pipeline is the function xetkit
// serve hands its hub (hub.Config.Ingest). It lives outside the hub so
// that the server imports no client package, while the one pipeline that
// chunks, deduplicates and cuts xorbs serves both.
package ingest

import (
	"context"
	"io"

	"github.com/xetkit/xetkit/hub/casserver"
	"github.com/xetkit/xetkit/pipeline"
)

// Pipeline stores the size bytes that open gives through sink (the hub's
// CAS layer: dedupe answers, xorbs and a shard carrying the SHA-256) and
// returns their SHA-256 in hex.
func Pipeline(ctx context.Context, sink casserver.Sink, size int64, open func() (io.Reader, error)) (string, error) {
	res, err := (&pipeline.Uploader{}).Run(ctx, sink, []pipeline.Source{{Name: "LFS object", Size: size, Open: open}})
	if err != nil {
		return "", err
	}
	return res[0].SHA256, nil
}

// The pipeline takes the sink as its store.
var _ pipeline.Store = casserver.Sink(nil)

// The hub takes Pipeline as its ingest.
var _ casserver.IngestFunc = Pipeline
