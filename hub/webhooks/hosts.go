package webhooks

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"path"
	"strings"
	"syscall"
)

// Hosts is which hosts a hub may send webhooks to (serve --webhook-hosts),
// as Gitea's ALLOWED_HOST_LIST: a comma-separated list of
//
//	external  addresses that are none of the below: global unicast, not private
//	loopback  127.0.0.0/8 and ::1
//	private   RFC 1918, RFC 4193 (fc00::/7), link-local, and the reserved ranges
//	          (carrier-grade NAT, documentation, benchmarking, 6to4, Teredo, NAT64)
//	*         any host
//	a CIDR    any address in it, e.g. 10.1.0.0/16
//	a name    a host name, with * and ? as wildcards, e.g. *.example.com
//
// A URL's host is allowed when its name matches a name of the list, or
// when the address it resolves to, checked as the connection is made, is
// in one of the list's ranges: so a name cannot be made to resolve
// elsewhere between a check and the connection. The default is external.
type Hosts struct {
	spec     string
	any      bool
	external bool
	loopback bool
	private  bool
	prefixes []netip.Prefix
	names    []string
}

// DefaultHosts is the list a hub uses unless told otherwise.
const DefaultHosts = "external"

// ParseHosts reads a list of hosts (see Hosts).
func ParseHosts(list string) (*Hosts, error) {
	h := &Hosts{spec: list}
	for _, item := range strings.Split(list, ",") {
		item = strings.ToLower(strings.TrimSpace(item))
		switch item {
		case "":
			continue
		case "*":
			h.any = true
		case "external":
			h.external = true
		case "loopback":
			h.loopback = true
		case "private":
			h.private = true
		default:
			if p, err := netip.ParsePrefix(item); err == nil {
				h.prefixes = append(h.prefixes, p.Masked())
				continue
			}
			if a, err := netip.ParseAddr(item); err == nil {
				h.prefixes = append(h.prefixes, netip.PrefixFrom(a, a.BitLen()))
				continue
			}
			if _, err := path.Match(item, ""); err != nil || strings.ContainsAny(item, "/: ") {
				return nil, fmt.Errorf("webhook hosts: %q is none of external, loopback, private, *, a CIDR or a host name", item)
			}
			h.names = append(h.names, item)
		}
	}
	if !h.any && !h.external && !h.loopback && !h.private && len(h.prefixes) == 0 && len(h.names) == 0 {
		return nil, errors.New("webhook hosts: an empty list allows nothing; give external, loopback, private, *, CIDRs or host names")
	}
	return h, nil
}

// String is the list as given.
func (h *Hosts) String() string { return h.spec }

// allowsName reports whether host (a name, or an address literal) matches
// a name of the list.
func (h *Hosts) allowsName(host string) bool {
	if h.any {
		return true
	}
	host = strings.ToLower(strings.TrimSuffix(host, "."))
	for _, n := range h.names {
		if ok, _ := path.Match(n, host); ok {
			return true
		}
	}
	return false
}

// allowsAddr reports whether address a is in one of the list's ranges.
func (h *Hosts) allowsAddr(a netip.Addr) bool {
	a = a.Unmap()
	switch {
	case h.any:
		return true
	case h.loopback && a.IsLoopback():
		return true
	case h.private && isPrivate(a):
		return true
	case h.external && a.IsGlobalUnicast() && !isPrivate(a):
		return true
	}
	for _, p := range h.prefixes {
		if p.Contains(a) {
			return true
		}
	}
	return false
}

// Allows reports whether a URL to host, connecting to address a, may be
// called.
func (h *Hosts) Allows(host string, a netip.Addr) bool { return h.allowsName(host) || h.allowsAddr(a) }

// CheckLiteral refuses a host that is an address the list does not allow:
// what can be told before any connection (a name is checked as it is
// connected to).
func (h *Hosts) CheckLiteral(host string) error {
	a, err := netip.ParseAddr(strings.Trim(host, "[]"))
	if err != nil || h.Allows(host, a) {
		return nil
	}
	return fmt.Errorf("the address %s is not one this hub may call (serve --webhook-hosts %s; add loopback, private or a CIDR to allow it)", a, h.spec)
}

