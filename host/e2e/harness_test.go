// Package e2e runs the real mdpress binary over the real plugin binaries:
// every test here starts `mdpress serve` as a child process on a loopback
// port and talks HTTP to it.
package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// plugins are the built-in plugin binaries.
var plugins = []string{"auth-apikey", "meter-credits", "parse-goldmark", "style-themes", "render-chrome", "render-fpdf", "sink-disk", "sink-s3"}

var binDir string

func TestMain(m *testing.M) {
	code, err := run(m)
	if err != nil {
		fmt.Fprintln(os.Stderr, "e2e:", err)
		os.Exit(1)
	}
	os.Exit(code)
}

func run(m *testing.M) (int, error) {
	binDir = os.Getenv("MDPRESS_BIN_DIR")
	if binDir == "" {
		dir, err := os.MkdirTemp("", "mdpress-e2e-bin-")
		if err != nil {
			return 0, err
		}
		defer os.RemoveAll(dir)
		if err := build(dir); err != nil {
			return 0, err
		}
		binDir = dir
	}
	return m.Run(), nil
}

// build compiles the host and every plugin, as `make build` does.
func build(dir string) error {
	args := []string{"build", "-o", filepath.Join(dir, "mdpress"), "github.com/mdpress/mdpress/host/cmd/mdpress"}
	if out, err := exec.Command("go", args...).CombinedOutput(); err != nil {
		return fmt.Errorf("go build mdpress: %v\n%s", err, out)
	}
	args = []string{"build", "-o", filepath.Join(dir, "plugins") + "/"}
	for _, p := range plugins {
		args = append(args, "github.com/mdpress/mdpress/plugins/"+p)
	}
	if out, err := exec.Command("go", args...).CombinedOutput(); err != nil {
		return fmt.Errorf("go build plugins: %v\n%s", err, out)
	}
	return nil
}

// host is one running `mdpress serve`.
type host struct {
	t       testing.TB
	cmd     *exec.Cmd
	URL     string
	DataDir string
	env     []string
	args    []string
	// dataDirEnv gives the data dir as MDPRESS_DATA_DIR, not --data-dir.
	dataDirEnv bool
	// wrap runs mdpress through a command (it must exec mdpress in place).
	wrap    []string
	logs    *syncBuffer
	done    chan struct{}
	exitErr error
}

type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

type hostOpt func(*host)

// withArgs adds serve flags, e.g. --backend fpdf.
func withArgs(args ...string) hostOpt { return func(h *host) { h.args = append(h.args, args...) } }

// withEnv adds environment variables.
func withEnv(kv ...string) hostOpt { return func(h *host) { h.env = append(h.env, kv...) } }

// withDataDir shares a data dir (restarts, several hosts).
func withDataDir(dir string) hostOpt { return func(h *host) { h.DataDir = dir } }

// withDataDirEnv names the data dir in MDPRESS_DATA_DIR only.
func withDataDirEnv(dir string) hostOpt {
	return func(h *host) { h.DataDir, h.dataDirEnv = dir, true }
}

// withWrap starts mdpress through a command that execs it, e.g. in a
// namespace of its own.
func withWrap(cmd ...string) hostOpt { return func(h *host) { h.wrap = cmd } }

// startHost starts mdpress serve and waits until /readyz answers 200.
func startHost(t testing.TB, opts ...hostOpt) *host {
	t.Helper()
	h := &host{t: t, logs: &syncBuffer{}, done: make(chan struct{})}
	for _, o := range opts {
		o(h)
	}
	if h.DataDir == "" {
		h.DataDir = t.TempDir()
	}
	addr := freeAddr(t)
	h.URL = "http://" + addr
	args := []string{"serve", "--addr", addr, "--plugin-dir", filepath.Join(binDir, "plugins"), "--log-level", "debug"}
	if h.dataDirEnv {
		h.env = append(h.env, "MDPRESS_DATA_DIR="+h.DataDir)
	} else {
		args = append(args, "--data-dir", h.DataDir)
	}
	args = append(append(append([]string{}, h.wrap...), filepath.Join(binDir, "mdpress")), append(args, h.args...)...)
	h.cmd = exec.Command(args[0], args[1:]...)
	h.cmd.Env = append(cleanEnv(), h.env...)
	h.cmd.Stdout, h.cmd.Stderr = h.logs, h.logs
	if err := h.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { h.exitErr = h.cmd.Wait(); close(h.done) }()
	t.Cleanup(func() {
		h.stop()
		if t.Failed() {
			t.Logf("host logs:\n%s", tail(h.logs.String(), 80))
		}
	})
	deadline := time.Now().Add(60 * time.Second)
	for time.Now().Before(deadline) {
		select {
		case <-h.done:
			t.Fatalf("mdpress serve exited: %v\n%s", h.exitErr, h.logs.String())
		default:
		}
		resp, err := http.Get(h.URL + "/readyz")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == 200 {
				return h
			}
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatalf("mdpress serve not ready after 60s\n%s", h.logs.String())
	return nil
}

// cleanEnv drops MDPRESS_* variables of the caller so tests see only what
// they set.
func cleanEnv() []string {
	var out []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "MDPRESS_") {
			out = append(out, kv)
		}
	}
	return out
}

