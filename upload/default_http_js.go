//go:build js

package upload

import (
	"errors"
	"net/http"
)

// defaultHTTP under GOOS=js: none. The bindings always set Client.HTTP
// (to a fetch transport); leaving http.DefaultClient unreferenced keeps
// net/http's transport and TLS out of the WebAssembly module.
func defaultHTTP() Doer { return noClient{} }

type noClient struct{}

func (noClient) Do(*http.Request) (*http.Response, error) {
	return nil, errors.New("upload: Client.HTTP must be set under GOOS=js")
}
