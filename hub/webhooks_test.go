package hub_test

import (
	"context"
	"encoding/json"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/xetkit/xetkit/hub"
	"github.com/xetkit/xetkit/hub/store"
)

// Webhook deliveries across replicas and the hosts a hub may call. What a
// receiver gets from the reference client's changes (payloads, secrets,
// retries, a disabled webhook) is test/python/test_webhooks.py's.

// receiver is a webhook receiver on loopback that records what it gets;
// answer, if set, decides each answer (and may block).
type receiver struct {
	srv    *httptest.Server
	mu     sync.Mutex
	got    []map[string]any
	answer func(n int) int
}

func newReceiver(t *testing.T, answer func(n int) int) *receiver {
	rc := &receiver{answer: answer}
	rc.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var p map[string]any
		json.NewDecoder(r.Body).Decode(&p)
		rc.mu.Lock()
		rc.got = append(rc.got, p)
		n := len(rc.got)
		rc.mu.Unlock()
		status := 200
		if rc.answer != nil {
			status = rc.answer(n)
		}
		w.WriteHeader(status)
	}))
	t.Cleanup(rc.srv.Close)
	return rc
}

func (rc *receiver) count() int {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return len(rc.got)
}

// waitFor polls cond for up to a minute (the machine may be slow: no
// timing is asserted, only that it happens).
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(time.Minute); !cond(); time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("waited a minute for %s", what)
		}
	}
}

// delivery is an entry of a webhook's log.
type delivery struct {
	Scope, State string
	Attempts     []struct {
		Status int
		Error  string
	}
}

func (th *testHub) deliveries(tok, hook string) []delivery {
	th.t.Helper()
	var log []delivery
	th.decode("GET", "/api/settings/webhooks/"+hook+"/deliveries", tok, nil, 200, &log)
	return log
}

// createWebhook makes a webhook of tok watching ns and returns its id.
func (th *testHub) createWebhook(tok, url, ns string) string {
	th.t.Helper()
	var answer struct{ Webhook struct{ ID string } }
	body := `{"url":"` + url + `","watched":[{"type":"user","name":"` + ns + `"}],"domains":["repo"],"secret":"sh"}`
	th.decode("POST", "/api/settings/webhooks", tok, []byte(body), 200, &answer)
	return answer.Webhook.ID
}

// TestWebhookOnceAcrossReplicas: two hubs on one store send each event
// once, and one takes over a delivery the other was making when it
// stopped.
func TestWebhookOnceAcrossReplicas(t *testing.T) {
	ownStores(t)
	opts := hub.WebhookOptions{Hosts: "loopback", Backoff: 20 * time.Millisecond, Lease: 300 * time.Millisecond, ScanEvery: 50 * time.Millisecond}
	replicas := func() (*testHub, *testHub) {
		shared := store.NewMem()
		return newHub(t, hub.Config{Store: shared, Webhooks: opts}), newHub(t, hub.Config{Store: shared, Webhooks: opts})
	}
	a, b := replicas()
	rc := newReceiver(t, nil)
	a.createWebhook(userToken, rc.srv.URL+"/hook", "local")
	b.commitAs(userToken, "local/m", "f", []byte("one")) // made, then committed to
	a.commitAs(userToken, "local/m", "f", []byte("two"))
	waitFor(t, "three deliveries", func() bool { return rc.count() >= 3 })
	time.Sleep(10 * opts.ScanEvery) // both replicas scan the store meanwhile
	rc.mu.Lock()
	var scopes []string
	for _, p := range rc.got {
		scopes = append(scopes, p["event"].(map[string]any)["scope"].(string))
	}
	rc.mu.Unlock()
	// Each once; the two replicas send side by side, so in any order.
	slices.Sort(scopes)
	if strings.Join(scopes, " ") != "repo repo.content repo.content" {
		t.Fatalf("the receiver got %v, want each event once", scopes)
	}

	// c dies while its receiver holds its first attempt; d takes over once
	// c's lease has run out.
	c, d := replicas()
	release := make(chan struct{})
	slow := newReceiver(t, func(n int) int {
		if n == 1 {
			<-release
		}
		return 200
	})
	hook := c.createWebhook(userToken, slow.srv.URL+"/hook", "local")
	c.decode("POST", "/api/repos/create", userToken, []byte(`{"name":"local/m"}`), 200, nil)
	waitFor(t, "the first attempt", func() bool { return slow.count() == 1 })
	c.h.Close()
	close(release)
	waitFor(t, "the delivery taken over", func() bool {
		log := d.deliveries(userToken, hook)
		return len(log) == 1 && log[0].State == "delivered"
	})
	if log := d.deliveries(userToken, hook); len(log[0].Attempts) != 2 || log[0].Attempts[1].Status != 200 {
		t.Fatalf("the log after the takeover: %+v", log)
	}
}

// TestWebhookHostsRefuse: with the default hosts, a webhook to a loopback
// or private address is refused, by its literal when it is made, by the
// address its name resolves to when it is sent, and never called.
func TestWebhookHostsRefuse(t *testing.T) {
	rc := newReceiver(t, nil)
	_, port, _ := net.SplitHostPort(strings.TrimPrefix(rc.srv.URL, "http://"))
	lookup := func(_ context.Context, host string) ([]netip.Addr, error) {
		switch host {
		case "sneaky.test":
			return []netip.Addr{netip.MustParseAddr("127.0.0.1")}, nil
		case "intranet.test":
			return []netip.Addr{netip.MustParseAddr("10.66.0.7")}, nil
		}
		return nil, errors.New("no such host")
	}
	th := newHub(t, hub.Config{Webhooks: hub.WebhookOptions{Lookup: lookup, Backoff: 10 * time.Millisecond}})
	for _, url := range []string{rc.srv.URL + "/hook", "http://[::1]:" + port + "/", "http://10.0.0.8/", "http://169.254.169.254/latest"} {
		body := `{"url":"` + url + `","watched":[{"type":"user","name":"local"}]}`
		status, msg, _ := th.do("POST", "/api/settings/webhooks", userToken, []byte(body))
		wantStatus(t, "a webhook to "+url, status, msg, 400, "webhook-hosts")
	}
	sneaky := th.createWebhook(userToken, "http://sneaky.test:"+port+"/hook", "local")
	intranet := th.createWebhook(userToken, "http://intranet.test/hook", "local")
	th.decode("POST", "/api/repos/create", userToken, []byte(`{"name":"local/m"}`), 200, nil)
	for _, hook := range []string{sneaky, intranet} {
		waitFor(t, "the refusal", func() bool {
			log := th.deliveries(userToken, hook)
			return len(log) == 1 && log[0].State == "failed"
		})
		log := th.deliveries(userToken, hook)
		if len(log[0].Attempts) != 1 || !strings.Contains(log[0].Attempts[0].Error, "webhook hosts") {
			t.Errorf("%s: %+v, want one refused attempt", hook, log[0])
		}
	}
	if n := rc.count(); n != 0 {
		t.Fatalf("the receiver behind a refused name was called %d times", n)
	}
}
