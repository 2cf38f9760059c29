package hubapi

import (
	"fmt"
	"net/http"
	"strings"

	"github.com/xetkit/xetkit/hub/internal/httpx"
)

// yamlProblem is one entry of a validate-yaml answer's errors or warnings.
type yamlProblem struct {
	Message string `json:"message"`
}

// handleValidateYAML answers POST /api/validate-yaml, which huggingface_hub
// calls before committing a README.md. The local hub holds no metadata
// schema, so it checks only that a front matter block which is opened is
// also closed; the answer always carries "errors" and "warnings" lists,
// which the client reads before it looks at the status.
func (h *Server) handleValidateYAML(w http.ResponseWriter, r *http.Request) {
	var req struct {
		Content  string `json:"content"`
		RepoType string `json:"repoType"`
	}
	limit := int64(maxAnonymousCardBody)
	if u, ok := h.caller(w, r); !ok {
		return
	} else if u != nil {
		limit = maxCardBody
	}
	if err := readJSON(r, limit, &req); err != nil {
		httpx.WriteJSON(w, http.StatusBadRequest, map[string]any{"error": "malformed validate-yaml body: " + err.Error(),
			"errors": []yamlProblem{{"malformed request body: " + err.Error()}}, "warnings": []yamlProblem{}})
		return
	}
	errs := []yamlProblem{}
	if t := req.RepoType; t != "" && t != "model" && t != "dataset" && t != "space" {
		errs = append(errs, yamlProblem{fmt.Sprintf("unknown repoType %q: model, dataset or space", t)})
	}
	if msg := frontMatterProblem(req.Content); msg != "" {
		errs = append(errs, yamlProblem{msg})
	}
	status := http.StatusOK
	if len(errs) > 0 {
		status = http.StatusBadRequest
	}
	httpx.WriteJSON(w, status, map[string]any{"errors": errs, "warnings": []yamlProblem{}})
}

// frontMatterProblem says what is wrong with a README's front matter block
// (a first line "---" up to the next line "---"), or "" when nothing is.
func frontMatterProblem(content string) string {
	content = strings.ReplaceAll(content, "\r\n", "\n")
	if !strings.HasPrefix(content, "---\n") {
		return ""
	}
	for _, line := range strings.Split(content[4:], "\n") {
		if line == "---" {
			return ""
		}
	}
	return "the metadata block opened by --- on the first line is never closed by a line ---"
}
