package hub_test

import (
	"os/exec"
	"strings"
	"testing"
)

// The server is built from its own layers and the format packages: no
// package of the hub imports a client package, directly or not.
func TestHubImportsNoClientPackage(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", "./...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	deps := strings.Fields(string(out))
	if len(deps) < 20 {
		t.Fatalf("go list gave %d packages: %q", len(deps), deps)
	}
	hasOwn := false
	for _, p := range deps {
		hasOwn = hasOwn || p == "github.com/xetkit/xetkit/hub/casserver"
		for _, client := range []string{"cas", "pipeline", "hubclient", "wasm"} {
			if p == "github.com/xetkit/xetkit/"+client {
				t.Errorf("the hub depends on the client package %s", p)
			}
		}
	}
	if !hasOwn {
		t.Fatalf("go list did not list the hub's own packages: %q", deps)
	}
}

// The Hub layer reaches the CAS layer only through its CAS interface.
func TestHubLayerImportsNoCASLayer(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", "./hubapi").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	for _, p := range strings.Fields(string(out)) {
		if p == "github.com/xetkit/xetkit/hub/casserver" {
			t.Errorf("the Hub layer imports the CAS layer")
		}
	}
}

// The repository service knows nothing of HTTP, and nothing of the CAS
// layer but its interface: every front (the Hub API, git, the pages) is
// a front on it.
func TestRepositoryServiceImportsNoHTTP(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", "./repos").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	deps := strings.Fields(string(out))
	if len(deps) < 20 {
		t.Fatalf("go list gave %d packages: %q", len(deps), deps)
	}
	for _, p := range deps {
		switch p {
		case "net/http", "github.com/xetkit/xetkit/hub/hubapi", "github.com/xetkit/xetkit/hub/casserver":
			t.Errorf("the repository service imports %s", p)
		}
	}
}

// The web pages are a front on the repository service like the Hub API:
// they reach neither another front nor the CAS layer but through its
// interface, so no rule of who may see or change what is written twice.
func TestPagesAreAFrontOnTheService(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", "./pages").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	deps := strings.Fields(string(out))
	if !strings.Contains(string(out), "github.com/xetkit/xetkit/hub/repos") {
		t.Fatalf("go list did not list the service among the pages' packages: %q", deps)
	}
	for _, p := range deps {
		switch p {
		case "github.com/xetkit/xetkit/hub/hubapi", "github.com/xetkit/xetkit/hub/githttp", "github.com/xetkit/xetkit/hub/casserver":
			t.Errorf("the pages import %s", p)
		}
	}
}
