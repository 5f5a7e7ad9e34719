package e2e

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/mdpress/mdpress/host/config"
	"github.com/mdpress/mdpress/sdk/plugintest/s3test"
)

// deliveryPublicURL is the MDPRESS_PUBLIC_URL of the delivery tests: a base
// nothing listens on, so a URL that works only because it names the host's
// own port would fail.
const deliveryPublicURL = "http://files.mdpress.test:8443"

// fileIDRE is the shape of a hosted-file id: 128 random bits, lowercase hex.
var fileIDRE = regexp.MustCompile(`^[0-9a-f]{32}$`)

// deliveryConvert converts markdown with output=url and returns the URL.
func deliveryConvert(t *testing.T, h *host, key, markdown string) string {
	t.Helper()
	resp, body := h.post(key, map[string]string{"markdown": markdown, "output": "url"})
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("output=url: %d %s", resp.StatusCode, body)
	}
	var out map[string]any
	if err := json.Unmarshal(body, &out); err != nil {
		t.Fatalf("output=url body %s: %v", body, err)
	}
	u, _ := out["url"].(string)
	if len(out) != 1 || u == "" {
		t.Fatalf("output=url body %s: want exactly {\"url\": ...}", body)
	}
	return u
}

// hostedID returns the id of a URL of the form PUBLIC/v1/files/<id>, or
// fails.
func hostedID(t *testing.T, url string) string {
	t.Helper()
	id, ok := strings.CutPrefix(url, deliveryPublicURL+"/v1/files/")
	if !ok || !fileIDRE.MatchString(id) {
		t.Fatalf("url %q: want %s/v1/files/<32 lowercase hex>", url, deliveryPublicURL)
	}
	return id
}

// onHost points a URL built on deliveryPublicURL at the running host, as a
// reverse proxy in front of it would.
func onHost(h *host, url string) string {
	if rest, ok := strings.CutPrefix(url, deliveryPublicURL); ok {
		return h.URL + rest
	}
	return url
}

// fetch sends a plain request (no Authorization) and reads the whole body.
func fetch(t *testing.T, method, url string, hdr map[string]string) (*http.Response, []byte) {
	t.Helper()
	req, err := http.NewRequest(method, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, url, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("%s %s: read body: %v", method, url, err)
	}
	return resp, body
}

// rawGet sends path exactly as written, on a connection of its own, so that
// no client cleans or re-escapes it on the way.
func rawGet(t *testing.T, h *host, path string) (*http.Response, []byte) {
	t.Helper()
	addr := strings.TrimPrefix(h.URL, "http://")
	conn, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	_ = conn.SetDeadline(time.Now().Add(10 * time.Second))
	if _, err := fmt.Fprintf(conn, "GET %s HTTP/1.1\r\nHost: %s\r\nConnection: close\r\n\r\n", path, addr); err != nil {
		t.Fatal(err)
	}
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatalf("GET %s: %v", path, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("GET %s: read body: %v", path, err)
	}
	return resp, body
}

// s3Sink starts a versitygw for this test and returns the host options
// that select sink-s3 on it (a config file whose plugins.sink-s3 block
// names the server, and the credentials in the AWS environment variables,
// as an operator passes secrets) and the bucket's path-style URL. It skips
// the test when no server can be had.
func s3Sink(t *testing.T, delivery string) (opts []hostOpt, bucketURL string) {
	t.Helper()
	endpoint, key, secret := s3test.Start(t)
	bucket := s3test.Bucket(t)
	path := deliveryConfig(t, map[string]any{
		"endpoint":      endpoint,
		"region":        "us-east-1",
		"bucket":        bucket,
		"prefix":        "hosted/",
		"usePathStyle":  true,
		"createBucket":  true,
		"delivery":      delivery,
		"sweepInterval": 0,
	})
	opts = []hostOpt{
		withArgs("--config", path, "--sink", "s3"),
		withEnv("AWS_ACCESS_KEY_ID="+key, "AWS_SECRET_ACCESS_KEY="+secret),
	}
	return opts, endpoint + "/" + bucket + "/"
}

// deliveryConfig writes the embedded default config with plugins.sink-s3
// replaced by block, and returns its path.
func deliveryConfig(t *testing.T, block map[string]any) string {
	t.Helper()
	var doc map[string]any
	if err := yaml.Unmarshal(config.Default(), &doc); err != nil {
		t.Fatal(err)
	}
	pl, _ := doc["plugins"].(map[string]any)
	if pl == nil {
		pl = map[string]any{}
		doc["plugins"] = pl
	}
	pl["sink-s3"] = block
	b, err := yaml.Marshal(doc)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "mdpress.yaml")
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// rssKB reads a process's resident set size from /proc, in KiB; 0 when the
// process is gone.
func rssKB(pid int) int64 {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			var kb int64
			_, _ = fmt.Sscanf(strings.TrimSpace(v), "%d", &kb)
			return kb
		}
	}
	return 0
}

// childNamed returns the pid of pid's child whose command name is name.
func childNamed(t testing.TB, pid int, name string) int {
	t.Helper()
	for p, comm := range children(pid) {
		if comm == name {
			return p
		}
	}
	t.Fatalf("no %s process under the host (children: %v)", name, children(pid))
	return 0
}
