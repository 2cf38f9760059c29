// Command xetkit chunks, hashes and inspects Xet data, builds and parses
// shards and xorbs, uploads to and downloads from a Xet hub, and serves the
// local hub with its web pages and the shard viewer. Run "xetkit help" for the commands.
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"github.com/agnivade/levenshtein"
)

// command is one subcommand. Files in this package register theirs from
// init, so each command lives beside its own flags and help.
type command struct {
	name    string // as typed: "chunk", "shard parse"
	usage   string // arguments after the name: "FILE|-"
	summary string // one line for "xetkit help"
	details string // more, for "xetkit help CMD" and "CMD -h" (optional)
	// run carries out the command: c is the command itself and fs a fresh
	// flag set for it, to which run adds its flags before parsing args.
	run func(e *env, c *command, fs *flag.FlagSet, args []string) error
}

var commands = map[string]*command{}

func register(c *command) {
	if _, dup := commands[c.name]; dup {
		panic("xetkit: command registered twice: " + c.name)
	}
	commands[c.name] = c
}

// env is what a command reads and writes; tests swap it for buffers.
type env struct {
	stdin          io.Reader
	stdout, stderr io.Writer
	// isTerminal, if set, replaces the terminal check (tests).
	isTerminal func(io.Writer) bool
}

// terminal reports whether w, one of e's outputs, is a terminal.
func (e *env) terminal(w io.Writer) bool {
	if e.isTerminal != nil {
		return e.isTerminal(w)
	}
	return isTerminal(w)
}

// usageError is a mistake in how the command was called (exit status 2).
type usageError struct{ msg string }

func (e *usageError) Error() string { return e.msg }

func usagef(format string, args ...any) error {
	return &usageError{fmt.Sprintf(format, args...)}
}

func main() {
	os.Exit(run(&env{stdin: os.Stdin, stdout: os.Stdout, stderr: os.Stderr}, os.Args[1:]))
}

// run executes one command line and returns the exit status: 0 done, 1 bad
// input or failure, 2 a usage mistake. It never lets a panic escape as a
// stack trace.
func run(e *env, args []string) (status int) {
	defer func() {
		if r := recover(); r != nil {
			fmt.Fprintf(e.stderr, "xetkit: internal error: %v\n", r)
			status = 1
		}
	}()
	switch {
	case len(args) == 0 || isHelpFlag(args[0]):
		printHelp(e.stdout)
		return 0
	case args[0] == "--version":
		args = []string{"version"}
	case args[0] == "help":
		return runHelp(e, args[1:])
	}
	if sub := groupCommands(args[0]); len(sub) > 0 && (len(args) == 1 || isHelpFlag(args[1])) {
		// A group alone ("xetkit shard") or with -h lists its commands.
		if len(args) == 1 {
			printGroupHelp(e.stderr, args[0], sub)
			return 2
		}
		printGroupHelp(e.stdout, args[0], sub)
		return 0
	}
	cmd, rest, err := lookup(args)
	if err != nil {
		fmt.Fprintf(e.stderr, "xetkit: %v\n", err)
		return 2
	}
	return finish(e, cmd, cmd.run(e, cmd, newFlags(e, cmd), rest))
}

// finish reports a command's error and turns it into the exit status.
func finish(e *env, cmd *command, err error) int {
	if err == nil || errors.Is(err, flag.ErrHelp) {
		return 0
	}
	fmt.Fprintf(e.stderr, "xetkit %s: %s\n", cmd.name, oneLine(err.Error()))
	var ue *usageError
	switch {
	case errors.As(err, &ue):
		return 2
	case errors.Is(err, errInterrupted):
		return 130 // as a shell reports a command ended by SIGINT
	}
	return 1
}

func isHelpFlag(s string) bool { return s == "-h" || s == "-help" || s == "--help" }

