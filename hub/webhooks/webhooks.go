// Package webhooks delivers the repository service's events (package
// repos: WebhookEvent) to the webhooks that watch them, with the Hub's
// payload (version 3) and the webhook's secret in X-Webhook-Secret.
//
// An event is handed over once its change is durable and queued in
// memory, so the change never waits for it. A worker finds the webhooks
// it reaches and writes a delivery record for each under
// store.Deliveries, named {webhook}/{time}-{event}: its payload, its
// state (pending, delivered, failed, canceled) and every attempt, which is
// the webhook's delivery log. Each record is held by one process at a time
// through a lease in the record itself, taken and renewed by
// compare-and-swap: the process that made the change delivers its events,
// and a replica on the same store takes over a pending delivery only once
// its holder's lease ran out (the holder died). An event is therefore
// sent once across replicas, or again only when a holder died between
// sending it and recording that it did.
//
// A failed attempt (no answer, an answer other than 2xx) is tried again
// after a wait that doubles from Config.Backoff, up to
// Config.MaxAttempts in all; a host the hub may not call (Hosts) fails at
// once and is never called. A webhook disabled or deleted meanwhile ends
// its pending deliveries unsent.
package webhooks

import (
	"bytes"
	"cmp"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/xetkit/xetkit/hub/repos"
	"github.com/xetkit/xetkit/hub/store"
)

// Config configures a Dispatcher; Store, Repos and Hosts are required.
type Config struct {
	Store store.Store
	Repos *repos.Service
	Hosts *Hosts
	// BaseURL is the hub's URL, that payloads' URLs are built on.
	BaseURL string
	// MaxAttempts bounds the attempts of one delivery (default 5);
	// Backoff is the wait before the second (default 1 s), doubling after
	// each; Timeout bounds one attempt (default 10 s).
	MaxAttempts int
	Backoff     time.Duration
	Timeout     time.Duration
	// Lease is how long a process holds a delivery past its next attempt
	// before another may take it over (default 1 minute); ScanEvery is how
	// often a process looks for deliveries to take over (default 15 s).
	Lease     time.Duration
	ScanEvery time.Duration
	// Lookup resolves the hosts of webhook URLs (default: the system's
	// resolver).
	Lookup Lookup
	// Logf reports what went wrong in the background (default: nothing).
	Logf func(format string, args ...any)
}

// The bounds of a dispatcher.
const (
	// maxQueued bounds the events waiting for the worker: past it, events
	// are dropped (and counted) rather than holding the hub's memory.
	maxQueued = 100000
	// maxSending bounds the attempts under way at once.
	maxSending = 8
	// keepPerWebhook is how many finished deliveries a webhook's log
	// keeps.
	keepPerWebhook = 100
	// maxAnswer bounds what is read of a receiver's answer.
	maxAnswer = 64 << 10
)

// Delivery is one event's delivery to one webhook: its record, and an
// entry of the webhook's log.
type Delivery struct {
	ID       string          `json:"id"`
	Webhook  string          `json:"webhook"`
	Event    string          `json:"event"`
	Scope    string          `json:"scope"`
	Action   string          `json:"action"`
	Payload  json.RawMessage `json:"payload"`
	Created  time.Time       `json:"createdAt"`
	State    string          `json:"state"` // pending, delivered, failed, canceled
	Attempts []Attempt       `json:"attempts"`
	// Next is when the next attempt is due; Holder and Until the lease.
	Next   time.Time `json:"next,omitzero"`
	Holder string    `json:"holder,omitempty"`
	Until  time.Time `json:"until,omitzero"`
}

// Attempt is one try of a delivery: the receiver's status, or why there
// was none.
type Attempt struct {
	At     time.Time `json:"at"`
	Status int       `json:"status,omitempty"`
	Error  string    `json:"error,omitempty"`
	Millis int64     `json:"ms"`
}

