//go:build !js

package cas

import "net/http"

func defaultHTTP() Doer { return http.DefaultClient }