// runHelp is "xetkit help [COMMAND|GROUP]": the tool's, a group's or a
// command's help (the last is what "COMMAND -h" prints).
func runHelp(e *env, args []string) int {
	if len(args) == 0 {
		printHelp(e.stdout)
		return 0
	}
	if sub := groupCommands(args[0]); len(sub) > 0 && len(args) == 1 {
		printGroupHelp(e.stdout, args[0], sub)
		return 0
	}
	cmd, rest, err := lookup(args)
	if err != nil || len(rest) > 0 {
		if err == nil {
			err = fmt.Errorf("help takes one command, got %q", strings.Join(args, " "))
		}
		fmt.Fprintf(e.stderr, "xetkit help: %v\n", err)
		return 2
	}
	return finish(e, cmd, cmd.run(e, cmd, newFlags(e, cmd), []string{"-h"}))
}

// groupCommands lists the commands of a group ("shard" → "shard build",
// "shard parse", ...), sorted; none when name is not a group.
func groupCommands(name string) []string {
	var group []string
	for n := range commands {
		if strings.HasPrefix(n, name+" ") {
			group = append(group, n)
		}
	}
	sort.Strings(group)
	return group
}

func printGroupHelp(w io.Writer, group string, names []string) {
	fmt.Fprintf(w, "usage: xetkit %s COMMAND\n\nCommands:\n", group)
	for _, n := range names {
		printCommandLine(w, commands[n])
	}
	fmt.Fprintf(w, "\n\"xetkit %s COMMAND -h\" lists a command's flags.\n", group)
}

func printCommandLine(w io.Writer, c *command) {
	fmt.Fprintf(w, "  xetkit %s\n      %s\n", strings.TrimSpace(c.name+" "+c.usage), c.summary)
}

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

// lookup finds the command named by the first one or two words.
func lookup(args []string) (*command, []string, error) {
	if len(args) >= 2 {
		if c, ok := commands[args[0]+" "+args[1]]; ok {
			return c, args[2:], nil
		}
	}
	if c, ok := commands[args[0]]; ok {
		return c, args[1:], nil
	}
	typed := args[0]
	if group := groupCommands(args[0]); len(group) > 0 {
		if len(args) == 1 {
			return nil, nil, fmt.Errorf("%q needs a subcommand: %s", args[0], strings.Join(group, ", "))
		}
		typed = args[0] + " " + args[1]
	}
	msg := fmt.Sprintf("unknown command %q", typed)
	if s := suggest(typed, typoCandidates()); s != "" {
		msg += fmt.Sprintf("; did you mean %q?", s)
	}
	return nil, nil, errors.New(msg + " (run \"xetkit help\")")
}