// reserved are the special-purpose ranges that net/netip's IsPrivate
// leaves out but that are no public destination either.
var reserved = func() []netip.Prefix {
	var out []netip.Prefix
	for _, s := range []string{
		"100.64.0.0/10",    // carrier-grade NAT (RFC 6598)
		"168.63.129.16/32", // a cloud's metadata endpoint
		"192.0.0.0/24",     // IETF protocol assignments (RFC 6890)
		"192.0.2.0/24",     // documentation (RFC 5737)
		"192.88.99.0/24",   // 6to4 relays (RFC 7526)
		"198.18.0.0/15",    // benchmarking (RFC 2544)
		"198.51.100.0/24",  // documentation
		"203.0.113.0/24",   // documentation
		"100::/64",         // discard (RFC 6666)
		"64:ff9b::/96",     // NAT64, which embeds IPv4 addresses (RFC 6052)
		"64:ff9b:1::/48",   // local NAT64 (RFC 8215)
		"2001::/32",        // Teredo (RFC 4380)
		"2001:10::/28",     // ORCHID
		"2001:20::/28",     // ORCHIDv2 (RFC 7343)
		"2001:db8::/32",    // documentation (RFC 3849)
		"2002::/16",        // 6to4 (RFC 3056)
	} {
		out = append(out, netip.MustParsePrefix(s))
	}
	return out
}()

// isPrivate reports whether a is a private, link-local or reserved
// address: never an external one.
func isPrivate(a netip.Addr) bool {
	if a.IsPrivate() || a.IsLinkLocalUnicast() || a.IsLinkLocalMulticast() || a.IsUnspecified() {
		return true
	}
	for _, p := range reserved {
		if p.Contains(a) {
			return true
		}
	}
	return false
}

// ErrRefused is a connection the host list refuses; it is not retried.
var ErrRefused = errors.New("refused by the hub's webhook hosts")

// Lookup resolves a host name to its addresses.
type Lookup func(ctx context.Context, host string) ([]netip.Addr, error)

// dialer makes the connections of deliveries: the host is resolved with
// lookup (nil: the system's resolver), and each address is checked
// against the list as the connection to it is made (the Dialer's Control
// hook sees the address it connects to), so what is connected to is what
// was checked.
func (h *Hosts) dialer(lookup Lookup) func(ctx context.Context, network, addr string) (net.Conn, error) {
	if lookup == nil {
		lookup = func(ctx context.Context, host string) ([]netip.Addr, error) {
			return net.DefaultResolver.LookupNetIP(ctx, "ip", host)
		}
	}
	return func(ctx context.Context, network, addr string) (net.Conn, error) {
		host, port, err := net.SplitHostPort(addr)
		if err != nil {
			return nil, err
		}
		addrs := []netip.Addr{}
		if a, err := netip.ParseAddr(host); err == nil {
			addrs = append(addrs, a)
		} else if addrs, err = lookup(ctx, host); err != nil {
			return nil, err
		}
		if len(addrs) == 0 {
			return nil, fmt.Errorf("%s resolves to no address", host)
		}
		d := &net.Dialer{Control: func(_, address string, _ syscall.RawConn) error {
			ip, _, err := net.SplitHostPort(address)
			if err != nil {
				return err
			}
			a, err := netip.ParseAddr(ip)
			if err != nil {
				return err
			}
			if !h.Allows(host, a) {
				return fmt.Errorf("%w: %s resolves to %s, which --webhook-hosts %s does not allow", ErrRefused, host, a, h.spec)
			}
			return nil
		}}
		var first error
		for _, a := range addrs {
			c, err := d.DialContext(ctx, network, net.JoinHostPort(a.Unmap().String(), port))
			if err == nil {
				return c, nil
			}
			if first == nil {
				first = err
			}
		}
		return nil, first
	}
}
