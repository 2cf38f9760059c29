package hub_test

import (
	"bytes"
	"compress/zlib"
	"crypto/sha1"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/xetkit/xetkit/hub"
	"github.com/xetkit/xetkit/hub/store"
)

// Pushes that mean harm, crafted by hand (a client would not send them):
// each is refused whole, no ref moves, and nothing of it is kept.

// packObject is one object of a crafted pack: its git type number, the
// size its header declares, and its body (compressed as it is).
type packObject struct {
	typ      int // 1 commit, 2 tree, 3 blob
	declared int
	body     []byte
}

// gitID is the git id of an object of type typ and body b.
func gitID(typ string, b []byte) string {
	h := sha1.New()
	fmt.Fprintf(h, "%s %d\x00", typ, len(b))
	h.Write(b)
	return hex.EncodeToString(h.Sum(nil))
}

// pack writes a pack of the objects.
func pack(objs ...packObject) []byte {
	var b bytes.Buffer
	b.WriteString("PACK")
	binary.Write(&b, binary.BigEndian, uint32(2))
	binary.Write(&b, binary.BigEndian, uint32(len(objs)))
	for _, o := range objs {
		size := o.declared
		c := byte(o.typ<<4) | byte(size&0x0f)
		size >>= 4
		for size > 0 {
			b.WriteByte(c | 0x80)
			c = byte(size & 0x7f)
			size >>= 7
		}
		b.WriteByte(c)
		zw := zlib.NewWriter(&b)
		zw.Write(o.body)
		zw.Close()
	}
	sum := sha1.Sum(b.Bytes())
	b.Write(sum[:])
	return b.Bytes()
}

// treeBody is a git tree body of entries "mode name" → id.
func treeBody(entries ...[3]string) []byte {
	var b []byte
	for _, e := range entries {
		id, _ := hex.DecodeString(e[2])
		b = append(b, e[0]+" "+e[1]+"\x00"...)
		b = append(b, id...)
	}
	return b
}

// commitBodyOf is a git commit body of tree.
func commitBodyOf(tree string) []byte {
	return []byte("tree " + tree + "\nauthor m <m@x> 1700000000 +0000\ncommitter m <m@x> 1700000000 +0000\n\nhostile\n")
}