// The states of a Delivery.
const (
	Pending   = "pending"
	Delivered = "delivered"
	Failed    = "failed"
	Canceled  = "canceled"
)

// Dispatcher delivers events; it is safe for concurrent use.
type Dispatcher struct {
	cfg    Config
	client *http.Client
	me     string // this process, as leases name it

	mu       sync.Mutex
	queue    []repos.WebhookEvent
	dropped  int
	sending  map[string]bool // deliveries this process runs
	finished map[string]bool // deliveries known to be over
	wake     chan struct{}
	sem      chan struct{}

	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup
}

// New starts a Dispatcher: its worker, and its scans of the store for
// deliveries to take over (one at once, for those a process that stopped
// left).
func New(cfg Config) *Dispatcher {
	cfg.MaxAttempts = cmp.Or(max(cfg.MaxAttempts, 0), 5)
	cfg.Backoff = cmp.Or(max(cfg.Backoff, 0), time.Second)
	cfg.Timeout = cmp.Or(max(cfg.Timeout, 0), 10*time.Second)
	cfg.Lease = cmp.Or(max(cfg.Lease, 0), time.Minute)
	cfg.ScanEvery = cmp.Or(max(cfg.ScanEvery, 0), 15*time.Second)
	if cfg.Logf == nil {
		cfg.Logf = func(string, ...any) {}
	}
	var me [8]byte
	rand.Read(me[:])
	d := &Dispatcher{cfg: cfg, me: hex.EncodeToString(me[:]), sending: map[string]bool{}, finished: map[string]bool{},
		wake: make(chan struct{}, 1), sem: make(chan struct{}, maxSending)}
	d.client = &http.Client{
		Timeout: cfg.Timeout,
		Transport: &http.Transport{
			Proxy:                 nil, // a proxy would be what the host list checks
			DialContext:           cfg.Hosts.dialer(cfg.Lookup),
			MaxIdleConns:          16,
			IdleConnTimeout:       30 * time.Second,
			TLSHandshakeTimeout:   cfg.Timeout,
			ResponseHeaderTimeout: cfg.Timeout,
		},
		// A redirect is an answer, not a delivery: it is not followed.
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
	d.ctx, d.cancel = context.WithCancel(context.Background())
	d.wg.Add(2)
	go d.work()
	go d.scan()
	return d
}

// Close stops the dispatcher: deliveries under way end, and what is
// pending stays in the store for the next process.
func (d *Dispatcher) Close() {
	d.cancel()
	d.wg.Wait()
}

// Emit queues event ev; it never blocks.
func (d *Dispatcher) Emit(ev repos.WebhookEvent) {
	d.mu.Lock()
	if len(d.queue) >= maxQueued {
		d.dropped++
		n := d.dropped
		d.mu.Unlock()
		d.cfg.Logf("webhooks: %d events dropped: the queue holds %d already", n, maxQueued)
		return
	}
	d.queue = append(d.queue, ev)
	d.mu.Unlock()
	select {
	case d.wake <- struct{}{}:
	default:
	}
}

// work turns queued events into deliveries.
func (d *Dispatcher) work() {
	defer d.wg.Done()
	for {
		d.mu.Lock()
		events := d.queue
		d.queue = nil
		d.mu.Unlock()
		for _, ev := range events {
			d.record(ev)
		}
		select {
		case <-d.ctx.Done():
			return
		case <-d.wake:
		}
	}
}

// record writes the deliveries of ev, one per webhook it reaches, held
// by this process, and starts them.
func (d *Dispatcher) record(ev repos.WebhookEvent) {
	hooks, err := d.cfg.Repos.WebhooksFor(ev)
	if err != nil {
		d.cfg.Logf("webhooks: event %s %s of %s: %v", ev.Scope, ev.Action, ev.Repo, err)
		return
	}
	now := time.Now().UTC()
	for _, h := range hooks {
		del := Delivery{
			ID: fmt.Sprintf("%020d-%s", ev.At.UnixNano(), ev.ID), Webhook: h.ID, Event: ev.ID, Scope: ev.Scope, Action: ev.Action,
			Payload: d.payload(ev, h.ID), Created: now, State: Pending, Attempts: []Attempt{},
			Next: now, Holder: d.me, Until: now.Add(d.cfg.Lease),
		}
		b, err := json.Marshal(&del)
		if err != nil {
			d.cfg.Logf("webhooks: %v", err)
			continue
		}
		name := h.ID + "/" + del.ID
		if err := d.cfg.Store.Swap(store.Deliveries, name, nil, b); err != nil {
			d.cfg.Logf("webhooks: recording delivery %s: %v", name, err)
			continue
		}
		d.start(name)
	}
}

// start runs delivery name in this process unless it does already.
func (d *Dispatcher) start(name string) {
	d.mu.Lock()
	if d.sending[name] || d.finished[name] {
		d.mu.Unlock()
		return
	}
	d.sending[name] = true
	d.mu.Unlock()
	d.wg.Add(1)
	go func() {
		defer d.wg.Done()
		d.run(name)
		d.mu.Lock()
		delete(d.sending, name)
		d.mu.Unlock()
	}()
}

// read reads delivery name and its bytes.
func (d *Dispatcher) read(name string) (*Delivery, []byte, error) {
	b, err := store.Read(d.cfg.Store, store.Deliveries, name)
	if err != nil {
		return nil, nil, err
	}
	var del Delivery
	if err := json.Unmarshal(b, &del); err != nil {
		return nil, nil, fmt.Errorf("%s: %w", d.cfg.Store.Where(store.Deliveries, name), err)
	}
	return &del, b, nil
}

// save swaps delivery name from old to del: false if another process
// changed it meanwhile (it holds it now).
func (d *Dispatcher) save(name string, old []byte, del *Delivery) ([]byte, bool) {
	b, err := json.Marshal(del)
	if err == nil {
		err = d.cfg.Store.Swap(store.Deliveries, name, old, b)
	}
	if err != nil {
		if !errors.Is(err, store.ErrSwapped) {
			d.cfg.Logf("webhooks: delivery %s: %v", name, err)
		}
		return nil, false
	}
	return b, true
}

// run makes the attempts of delivery name while this process holds it
// and it is pending.
func (d *Dispatcher) run(name string) {
	for {
		del, b, err := d.read(name)
		if err != nil {
			if !errors.Is(err, fs.ErrNotExist) {
				d.cfg.Logf("webhooks: %v", err)
			}
			return
		}
		now := time.Now().UTC()
		if del.State != Pending {
			d.over(name)
			return
		}
		if del.Holder != d.me && now.Before(del.Until) {
			return // another process holds it
		}
		if wait := del.Next.Sub(now); wait > 0 {
			if !d.sleep(wait) {
				return
			}
			continue
		}
		hook, err := d.cfg.Repos.WebhookByID(del.Webhook)
		if err != nil {
			d.cfg.Logf("webhooks: %v", err)
			if !d.sleep(d.cfg.Backoff) {
				return
			}
			continue
		}
		if hook == nil || hook.Disabled {
			del.State, del.Holder, del.Until = Canceled, "", time.Time{}
			why := "the webhook was deleted"
			if hook != nil {
				why = "the webhook is disabled"
			}
			del.Attempts = append(del.Attempts, Attempt{At: now, Error: why})
			d.save(name, b, del)
			d.over(name)
			return
		}
		// Hold it for the attempt and past it.
		del.Holder, del.Until = d.me, now.Add(d.cfg.Timeout+d.cfg.Lease)
		if b, err = d.claim(name, b, del); err != nil {
			return
		}
		at := d.attempt(hook, del.Payload)
		del.Attempts = append(del.Attempts, at)
		switch {
		case at.Status >= 200 && at.Status < 300:
			del.State = Delivered
		case strings.HasPrefix(at.Error, ErrRefused.Error()) || len(del.Attempts) >= d.cfg.MaxAttempts:
			del.State = Failed
		default:
			del.Next = time.Now().UTC().Add(d.cfg.Backoff << (len(del.Attempts) - 1))
			del.Until = del.Next.Add(d.cfg.Lease)
		}
		if del.State != Pending {
			del.Holder, del.Until, del.Next = "", time.Time{}, time.Time{}
		}
		if _, ok := d.save(name, b, del); !ok || del.State != Pending {
			d.over(name)
			return
		}
	}
}

// claim saves del, held by this process, over old.
func (d *Dispatcher) claim(name string, old []byte, del *Delivery) ([]byte, error) {
	b, ok := d.save(name, old, del)
	if !ok {
		return nil, store.ErrSwapped
	}
	return b, nil
}

// over notes that delivery name is finished (or held elsewhere).
func (d *Dispatcher) over(name string) {
	d.mu.Lock()
	d.finished[name] = true
	d.mu.Unlock()
}

// sleep waits for wait, false if the dispatcher stops meanwhile.
func (d *Dispatcher) sleep(wait time.Duration) bool {
	t := time.NewTimer(wait)
	defer t.Stop()
	select {
	case <-d.ctx.Done():
		return false
	case <-t.C:
		return true
	}
}

// attempt posts payload to webhook h once.
func (d *Dispatcher) attempt(h *repos.Webhook, payload []byte) Attempt {
	d.sem <- struct{}{}
	defer func() { <-d.sem }()
	start := time.Now()
	at := Attempt{At: start.UTC()}
	ctx, cancel := context.WithTimeout(d.ctx, d.cfg.Timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, h.URL, bytes.NewReader(payload))
	if err != nil {
		at.Error = err.Error()
		return at
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", "xetkit-webhooks/3")
	if h.Secret != "" {
		req.Header.Set("X-Webhook-Secret", h.Secret)
	}
	resp, err := d.client.Do(req)
	at.Millis = time.Since(start).Milliseconds()
	if err != nil {
		at.Error = err.Error()
		if errors.Is(err, ErrRefused) {
			at.Error = ErrRefused.Error() + ": " + err.Error()
		}
		return at
	}
	io.Copy(io.Discard, io.LimitReader(resp.Body, maxAnswer))
	resp.Body.Close()
	at.Status = resp.StatusCode
	return at
}

// scan looks at the store's deliveries now and every ScanEvery: pending
// ones whose holder's lease ran out are taken over; finished ones past
// the newest keepPerWebhook of their webhook are removed.
func (d *Dispatcher) scan() {
	defer d.wg.Done()
	for {
		d.scanOnce()
		if !d.sleep(d.cfg.ScanEvery) {
			return
		}
	}
}

func (d *Dispatcher) scanOnce() {
	names, err := d.cfg.Store.List(store.Deliveries)
	if err != nil {
		d.cfg.Logf("webhooks: listing deliveries: %v", err)
		return
	}
	done := map[string][]string{} // webhook → its finished deliveries, oldest first
	now := time.Now()
	for _, name := range names {
		hook, _, _ := strings.Cut(name, "/")
		d.mu.Lock()
		known, busy := d.finished[name], d.sending[name]
		d.mu.Unlock()
		if busy {
			continue
		}
		if known {
			done[hook] = append(done[hook], name)
			continue
		}
		del, _, err := d.read(name)
		if err != nil {
			continue
		}
		if del.State != Pending {
			d.over(name)
			done[hook] = append(done[hook], name)
			continue
		}
		if del.Holder == "" || now.After(del.Until) {
			d.start(name)
		}
	}
	for _, list := range done {
		slices.Sort(list)
		for _, name := range list[:max(0, len(list)-keepPerWebhook)] {
			if b, err := store.Read(d.cfg.Store, store.Deliveries, name); err == nil {
				if d.cfg.Store.Swap(store.Deliveries, name, b, nil) == nil {
					d.mu.Lock()
					delete(d.finished, name)
					d.mu.Unlock()
				}
			}
		}
	}
}

// Log is webhook id's deliveries, newest first (the most its log keeps).
func (d *Dispatcher) Log(id string) ([]Delivery, error) {
	names, err := d.cfg.Store.List(store.Deliveries)
	if err != nil {
		return nil, err
	}
	out := []Delivery{}
	for i := len(names) - 1; i >= 0 && len(out) < keepPerWebhook; i-- {
		if !strings.HasPrefix(names[i], id+"/") {
			continue
		}
		del, _, err := d.read(names[i])
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return nil, err
		}
		del.Holder, del.Until = "", time.Time{}
		out = append(out, *del)
	}
	return out, nil
}

// payload is event ev as the Hub sends it to webhook hook (version 3).
func (d *Dispatcher) payload(ev repos.WebhookEvent, hook string) json.RawMessage {
	base := strings.TrimSuffix(d.cfg.BaseURL, "/")
	id := ev.Repo
	web, api := base+"/"+id.WebPrefix(), base+"/api/"+id.Type+"s/"+id.String()
	repo := map[string]any{
		"type": id.Type, "name": id.String(), "id": ev.RepoUID, "private": ev.Private,
		"url": map[string]string{"web": web, "api": api}, "owner": map[string]string{"id": id.NS},
	}
	if ev.HeadSHA != "" {
		repo["headSha"] = ev.HeadSHA
	}
	p := map[string]any{
		"event":   map[string]string{"action": ev.Action, "scope": ev.Scope},
		"repo":    repo,
		"webhook": map[string]any{"id": hook, "version": 3},
	}
	if ev.UpdatedRefs != nil {
		refs := make([]map[string]any, 0, len(ev.UpdatedRefs))
		for _, r := range ev.UpdatedRefs {
			refs = append(refs, map[string]any{"ref": r.Ref, "oldSha": r.Old, "newSha": r.New})
		}
		p["updatedRefs"] = refs
	}
	if ev.UpdatedConfig != nil {
		p["updatedConfig"] = ev.UpdatedConfig
	}
	if ev.MovedTo != nil {
		p["movedTo"] = map[string]any{"name": ev.MovedTo.String(), "owner": map[string]string{"id": ev.MovedTo.NS}}
	}
	if dv := ev.Discussion; dv != nil {
		dweb, dapi := fmt.Sprintf("%s/discussions/%d", web, dv.Num), fmt.Sprintf("%s/discussions/%d", api, dv.Num)
		disc := map[string]any{
			"id": objectID(ev.RepoUID, fmt.Sprint(dv.Num)), "num": dv.Num, "title": dv.Title, "status": dv.Status,
			"isPullRequest": dv.IsPR, "author": map[string]string{"id": dv.Author},
			"url": map[string]string{"web": dweb, "api": dapi},
		}
		if dv.IsPR {
			changes := map[string]any{"base": dv.Base}
			if dv.MergeCommit != "" {
				changes["mergeCommitId"] = dv.MergeCommit
			}
			disc["changes"] = changes
		}
		p["discussion"] = disc
		if c := ev.Comment; c != nil {
			p["comment"] = map[string]any{
				"id": c.ID, "author": map[string]string{"id": c.Author}, "content": c.Text, "hidden": false,
				"url": map[string]string{"web": dweb + "#" + c.ID},
			}
		}
	}
	b, _ := json.Marshal(p)
	return b
}

// objectID is an id of 24 hex digits, as the Hub's are, for a thing the
// hub names otherwise (a discussion: its repository's uid and number).
func objectID(parts ...string) string {
	sum := sha256.Sum256([]byte(strings.Join(parts, "/")))
	return hex.EncodeToString(sum[:12])
}
