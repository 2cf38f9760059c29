package hubapi

import (
	"net/http"

	"github.com/xetkit/xetkit/hub/internal/httpx"
	"github.com/xetkit/xetkit/hub/repos"
)

// The webhook settings routes of huggingface_hub 2.4 (create_webhook,
// list_webhooks, get_webhook, update_webhook, enable_webhook,
// disable_webhook, delete_webhook) and hf webhooks, over the repository
// service's webhooks (repos/webhooks.go); and a webhook's delivery log.

// webhookBody is what create_webhook and update_webhook send.
type webhookBody struct {
	URL         string          `json:"url"`
	JobSourceID string          `json:"jobSourceId"`
	Watched     []repos.Watched `json:"watched"`
	Domains     []string        `json:"domains"`
	Secret      *string         `json:"secret"`
}

// webhookJSON is a webhook as WebhookInfo reads it.
func webhookJSON(w *repos.Webhook) map[string]any {
	var secret any
	if w.Secret != "" {
		secret = w.Secret
	}
	watched := w.Watched
	if watched == nil {
		watched = []repos.Watched{}
	}
	return map[string]any{"id": w.ID, "url": w.URL, "job": nil, "watched": watched, "domains": w.Domains,
		"secret": secret, "disabled": w.Disabled, "createdAt": bucketTime(w.Created)}
}

// readWebhookBody reads a create or update body into a spec, or answers
// why not.
func (h *Server) readWebhookBody(w http.ResponseWriter, r *http.Request) (repos.WebhookSpec, bool) {
	var req webhookBody
	if !h.decodeBody(w, r, maxSmallBody, "webhook", &req) {
		return repos.WebhookSpec{}, false
	}
	if req.JobSourceID != "" {
		h.ans.Fail(w, http.StatusBadRequest, "this hub runs no Jobs: give the webhook a url instead of a jobSourceId")
		return repos.WebhookSpec{}, false
	}
	return repos.WebhookSpec{URL: req.URL, Watched: req.Watched, Domains: req.Domains, Secret: req.Secret}, true
}

// answerWebhook writes {webhook} or the refusal.
func (h *Server) answerWebhook(w http.ResponseWriter, r *http.Request, hook *repos.Webhook, err error) {
	if err != nil {
		h.fail(w, r, "webhook", err)
		return
	}
	httpx.WriteJSON(w, http.StatusOK, map[string]any{"webhook": webhookJSON(hook)})
}

// handleCreateWebhook answers POST /api/settings/webhooks.
func (h *Server) handleCreateWebhook(w http.ResponseWriter, r *http.Request) {
	sp, ok := h.readWebhookBody(w, r)
	if !ok {
		return
	}
	hook, err := h.repos.CreateWebhook(h.user(r), sp)
	h.answerWebhook(w, r, hook, err)
}

// handleListWebhooks answers GET /api/settings/webhooks: the caller's.
func (h *Server) handleListWebhooks(w http.ResponseWriter, r *http.Request) {
	u, ok := h.caller(w, r)
	if !ok {
		return
	}
	hooks, err := h.repos.Webhooks(u)
	h.answerList(w, r, "webhooks", shownAll(hooks, webhookJSON), err)
}

// handleWebhook answers GET /api/settings/webhooks/{id}.
func (h *Server) handleWebhook(w http.ResponseWriter, r *http.Request) {
	u, ok := h.caller(w, r)
	if !ok {
		return
	}
	hook, err := h.repos.Webhook(u, r.PathValue("id"))
	h.answerWebhook(w, r, hook, err)
}

// handleUpdateWebhook answers POST (and PUT) /api/settings/webhooks/{id}.
func (h *Server) handleUpdateWebhook(w http.ResponseWriter, r *http.Request) {
	sp, ok := h.readWebhookBody(w, r)
	if !ok {
		return
	}
	hook, err := h.repos.UpdateWebhook(h.user(r), r.PathValue("id"), sp)
	h.answerWebhook(w, r, hook, err)
}

// handleSetWebhookDisabled answers POST /api/settings/webhooks/{id}/enable
// and …/disable.
func (h *Server) handleSetWebhookDisabled(disabled bool) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		hook, err := h.repos.SetWebhookDisabled(h.user(r), r.PathValue("id"), disabled)
		h.answerWebhook(w, r, hook, err)
	}
}

// handleDeleteWebhook answers DELETE /api/settings/webhooks/{id}.
func (h *Server) handleDeleteWebhook(w http.ResponseWriter, r *http.Request) {
	if err := h.repos.DeleteWebhook(h.user(r), r.PathValue("id")); err != nil {
		h.fail(w, r, "webhook", err)
		return
	}
	httpx.WriteJSON(w, http.StatusOK, map[string]any{})
}

// handleWebhookDeliveries answers GET /api/settings/webhooks/{id}/deliveries
// (xetkit's; the Hub shows the same in its activity tab): the webhook's
// deliveries, newest first, each with its payload, state and attempts.
func (h *Server) handleWebhookDeliveries(w http.ResponseWriter, r *http.Request) {
	u, ok := h.caller(w, r)
	if !ok {
		return
	}
	hook, err := h.repos.Webhook(u, r.PathValue("id"))
	if err != nil {
		h.fail(w, r, "webhook", err)
		return
	}
	if h.cfg.WebhookLog == nil {
		httpx.WriteJSON(w, http.StatusOK, []any{})
		return
	}
	log, err := h.cfg.WebhookLog(hook.ID)
	if err != nil {
		h.fail(w, r, "webhook deliveries", err)
		return
	}
	httpx.WriteJSON(w, http.StatusOK, log)
}
