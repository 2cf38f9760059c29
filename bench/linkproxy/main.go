//go:build unix

// Command linkproxy puts an emulated wide-area link (package linkemu) in
// front of a server on loopback, for benchmarks: each request waits a
// round trip, each connection and the whole link are capped. Start the
// local hub with --url pointing at the proxy so that every URL it hands
// out goes through the link:
//
//	go run ./bench/linkproxy -target http://127.0.0.1:8080 -listen 127.0.0.1:9000 -stats 127.0.0.1:9001
//	xetkit serve --addr 127.0.0.1:8080 --url http://127.0.0.1:9000
//
// It prints its URL (and the stats URL) on stdout, one per line. The
// counters are printed as one line of JSON on SIGUSR1 and at exit
// (SIGINT, SIGTERM), and served on the -stats address: GET / returns them,
// POST /reset returns them and starts them again (totals from 0, maxima
// from what is open now). It builds on Unix only (for SIGUSR1).
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"log"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/xetkit/xetkit/internal/linkemu"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "linkproxy:", err)
		os.Exit(1)
	}
}

// rateFlag is a flag holding a rate in bytes per second (linkemu.ParseRate).
type rateFlag struct{ v *int64 }

func (r rateFlag) String() string {
	if r.v == nil {
		return ""
	}
	return fmt.Sprint(*r.v)
}

func (r rateFlag) Set(s string) (err error) {
	*r.v, err = linkemu.ParseRate(s)
	return err
}

func run() error {
	var cfg linkemu.Config
	cfg.ConnRate, cfg.LinkRate = 25e6, 100e6
	listen := flag.String("listen", "127.0.0.1:0", "loopback address the proxy listens on (port 0 picks a free one)")
	target := flag.String("target", "", "URL of the server behind the link, e.g. http://127.0.0.1:8080 (required)")
	stats := flag.String("stats", "", "also serve the counters as JSON on this loopback address (GET /, POST /reset), e.g. 127.0.0.1:0")
	trace := flag.String("trace", "", "write one line per request to this file when it ends: arrived, forwarded, answer's header and end (ms since start), method, path, status, body bytes up and down")
	verbose := flag.Bool("v", false, "log proxy errors (the server failing, clients going away mid-body) and answers of 400 or more to stderr")
	flag.DurationVar(&cfg.RTT, "rtt", 40*time.Millisecond, "round trip each request waits before it is forwarded")
	flag.DurationVar(&cfg.Handshake, "handshake", 0, "wait before a new connection's first byte (the TCP handshake's round trip)")
	flag.Var(rateFlag{&cfg.ConnRate}, "conn-rate", "cap of each client connection, in each direction, e.g. 25MB/s (MB = 10^6 B, MiB = 2^20; 0: none)")
	flag.Var(rateFlag{&cfg.LinkRate}, "link-rate", "cap of all connections together, in each direction, e.g. 100MB/s (0: none)")
	flag.Usage = func() {
		fmt.Fprintf(flag.CommandLine.Output(), "usage: linkproxy -target URL [flags]\n\n"+
			"An HTTP/1.1 reverse proxy emulating a wide-area link on loopback. It prints its URL,\n"+
			"and the counters as JSON on SIGUSR1 and at exit (and on -stats: GET /, POST /reset).\n\n")
		flag.PrintDefaults()
	}
	flag.Parse()
	if flag.NArg() != 0 {
		return fmt.Errorf("unexpected argument %q (flags only)", flag.Arg(0))
	}
	u, err := url.Parse(*target)
	if err != nil || *target == "" {
		return fmt.Errorf("-target %q: want the server's URL, e.g. http://127.0.0.1:8080", *target)
	}
	cfg.Target = u
	if *verbose {
		cfg.ErrorLog = log.New(os.Stderr, "", log.LstdFlags)
	}
	if *trace != "" {
		f, err := os.Create(*trace)
		if err != nil {
			return err
		}
		defer f.Close()
		cfg.Trace = f
	}
	p, err := linkemu.New(cfg)
	if err != nil {
		return err
	}
	for _, a := range []string{*listen, *stats} {
		if err := checkLoopback(a); err != nil {
			return err
		}
	}
	ln, err := net.Listen("tcp", *listen)
	if err != nil {
		return err
	}
	fmt.Printf("http://%s/\n", ln.Addr())
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if *stats != "" {
		sln, err := net.Listen("tcp", *stats)
		if err != nil {
			return err
		}
		fmt.Printf("stats: http://%s/\n", sln.Addr())
		srv := &http.Server{Handler: statsHandler(p)}
		go srv.Serve(sln)
		defer srv.Close()
	}
	usr1 := make(chan os.Signal, 1)
	signal.Notify(usr1, syscall.SIGUSR1)
	go func() {
		for range usr1 {
			printStats(p.Stats())
		}
	}()
	err = p.Serve(ctx, ln)
	printStats(p.Stats())
	return err
}

// checkLoopback refuses an address off this machine: the proxy is a
// bench tool with no protection of its own.
func checkLoopback(addr string) error {
	if addr == "" {
		return nil
	}
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("address %q: %v", addr, err)
	}
	if ip := net.ParseIP(host); host != "localhost" && (ip == nil || !ip.IsLoopback()) {
		return fmt.Errorf("address %q: want a loopback one, e.g. 127.0.0.1:0", addr)
	}
	return nil
}

func printStats(s linkemu.Stats) {
	b, _ := json.Marshal(s)
	fmt.Println(string(b))
}

// statsHandler serves the counters: GET / reads them, POST /reset reads
// and restarts them.
func statsHandler(p *linkemu.Proxy) http.Handler {
	mux := http.NewServeMux()
	reply := func(w http.ResponseWriter, s linkemu.Stats) {
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(s)
	}
	mux.HandleFunc("GET /{$}", func(w http.ResponseWriter, r *http.Request) { reply(w, p.Stats()) })
	mux.HandleFunc("POST /reset", func(w http.ResponseWriter, r *http.Request) { reply(w, p.Reset()) })
	return mux
}
