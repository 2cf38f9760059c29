package repos

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/xetkit/xetkit/hub/store"
)

// Webhooks, as the Hub's settings keep them: each belongs to the user who
// made it, watches users, organisations, repositories or buckets, for the
// domains "repo" and "discussion", and is sent to a URL with its secret.
// They are one record under store.Webhooks (webhookRecord), replaced
// whole by compare-and-swap, so replicas on one store share them. Who may
// see a repository decides whether its events reach a webhook: a private
// repository's only reach the webhooks of people of its namespace. The
// deliveries are package hub/webhooks'.

// Webhook is a webhook of a user.
type Webhook struct {
	ID       string    `json:"id"`
	Owner    string    `json:"owner"`
	URL      string    `json:"url"`
	Watched  []Watched `json:"watched"`
	Domains  []string  `json:"domains"`
	Secret   string    `json:"secret,omitempty"`
	Disabled bool      `json:"disabled"`
	Created  time.Time `json:"created"`
}

// Watched is one thing a webhook watches: a user, an organisation, a
// repository (model, dataset, space) or a bucket, by name.
type Watched struct {
	Type string `json:"type"`
	Name string `json:"name"`
}

// WebhookSpec is what a webhook is made or changed with; a field left
// zero (nil, "") keeps what the webhook has.
type WebhookSpec struct {
	URL     string
	Watched []Watched
	Domains []string
	Secret  *string
}

// Bounds of webhooks.
const (
	maxWebhooksPerUser = 100
	maxWebhooks        = 1000
	maxWatched         = 100
	maxWebhookURL      = 2048
	maxWebhookSecret   = 256
)

// webhookRecordName is the name of the one record of webhooks.
const webhookRecordName = "all"

// webhookRecord is every webhook of the hub.
type webhookRecord struct {
	Hooks []*Webhook `json:"webhooks"`
}

// loadWebhooks reads the webhooks and the bytes of their record (nil:
// none yet).
func (s *Service) loadWebhooks() (*webhookRecord, []byte, error) {
	var rec webhookRecord
	b, err := readRecord(s.store, store.Webhooks, webhookRecordName, &rec)
	if errors.Is(err, fs.ErrNotExist) {
		return &rec, nil, nil
	}
	return &rec, b, err
}

// changeWebhooks lets change edit the webhooks and saves them, again from
// a fresh read if another process changed them meanwhile.
func (s *Service) changeWebhooks(change func(rec *webhookRecord) error) error {
	for range 20 {
		rec, old, err := s.loadWebhooks()
		if err != nil {
			return err
		}
		if err := change(rec); err != nil {
			return err
		}
		b, err := json.MarshalIndent(rec, "", "  ")
		if err != nil {
			return err
		}
		if err := s.store.Swap(store.Webhooks, webhookRecordName, old, b); !errors.Is(err, store.ErrSwapped) {
			return err
		}
	}
	return errors.New("the webhooks record keeps changing: try again")
}

// The webhook watched types and domains.
var (
	watchedTypes   = []string{"user", "org", "model", "dataset", "space", "bucket"}
	webhookDomains = []string{"repo", "discussion"}
)

