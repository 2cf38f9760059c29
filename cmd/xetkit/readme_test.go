package main

import (
	"os"
	"strings"
	"testing"
)

// The README's first screen stays true: what xetkit is in two sentences,
// then the two commands (scripts that exist, the test one what CI runs),
// then the go build line; its --users example is serve --help's, which
// TestServeUsersExample has the hub take.
func TestREADMEFirstScreen(t *testing.T) {
	b, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	readme := string(b)
	first := strings.Join(strings.SplitN(readme, "\n", 25)[:24], "\n")
	intro, rest, ok := strings.Cut(strings.TrimPrefix(first, "# xetkit\n\n"), "\n\n```sh\n")
	if !ok || strings.Count(strings.Join(strings.Fields(intro), " "), ". ") != 1 || !strings.HasSuffix(intro, ".") {
		t.Errorf("the first screen does not open with two sentences, then the commands: %q", intro)
	}
	cmds, after, _ := strings.Cut(rest, "```\n")
	for _, c := range []string{"bash scripts/run.sh", "bash scripts/test.sh"} {
		if !strings.Contains(cmds, c+" ") {
			t.Errorf("the commands lack %q: %q", c, cmds)
		}
		if _, err := os.Stat("../../" + strings.TrimPrefix(c, "bash ")); err != nil {
			t.Error(err)
		}
	}
	if ci, err := os.ReadFile("../../.ci/run"); err != nil || !strings.Contains(string(ci), "exec bash scripts/test.sh") {
		t.Errorf(".ci/run does not run the test command: %v", err)
	}
	if !strings.Contains(strings.SplitN(strings.TrimSpace(after), "\n\n", 2)[0], "`go build ./cmd/xetkit && ./xetkit serve`") {
		t.Errorf("no go build line after the commands: %q", after)
	}
	example := func(s, start, end string) string {
		_, from, ok := strings.Cut(s, start)
		json, _, found := strings.Cut(from, end)
		if !ok || !found {
			t.Fatalf("no users example in %.60q", s)
		}
		return strings.Join(strings.Fields(json), " ")
	}
	inREADME := example(readme, "```json\n", "```")
	inHelp := example(commands["serve"].details, "read or write:\n", "\n\n(")
	if !strings.HasPrefix(inREADME, `{"users"`) || inREADME != inHelp {
		t.Errorf("the README's users example is not serve --help's:\n%s\n%s", inREADME, inHelp)
	}
}