// receivePack sends a push of one ref to new with the pack and returns
// the answer's text.
func (th *testHub) receivePack(repo, token, ref, new string, packBytes []byte) string {
	th.t.Helper()
	var body bytes.Buffer
	line := fmt.Sprintf("%s %s %s\x00report-status\n", strings.Repeat("0", 40), new, ref)
	fmt.Fprintf(&body, "%04x%s0000", len(line)+4, line)
	body.Write(packBytes)
	req, _ := http.NewRequest("POST", th.srv.URL+"/"+repo+"/git-receive-pack", &body)
	req.SetBasicAuth("git", token)
	req.Header.Set("Content-Type", "application/x-git-receive-pack-request")
	resp, err := th.srv.Client().Do(req)
	if err != nil {
		th.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 200 {
		th.t.Fatalf("push: %d %s", resp.StatusCode, b)
	}
	return string(b)
}

// objectCounts counts the Hub layer's objects of st.
func objectCounts(t *testing.T, st store.Store) map[string]int {
	out := map[string]int{}
	for _, kind := range []string{store.Commits, store.Trees, store.Blobs} {
		names, err := st.List(kind)
		if err != nil {
			t.Fatal(err)
		}
		out[kind] = len(names)
	}
	return out
}

func TestHostilePushes(t *testing.T) {
	th := newHub(t, hub.Config{})
	th.decode("POST", "/api/models/alice/m/commit/main", userToken, commitBody(map[string]any{"summary": "a"}, inlineFile("a.txt", "a")), 200, nil)
	st := hub.StoreOf(th.h)
	blob := []byte("hello\n")
	blobID := gitID("blob", blob)
	treeWith := func(mode, name string) packObject {
		b := treeBody([3]string{mode, name, blobID})
		return packObject{2, len(b), b}
	}
	withTree := func(tr packObject) (string, []byte) {
		c := commitBodyOf(gitID("tree", tr.body))
		return gitID("commit", c), pack(packObject{1, len(c), c}, tr, packObject{3, len(blob), blob})
	}
	var zeros bytes.Buffer
	zeros.Write(make([]byte, 64<<20))
	bomb := zeros.Bytes()
	for _, c := range []struct {
		name, want string
		build      func() (string, []byte)
	}{
		{"a ../ entry", "a name a path cannot hold", func() (string, []byte) { return withTree(treeWith("100644", "..")) }},
		{"a .git entry", "would take for .git", func() (string, []byte) { return withTree(treeWith("100644", ".GIT")) }},
		{"a .git entry in 8.3", "would take for .git", func() (string, []byte) { return withTree(treeWith("100644", "GIT~1")) }},
		{"a name with a slash", "a name with a '/'", func() (string, []byte) { return withTree(treeWith("100644", "a/b")) }},
		{"an absurd mode", "of mode 100666", func() (string, []byte) { return withTree(treeWith("100666", "x")) }},
		{"a blob that says it is 1 GiB", "inflates to 1073741824 bytes", func() (string, []byte) {
			tr := treeWith("100644", "big")
			cm := commitBodyOf(gitID("tree", tr.body))
			return gitID("commit", cm), pack(packObject{1, len(cm), cm}, tr, packObject{3, 1 << 30, bomb[:1<<20]})
		}},
		{"a blob that lies about its size", "damaged at object 3 of 3", func() (string, []byte) {
			tr := treeWith("100644", "bomb")
			cm := commitBodyOf(gitID("tree", tr.body))
			return gitID("commit", cm), pack(packObject{1, len(cm), cm}, tr, packObject{3, 100, bomb})
		}},
		{"a pack cut in half", "cut short", func() (string, []byte) {
			id, p := withTree(treeWith("100644", "ok.txt"))
			return id, p[:len(p)/2]
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			before := objectCounts(t, st)
			head := th.head("alice/m")
			id, p := c.build()
			out := th.receivePack("alice/m", userToken, "refs/heads/evil", id, p)
			if !strings.Contains(out, "unpack ") || strings.Contains(out, "unpack ok") || !strings.Contains(out, "ng refs/heads/evil") || !strings.Contains(out, c.want) {
				t.Fatalf("the push was not refused for %q: %q", c.want, out)
			}
			var refs struct{ Branches []struct{ Name string } }
			th.decode("GET", "/api/models/alice/m/refs", userToken, nil, 200, &refs)
			if len(refs.Branches) != 1 || th.head("alice/m") != head {
				t.Fatalf("refs after the push: %+v", refs)
			}
			if after := objectCounts(t, st); fmt.Sprint(after) != fmt.Sprint(before) {
				t.Fatalf("the refused push left objects: %v, before %v", after, before)
			}
			if problems, err := hub.Check(st); err != nil || len(problems) != 0 {
				t.Fatalf("store check after the push: %v %v", err, problems)
			}
		})
	}
	// And a well-formed push of the same shape lands.
	id, p := withTree(treeWith("100644", "ok.txt"))
	if out := th.receivePack("alice/m", userToken, "refs/heads/good", id, p); !strings.Contains(out, "unpack ok") || !strings.Contains(out, "ok refs/heads/good") {
		t.Fatalf("a good push: %q", out)
	}
	status, b, _ := th.do("GET", "/alice/m/resolve/good/ok.txt", userToken, nil)
	if status != 200 || string(b) != "hello\n" {
		t.Fatalf("the pushed file: %d %q", status, b)
	}
}

// The LFS batch answers git-xet's xet transfer with a CAS token in the
// upload action's headers and the token route as its href, which answers
// git's Basic credentials; an upload through the CAS with that token is
// the pusher's, so a pushed pointer to it lands.
func TestXetTransferForGitXet(t *testing.T) {
	th := newTeam(t, hub.Config{})
	th.commitAs(aliceTok, "alice/x", "a.txt", []byte("a"))
	f := makeFile(t, 241, 200<<10)
	sum := sha256Hex(f.data)
	body, _ := json.Marshal(map[string]any{"operation": "upload", "transfers": []string{"basic", "xet"}, "objects": []any{map[string]any{"oid": sum, "size": len(f.data)}}})
	req, _ := http.NewRequest("POST", th.srv.URL+"/alice/x.git/info/lfs/objects/batch", bytes.NewReader(body))
	req.SetBasicAuth("git", aliceTok)
	resp, err := th.srv.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	var answer struct {
		Transfer string
		Objects  []struct {
			Actions map[string]struct {
				Href   string
				Header map[string]string
			}
		}
	}
	json.NewDecoder(resp.Body).Decode(&answer)
	resp.Body.Close()
	up := answer.Objects[0].Actions["upload"]
	if answer.Transfer != "xet" || up.Header["X-Xet-Cas-Url"] != th.srv.URL || up.Header["X-Xet-Access-Token"] == "" || up.Header["X-Xet-Token-Expiration"] == "" {
		t.Fatalf("batch answer for xet: %+v", answer)
	}
	// The href refreshes the token, for the same Basic credentials.
	req, _ = http.NewRequest("GET", up.Href, nil)
	req.SetBasicAuth("git", aliceTok)
	resp, err = th.srv.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	var refreshed struct{ AccessToken, CasURL string }
	json.NewDecoder(resp.Body).Decode(&refreshed)
	resp.Body.Close()
	if resp.StatusCode != 200 || refreshed.AccessToken == "" || refreshed.CasURL != th.srv.URL {
		t.Fatalf("token refresh: %d %+v", resp.StatusCode, refreshed)
	}
	// Upload through the CAS as git-xet does, with the shard's SHA-256.
	tok := up.Header["X-Xet-Access-Token"]
	th.putXorb(tok, f)
	th.putShard(tok, f.claiming(t, sum))
	// Then push the pointer.
	ptr := []byte(fmt.Sprintf("version https://git-lfs.github.com/spec/v1\noid sha256:%s\nsize %d\n", sum, len(f.data)))
	tr := treeBody([3]string{"100644", "w.bin", gitID("blob", ptr)})
	cm := commitBodyOf(gitID("tree", tr))
	p := pack(packObject{1, len(cm), cm}, packObject{2, len(tr), tr}, packObject{3, len(ptr), ptr})
	if out := th.receivePack("alice/x", aliceTok, "refs/heads/xet", gitID("commit", cm), p); !strings.Contains(out, "ok refs/heads/xet") {
		t.Fatalf("the push of the pointer: %q", out)
	}
	status, b, hdr := th.do("GET", "/alice/x/resolve/xet/w.bin", aliceTok, nil)
	if status != 200 || !bytes.Equal(b, f.data) || hdr.Get("X-Xet-Hash") != f.hash.String() {
		t.Fatalf("the pushed file: %d, %d bytes, xet hash %q", status, len(b), hdr.Get("X-Xet-Hash"))
	}
	// A pointer to an object the hub does not hold is refused, naming it.
	missing := strings.Repeat("ab", 32)
	ptr = []byte(fmt.Sprintf("version https://git-lfs.github.com/spec/v1\noid sha256:%s\nsize 5\n", missing))
	tr = treeBody([3]string{"100644", "gone.bin", gitID("blob", ptr)})
	cm = commitBodyOf(gitID("tree", tr))
	p = pack(packObject{1, len(cm), cm}, packObject{2, len(tr), tr}, packObject{3, len(ptr), ptr})
	if out := th.receivePack("alice/x", aliceTok, "refs/heads/gone", gitID("commit", cm), p); !strings.Contains(out, "ng refs/heads/gone") || !strings.Contains(out, missing) {
		t.Fatalf("the push of a pointer to nothing: %q", out)
	}
}

// sha256Hex is the hex SHA-256 of b.
func sha256Hex(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}