// check refuses a spec no webhook may have; create says every field a new
// webhook needs must be there. checkURL, if set, refuses a URL the hub
// may not call.
func (sp *WebhookSpec) check(create bool, checkURL func(*url.URL) error) error {
	if create && sp.URL == "" {
		return refuse(Invalid, "a webhook needs a url (this hub runs no Jobs)")
	}
	if sp.URL != "" {
		if len(sp.URL) > maxWebhookURL {
			return refuse(Invalid, "a url of %d bytes; at most %d", len(sp.URL), maxWebhookURL)
		}
		u, err := url.Parse(sp.URL)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Hostname() == "" || u.User != nil {
			return refuse(Invalid, "url %q: want http:// or https:// and a host (no user name in it)", sp.URL)
		}
		if checkURL != nil {
			if err := checkURL(u); err != nil {
				return refuse(Invalid, "url %q: %v", sp.URL, err)
			}
		}
	}
	if create && len(sp.Watched) == 0 {
		return refuse(Invalid, "a webhook watches something: give watched [{type, name}]")
	}
	if len(sp.Watched) > maxWatched {
		return refuse(Invalid, "%d watched items; at most %d", len(sp.Watched), maxWatched)
	}
	for _, w := range sp.Watched {
		if !slices.Contains(watchedTypes, w.Type) {
			return refuse(Invalid, "watched type %q: want one of %s", w.Type, strings.Join(watchedTypes, ", "))
		}
		var err error
		if w.Type == "user" || w.Type == "org" {
			if checkNamespace(w.Type, w.Name) != nil {
				err = refuse(Invalid, "watched %s %q is not a name", w.Type, w.Name)
			}
		} else {
			_, err = ParseAnyID(w.Type, w.Name)
		}
		if err != nil {
			return err
		}
	}
	for _, d := range sp.Domains {
		if !slices.Contains(webhookDomains, d) {
			return refuse(Invalid, "domain %q: want repo or discussion", d)
		}
	}
	if sp.Secret != nil {
		if len(*sp.Secret) > maxWebhookSecret {
			return refuse(Invalid, "a secret of %d bytes; at most %d", len(*sp.Secret), maxWebhookSecret)
		}
		for _, r := range *sp.Secret {
			if r < 0x20 || r > 0x7e {
				return refuse(Invalid, "a secret of printable ASCII characters only (it is sent in the X-Webhook-Secret header)")
			}
		}
	}
	return nil
}

// checkWebhookURL refuses a webhook URL the hub may not call (serve
// --webhook-hosts: Config.WebhookURL), where that can be told from the
// URL alone.
func (s *Service) checkWebhookURL(u *url.URL) error {
	if s.cfg.WebhookURL == nil {
		return nil
	}
	return s.cfg.WebhookURL(u)
}

// CreateWebhook makes a webhook for u.
func (s *Service) CreateWebhook(u *User, sp WebhookSpec) (*Webhook, error) {
	if err := signedIn(u, "creating a webhook", true); err != nil {
		return nil, err
	}
	if err := sp.check(true, s.checkWebhookURL); err != nil {
		return nil, err
	}
	var id [12]byte
	rand.Read(id[:])
	w := &Webhook{ID: hex.EncodeToString(id[:]), Owner: u.Name, URL: sp.URL, Watched: sp.Watched, Domains: sp.Domains, Created: s.now().UTC()}
	if len(w.Domains) == 0 {
		w.Domains = slices.Clone(webhookDomains)
	}
	if sp.Secret != nil {
		w.Secret = *sp.Secret
	}
	err := s.changeWebhooks(func(rec *webhookRecord) error {
		mine := 0
		for _, h := range rec.Hooks {
			if strings.EqualFold(h.Owner, u.Name) {
				mine++
			}
		}
		switch {
		case mine >= maxWebhooksPerUser:
			return refuse(TooMany, "%s has %d webhooks, the most one user has", u.Name, mine)
		case len(rec.Hooks) >= maxWebhooks:
			return refuse(TooMany, "this hub has %d webhooks, the most it keeps", len(rec.Hooks))
		}
		rec.Hooks = append(rec.Hooks, w)
		return nil
	})
	if err != nil {
		return nil, err
	}
	return w, nil
}

// Webhooks lists u's webhooks.
func (s *Service) Webhooks(u *User) ([]*Webhook, error) {
	if err := signedIn(u, "listing webhooks", false); err != nil {
		return nil, err
	}
	rec, _, err := s.loadWebhooks()
	if err != nil {
		return nil, err
	}
	out := []*Webhook{}
	for _, h := range rec.Hooks {
		if strings.EqualFold(h.Owner, u.Name) {
			out = append(out, h)
		}
	}
	return out, nil
}

// noWebhook is the miss of webhook id.
func noWebhook(id string) error { return refuse(NotFound, "webhook %q not found", id) }

// Webhook is u's webhook id: another's is the same NotFound as none.
func (s *Service) Webhook(u *User, id string) (*Webhook, error) {
	if err := signedIn(u, "reading a webhook", false); err != nil {
		return nil, err
	}
	rec, _, err := s.loadWebhooks()
	if err != nil {
		return nil, err
	}
	for _, h := range rec.Hooks {
		if h.ID == id && strings.EqualFold(h.Owner, u.Name) {
			return h, nil
		}
	}
	return nil, noWebhook(id)
}