func (h *host) stop() {
	if h.cmd.Process == nil {
		return
	}
	select {
	case <-h.done:
		return
	default:
	}
	_ = h.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-h.done:
	case <-time.After(20 * time.Second):
		_ = h.cmd.Process.Kill()
		<-h.done
	}
}

// mdpress runs a one-shot command against the host's data dir and config.
func (h *host) mdpress(args ...string) []byte {
	h.t.Helper()
	args = append(args, "--data-dir", h.DataDir)
	cmd := exec.Command(filepath.Join(binDir, "mdpress"), args...)
	cmd.Env = append(cleanEnv(), h.env...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		h.t.Fatalf("mdpress %v: %v\n%s", args, err, stderr.String())
	}
	return out
}

// account creates an account and returns its user id and API key.
func (h *host) account(plan string, credits int) (string, string) {
	h.t.Helper()
	args := []string{"accounts", "create", "--plan", plan, "--json"}
	if credits >= 0 {
		args = append(args, "--credits", fmt.Sprint(credits))
	}
	var out struct{ UserID, APIKey string }
	if err := json.Unmarshal(h.mdpress(args...), &out); err != nil || out.APIKey == "" {
		h.t.Fatalf("accounts create: %v", err)
	}
	return out.UserID, out.APIKey
}

// post sends a conversion request.
func (h *host) post(key string, body any) (*http.Response, []byte) {
	h.t.Helper()
	return h.do("POST", "/v1/pdf/markdown", key, body, nil)
}

func (h *host) do(method, path, key string, body any, hdr map[string]string) (*http.Response, []byte) {
	h.t.Helper()
	var rd io.Reader
	switch b := body.(type) {
	case nil:
	case string:
		rd = strings.NewReader(b)
	case []byte:
		rd = bytes.NewReader(b)
	default:
		j, _ := json.Marshal(b)
		rd = bytes.NewReader(j)
	}
	req, err := http.NewRequestWithContext(context.Background(), method, h.URL+path, rd)
	if err != nil {
		h.t.Fatal(err)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		h.t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		h.t.Fatal(err)
	}
	return resp, data
}

// pid returns the host's process id.
func (h *host) pid() int { return h.cmd.Process.Pid }

func freeAddr(t testing.TB) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

func tail(s string, n int) string {
	lines := strings.Split(s, "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// children lists the pids whose parent is pid, with their command names.
func children(pid int) map[int]string {
	out := map[int]string{}
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		var p int
		if _, err := fmt.Sscanf(e.Name(), "%d", &p); err != nil {
			continue
		}
		stat, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if err != nil {
			continue
		}
		// pid (comm) state ppid ...
		s := string(stat)
		rp := strings.LastIndexByte(s, ')')
		if rp < 0 {
			continue
		}
		var state string
		var ppid int
		if _, err := fmt.Sscanf(s[rp+2:], "%s %d", &state, &ppid); err != nil || ppid != pid || state == "Z" {
			continue
		}
		out[p] = s[strings.IndexByte(s, '(')+1 : rp]
	}
	return out
}

// descendants lists pid's whole process subtree.
func descendants(pid int) []int {
	var out []int
	for c := range children(pid) {
		out = append(out, c)
		out = append(out, descendants(c)...)
	}
	return out
}

func alive(pid int) bool {
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	s := string(stat)
	rp := strings.LastIndexByte(s, ')')
	return rp > 0 && !strings.HasPrefix(s[rp+2:], "Z")
}

func chromiumAvailable() bool {
	for _, p := range []string{"/usr/lib/chromium/chromium", "/usr/bin/chromium"} {
		if _, err := os.Stat(p); err == nil {
			return true
		}
	}
	_, err := exec.LookPath("chromium")
	return err == nil
}

// backends are the render backends both end-to-end suites run on.
func backends(t *testing.T) []string {
	out := []string{"fpdf"}
	if chromiumAvailable() {
		out = append(out, "chrome")
	} else {
		t.Log("chromium not installed: the chrome backend cases are skipped (apt-get install chromium)")
	}
	return out
}