func commandNames() []string {
	names := make([]string, 0, len(commands))
	for n := range commands {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// typoCandidates are the commands and the group names, for suggest.
func typoCandidates() []string {
	names := commandNames()
	for _, n := range commandNames() {
		if g, _, ok := strings.Cut(n, " "); ok && !slices.Contains(names, g) {
			names = append(names, g)
		}
	}
	return names
}

// suggest returns the candidate closest to typed by edit distance, or "" if
// none is close enough to be a plausible typo.
func suggest(typed string, candidates []string) string {
	best, bestDist := "", -1
	for _, c := range candidates {
		d := levenshtein.ComputeDistance(typed, c)
		if bestDist < 0 || d < bestDist {
			best, bestDist = c, d
		}
	}
	if bestDist < 0 || bestDist > max(2, len(typed)/3) {
		return ""
	}
	return best
}

func printHelp(w io.Writer) {
	fmt.Fprintln(w, "xetkit: chunk, hash, inspect and move Xet data")
	fmt.Fprintln(w)
	fmt.Fprintln(w, "Commands:")
	for _, n := range commandNames() {
		printCommandLine(w, commands[n])
	}
	fmt.Fprintln(w)
	fmt.Fprintln(w, "FILE may be - for standard input. \"xetkit help COMMAND\" or \"xetkit COMMAND -h\"")
	fmt.Fprintln(w, "shows a command's flags. Exit status: 0 done, 1 failed, 2 usage mistake, 130 interrupted.")
}

// newFlags returns a FlagSet for cmd that reports errors to the caller
// instead of exiting, and prints its help on -h.
func newFlags(e *env, c *command) *flag.FlagSet {
	fs := flag.NewFlagSet("xetkit "+c.name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.Usage = func() {}
	_ = e
	return fs
}

// parseFlags parses flags anywhere among the arguments (Go's flag package
// stops at the first positional one) and turns an unknown flag into a
// did-you-mean. It returns the positional arguments.
func parseFlags(e *env, c *command, fs *flag.FlagSet, args []string) ([]string, error) {
	var positional []string
	for {
		err := fs.Parse(args)
		if errors.Is(err, flag.ErrHelp) {
			fmt.Fprintf(e.stdout, "usage: xetkit %s %s\n  %s\n", c.name, c.usage, c.summary)
			if c.details != "" {
				fmt.Fprintf(e.stdout, "\n%s\n\n", strings.TrimSpace(c.details))
			}
			fs.SetOutput(e.stdout)
			fs.PrintDefaults()
			return nil, flag.ErrHelp
		}
		if err != nil {
			return nil, flagError(fs, err)
		}
		rest := fs.Args()
		if len(rest) == 0 {
			return positional, nil
		}
		if rest[0] == "--" {
			return append(positional, rest[1:]...), nil
		}
		positional = append(positional, rest[0])
		args = rest[1:]
	}
}

func flagError(fs *flag.FlagSet, err error) error {
	const prefix = "flag provided but not defined: "
	msg := err.Error()
	if !strings.HasPrefix(msg, prefix) {
		return usagef("%s", msg)
	}
	name := strings.TrimLeft(strings.TrimPrefix(msg, prefix), "-")
	var known []string
	fs.VisitAll(func(f *flag.Flag) { known = append(known, f.Name) })
	out := fmt.Sprintf("unknown flag --%s", name)
	if s := suggest(name, known); s != "" {
		out += fmt.Sprintf("; did you mean --%s?", s)
	} else if len(known) > 0 {
		out += fmt.Sprintf(" (flags: --%s)", strings.Join(known, ", --"))
	}
	return usagef("%s", out)
}

// readInput returns the whole content of FILE, or of standard input for "-".
func readInput(e *env, name string) ([]byte, error) {
	if name == "-" {
		return io.ReadAll(e.stdin)
	}
	return os.ReadFile(name)
}

// openInput opens FILE, or standard input for "-", for streaming reads.
func openInput(e *env, name string) (io.ReadCloser, error) {
	if name == "-" {
		return io.NopCloser(e.stdin), nil
	}
	return os.Open(name)
}

// oneArg checks that exactly one positional argument was given.
func oneArg(c *command, args []string) (string, error) {
	if len(args) != 1 {
		return "", usagef("want one argument, %s (got %d)", c.usage, len(args))
	}
	return args[0], nil
}

// inputArg parses c's flags and returns its one FILE|- argument.
func inputArg(e *env, c *command, fs *flag.FlagSet, args []string) (string, error) {
	positional, err := parseFlags(e, c, fs, args)
	if err != nil {
		return "", err
	}
	return oneArg(c, positional)
}

// readInputArg parses c's flags and reads its one FILE|- argument whole.
func readInputArg(e *env, c *command, fs *flag.FlagSet, args []string) ([]byte, error) {
	name, err := inputArg(e, c, fs, args)
	if err != nil {
		return nil, err
	}
	return readInput(e, name)
}

// writeOutput writes data to standard output when name is "" or "-", else
// to the file name through a temporary file renamed into place, so that a
// failed write leaves no partial file behind.
func writeOutput(e *env, name string, data []byte) error {
	if name == "" || name == "-" {
		_, err := e.stdout.Write(data)
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(name), "."+filepath.Base(name)+".tmp-*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name()) // a no-op once renamed
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), name)
}