// changeWebhook applies change to u's webhook id and returns it.
func (s *Service) changeWebhook(u *User, id, what string, change func(w *Webhook) error) (*Webhook, error) {
	if err := signedIn(u, what, true); err != nil {
		return nil, err
	}
	var out *Webhook
	err := s.changeWebhooks(func(rec *webhookRecord) error {
		for _, h := range rec.Hooks {
			if h.ID == id && strings.EqualFold(h.Owner, u.Name) {
				out = h
				return change(h)
			}
		}
		return noWebhook(id)
	})
	return out, err
}

// UpdateWebhook changes u's webhook id as sp says: the fields given
// replace the webhook's (an empty watched list keeps its own, since a
// webhook watching nothing is of no use).
func (s *Service) UpdateWebhook(u *User, id string, sp WebhookSpec) (*Webhook, error) {
	if err := sp.check(false, s.checkWebhookURL); err != nil {
		return nil, err
	}
	return s.changeWebhook(u, id, "changing a webhook", func(w *Webhook) error {
		if sp.URL != "" {
			w.URL = sp.URL
		}
		if len(sp.Watched) > 0 {
			w.Watched = sp.Watched
		}
		if len(sp.Domains) > 0 {
			w.Domains = sp.Domains
		}
		if sp.Secret != nil {
			w.Secret = *sp.Secret
		}
		return nil
	})
}

// SetWebhookDisabled disables (or enables) u's webhook id: a disabled
// one is sent nothing, not even what its pending deliveries hold.
func (s *Service) SetWebhookDisabled(u *User, id string, disabled bool) (*Webhook, error) {
	return s.changeWebhook(u, id, "enabling or disabling a webhook", func(w *Webhook) error {
		w.Disabled = disabled
		return nil
	})
}

// DeleteWebhook deletes u's webhook id.
func (s *Service) DeleteWebhook(u *User, id string) error {
	if err := signedIn(u, "deleting a webhook", true); err != nil {
		return err
	}
	return s.changeWebhooks(func(rec *webhookRecord) error {
		for i, h := range rec.Hooks {
			if h.ID == id && strings.EqualFold(h.Owner, u.Name) {
				rec.Hooks = slices.Delete(rec.Hooks, i, i+1)
				return nil
			}
		}
		return noWebhook(id)
	})
}

// WebhookByID is webhook id whoever it belongs to, for a delivery (nil:
// deleted).
func (s *Service) WebhookByID(id string) (*Webhook, error) {
	rec, _, err := s.loadWebhooks()
	if err != nil {
		return nil, err
	}
	for _, h := range rec.Hooks {
		if h.ID == id {
			return h, nil
		}
	}
	return nil, nil
}

// WebhooksFor are the enabled webhooks event ev reaches: those whose
// domains hold its scope's, that watch its repository (by name, by
// namespace as a user or an organisation), and whose owner may see it.
func (s *Service) WebhooksFor(ev WebhookEvent) ([]*Webhook, error) {
	rec, _, err := s.loadWebhooks()
	if err != nil {
		return nil, err
	}
	domain, _, _ := strings.Cut(ev.Scope, ".")
	var out []*Webhook
	for _, h := range rec.Hooks {
		if h.Disabled || !slices.Contains(h.Domains, domain) || !watches(h, ev.Repo) {
			continue
		}
		if ev.Private && !s.owner(h.Owner).Owns(ev.Repo.NS) {
			continue
		}
		out = append(out, h)
	}
	return out, nil
}

// watches reports whether webhook h watches repository (or bucket) id.
func watches(h *Webhook, id ID) bool {
	for _, w := range h.Watched {
		switch w.Type {
		case "user", "org":
			if strings.EqualFold(w.Name, id.NS) {
				return true
			}
		default:
			if w.Type == id.Type && strings.EqualFold(w.Name, id.String()) {
				return true
			}
		}
	}
	return false
}

// owner is the user a webhook's owner is, as far as who may see what
// goes: nil (who sees only public repositories) for one the hub no longer
// knows.
func (s *Service) owner(name string) *User {
	if name == LocalName && (s.cfg.UserToken != "" || s.cfg.Users == nil) {
		return localUser(RoleWrite)
	}
	return s.cfg.Users.named(name)
}

// String names the webhook, for messages.
func (w *Webhook) String() string { return fmt.Sprintf("webhook %s of %s to %s", w.ID, w.Owner, w.URL) }
