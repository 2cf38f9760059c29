//go:build !js

package upload

import "net/http"

func defaultHTTP() Doer { return http.DefaultClient }
