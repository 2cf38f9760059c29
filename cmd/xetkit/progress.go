package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/xetkit/xetkit/cas"
)

// errInterrupted is what a command returns when Ctrl-C (or SIGTERM)
// stopped it; run turns it into exit status 130.
var errInterrupted = errors.New("interrupted")

// interruptible returns a context cancelled by Ctrl-C or SIGTERM.
func interruptible() (context.Context, context.CancelFunc) {
	return signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
}

// interrupted returns errInterrupted when ctx was stopped by a signal, and
// err itself otherwise: a failure for any other reason keeps its own words.
func interrupted(ctx context.Context, err error) error {
	if err != nil && ctx.Err() != nil {
		return errInterrupted
	}
	return err
}

// isTerminal reports whether w is a terminal (a character device).
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}

// outputFlags are the flags that choose how a long command reports:
// a live bar on a terminal, plain lines elsewhere, nothing with --quiet,
// and results as JSON with --json.
type outputFlags struct {
	quiet, json bool
}

func (o *outputFlags) register(fs *flag.FlagSet) {
	fs.BoolVar(&o.quiet, "quiet", false, "no progress on standard error")
	fs.BoolVar(&o.json, "json", false, "print the result as JSON")
}

// meter returns the progress display for this command's standard error,
// or nil under --quiet.
func (o *outputFlags) meter(e *env, label string) *meter {
	if o.quiet {
		return nil
	}
	now := time.Now()
	m := &meter{w: e.stderr, tty: e.terminal(e.stderr), label: label, start: now, total: -1}
	if !m.tty {
		m.last = now // a plain line only once a transfer has taken a while
	}
	return m
}

// meter shows how far a transfer has come: on a terminal one line redrawn
// in place (bytes, rate, ETA), elsewhere a plain line every few seconds.
// A nil *meter shows nothing. Safe for concurrent use.
type meter struct {
	w     io.Writer
	tty   bool
	label string

	mu         sync.Mutex
	start      time.Time
	last       time.Time
	done       int64
	total      int64  // -1 while unknown
	drawn      bool   // a terminal line is showing
	extra      string // shown after the rate, e.g. "resumed 1.0 GiB"
	retried    string // the last retry, shown until a while after its wait
	retryEnds  time.Time
	finished   bool
	lineEvery  time.Duration // plain lines; 0: default
	frameEvery time.Duration // terminal redraws; 0: default
}

// set records progress: done bytes of total (-1 if unknown).
func (m *meter) set(done, total int64) {
	if m == nil {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	m.done, m.total = done, total
	m.tick()
}

// tick draws the line when it is due; the caller holds m.mu.
func (m *meter) tick() {
	every := m.frameEvery
	if every == 0 {
		every = 100 * time.Millisecond
	}
	if !m.tty {
		if every = m.lineEvery; every == 0 {
			every = 2 * time.Second
		}
	}
	now := time.Now()
	if m.finished || now.Sub(m.last) < every {
		return
	}
	m.last = now
	m.draw(now)
}

// note sets what the line shows after the rate.
func (m *meter) note(s string) {
	if m == nil {
		return
	}
	m.mu.Lock()
	m.extra = s
	m.mu.Unlock()
}

// retryShown is how long a retry stays on the line once its wait is over.
const retryShown = 5 * time.Second

// retry shows a request about to be tried again: what failed, the attempt
// and the wait. On a terminal it joins the line, drawn again at once;
// elsewhere it is a line of its own.
func (m *meter) retry(r cas.Retry) {
	if m == nil {
		return
	}
	text := fmt.Sprintf("%s: %s; attempt %d of %d in %s", shortHashes(r.Op), r.Reason(), r.Attempt, r.Of, r.Wait.Round(100*time.Millisecond))
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.finished {
		return
	}
	now := time.Now()
	if !m.tty {
		fmt.Fprintf(m.w, "%s: %s\n", m.label, text)
		return
	}
	m.retried, m.retryEnds = text, now.Add(r.Wait+retryShown)
	m.last = now
	m.draw(now)
}

// line shows s as a line of its own (on a terminal above the live line,
// drawn again at the next update).
func (m *meter) line(s string) {
	if m == nil {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	m.clearLine()
	fmt.Fprintln(m.w, s)
}

// clearLine clears the terminal line, if one shows; the caller holds m.mu.
func (m *meter) clearLine() {
	if m.drawn {
		fmt.Fprint(m.w, "\r\x1b[K")
		m.drawn = false
	}
}

// shortHashes cuts the 64-digit hashes in s to their first 8 digits.
func shortHashes(s string) string {
	words := strings.Fields(s)
	for i, w := range words {
		if len(w) == 64 && strings.Trim(w, "0123456789abcdef") == "" {
			words[i] = w[:8] + "…"
		}
	}
	return strings.Join(words, " ")
}

// add counts n more bytes done.
func (m *meter) add(n int64) {
	if m == nil {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	m.done += n // writers of several files at once count together
	m.tick()
}

// finish clears the terminal line; later updates are ignored.
func (m *meter) finish() {
	if m == nil {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	m.clearLine()
	m.finished = true
}

func (m *meter) draw(now time.Time) {
	if m.retried != "" && now.After(m.retryEnds) {
		m.retried = ""
	}
	line := m.text(now.Sub(m.start))
	if m.tty {
		fmt.Fprintf(m.w, "\r\x1b[K%s", line)
		m.drawn = true
		return
	}
	fmt.Fprintln(m.w, line)
}

// text is "LABEL  12.0 MiB / 40.0 MiB  30%  [#####.....]  8.1 MiB/s  ETA 4s".
func (m *meter) text(elapsed time.Duration) string {
	var b strings.Builder
	b.WriteString(m.label)
	b.WriteString("  ")
	b.WriteString(byteSize(m.done))
	rate := 0.0
	if s := elapsed.Seconds(); s > 0 {
		rate = float64(m.done) / s
	}
	if m.total >= 0 {
		pct := 100.0
		if m.total > 0 {
			pct = 100 * float64(min(m.done, m.total)) / float64(m.total)
		}
		fmt.Fprintf(&b, " / %s  %3.0f%%", byteSize(m.total), pct)
		if m.tty {
			const width = 20
			n := int(pct / 100 * width)
			fmt.Fprintf(&b, "  [%s%s]", strings.Repeat("#", n), strings.Repeat(".", width-n))
		}
	}
	fmt.Fprintf(&b, "  %s/s", byteSize(int64(rate)))
	if m.total >= 0 && rate > 0 && m.done < m.total {
		eta := time.Duration(float64(m.total-m.done) / rate * float64(time.Second))
		fmt.Fprintf(&b, "  ETA %s", eta.Round(time.Second))
	}
	if m.extra != "" {
		b.WriteString("  ")
		b.WriteString(m.extra)
	}
	if m.retried != "" {
		b.WriteString("  retrying ")
		b.WriteString(m.retried)
	}
	return b.String()
}

// byteSize is n in B, KiB, MiB or GiB with one decimal.
func byteSize(n int64) string {
	const unit = 1024
	if n < unit {
		return fmt.Sprintf("%d B", n)
	}
	v, i := float64(n)/unit, 0
	for v >= unit && i < 2 {
		v /= unit
		i++
	}
	return fmt.Sprintf("%.1f %ciB", v, "KMG"[i])
}
