package webhooks

import (
	"context"
	"errors"
	"net"
	"net/netip"
	"sync/atomic"
	"testing"
)

func TestParseHosts(t *testing.T) {
	for _, bad := range []string{"", " , ", "10.0.0.0/33", "a b", "host:80", "[x"} {
		if _, err := ParseHosts(bad); err == nil {
			t.Errorf("ParseHosts(%q) took it", bad)
		}
	}
	for _, good := range []string{"external", "loopback,private", "*", "10.0.0.0/8, 192.168.1.7", "*.example.com,hooks.internal"} {
		if _, err := ParseHosts(good); err != nil {
			t.Errorf("ParseHosts(%q): %v", good, err)
		}
	}
}

// TestAllows holds each list to the addresses and names it allows.
func TestAllows(t *testing.T) {
	cases := []struct {
		list, host, addr string
		want             bool
	}{
		{"external", "example.com", "93.184.216.34", true},
		{"external", "example.com", "2606:2800:220:1::1", true},
		{"external", "x", "127.0.0.1", false},
		{"external", "x", "::1", false},
		{"external", "x", "10.1.2.3", false},
		{"external", "x", "172.16.0.1", false},
		{"external", "x", "192.168.1.1", false},
		{"external", "x", "169.254.169.254", false}, // link-local: cloud metadata
		{"external", "x", "fe80::1", false},
		{"external", "x", "fc00::1", false},
		{"external", "x", "100.64.0.1", false},
		{"external", "x", "0.0.0.0", false},
		{"external", "x", "::ffff:127.0.0.1", false}, // IPv4 in IPv6
		{"external", "x", "64:ff9b::a9fe:a9fe", false},
		{"loopback", "x", "127.0.0.1", true},
		{"loopback", "x", "127.9.9.9", true},
		{"loopback", "x", "::1", true},
		{"loopback", "x", "10.0.0.1", false},
		{"loopback", "x", "8.8.8.8", false},
		{"private", "x", "10.0.0.1", true},
		{"private", "x", "127.0.0.1", false},
		{"private", "x", "8.8.8.8", false},
		{"10.1.0.0/16", "x", "10.1.200.3", true},
		{"10.1.0.0/16", "x", "10.2.0.1", false},
		{"192.168.1.7", "x", "192.168.1.7", true},
		{"*.example.com", "hooks.example.com", "10.0.0.1", true}, // the operator named it
		{"*.example.com", "example.org", "8.8.8.8", false},
		{"*", "x", "127.0.0.1", true},
	}
	for _, c := range cases {
		h, err := ParseHosts(c.list)
		if err != nil {
			t.Fatal(err)
		}
		if got := h.Allows(c.host, netip.MustParseAddr(c.addr)); got != c.want {
			t.Errorf("%q allows %s at %s: %v, want %v", c.list, c.host, c.addr, got, c.want)
		}
	}
	h, _ := ParseHosts(DefaultHosts)
	if h.CheckLiteral("127.0.0.1") == nil || h.CheckLiteral("[::1]") == nil || h.CheckLiteral("10.0.0.1") == nil {
		t.Error("the default list takes a loopback or private address literal")
	}
	if h.CheckLiteral("localhost") != nil || h.CheckLiteral("8.8.8.8") != nil {
		t.Error("the default list refuses a name (checked when connecting) or a public address")
	}
}

// TestDialChecksTheResolvedAddress: a name is checked on the address it
// resolves to, as the connection is made; a refused one is never
// connected to.
func TestDialChecksTheResolvedAddress(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	var accepted atomic.Int32
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			accepted.Add(1)
			c.Close()
		}
	}()
	_, port, _ := net.SplitHostPort(ln.Addr().String())
	lookup := func(_ context.Context, host string) ([]netip.Addr, error) {
		switch host {
		case "looks-public.test":
			return []netip.Addr{netip.MustParseAddr("127.0.0.1")}, nil
		case "intranet.test":
			return []netip.Addr{netip.MustParseAddr("10.77.0.9")}, nil
		}
		return nil, errors.New("no such host")
	}
	def, _ := ParseHosts(DefaultHosts)
	for _, host := range []string{"looks-public.test", "intranet.test", "127.0.0.1"} {
		_, err := def.dialer(lookup)(context.Background(), "tcp", net.JoinHostPort(host, port))
		if !errors.Is(err, ErrRefused) {
			t.Errorf("default list, %s: %v, want a refusal", host, err)
		}
	}
	if n := accepted.Load(); n != 0 {
		t.Fatalf("refused hosts were connected to %d times", n)
	}
	lo, _ := ParseHosts("loopback")
	c, err := lo.dialer(lookup)(context.Background(), "tcp", net.JoinHostPort("looks-public.test", port))
	if err != nil {
		t.Fatalf("loopback list: %v", err)
	}
	c.Close()
	if _, err := lo.dialer(lookup)(context.Background(), "tcp", net.JoinHostPort("intranet.test", port)); !errors.Is(err, ErrRefused) {
		t.Errorf("loopback list, a private address: %v, want a refusal", err)
	}
}
