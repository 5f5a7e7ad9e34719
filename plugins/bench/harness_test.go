package bench

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
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/mdpress/mdpress/sdk/plugintest"
)

var binDir string

func TestMain(m *testing.M) {
	if sock := os.Getenv(echoEnv); sock != "" {
		echo(sock)
		return
	}
	binDir = os.Getenv("MDPRESS_BIN_DIR")
	if binDir == "" {
		dir, err := os.MkdirTemp("", "mdpress-bench-bin-")
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		defer os.RemoveAll(dir)
		if err := build(dir); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		binDir = dir
	}
	code := m.Run()
	os.Exit(code)
}

func build(dir string) error {
	if out, err := exec.Command("go", "build", "-o", filepath.Join(dir, "mdpress"), "github.com/mdpress/mdpress/host/cmd/mdpress").CombinedOutput(); err != nil {
		return fmt.Errorf("build mdpress: %v\n%s", err, out)
	}
	args := []string{"build", "-o", filepath.Join(dir, "plugins") + "/"}
	for _, p := range []string{"auth-apikey", "meter-credits", "parse-goldmark", "style-themes", "render-chrome", "render-fpdf", "sink-disk"} {
		args = append(args, "github.com/mdpress/mdpress/plugins/"+p)
	}
	if out, err := exec.Command("go", args...).CombinedOutput(); err != nil {
		return fmt.Errorf("build plugins: %v\n%s", err, out)
	}
	return nil
}

// echoEnv makes the test binary the peer of BenchmarkPluginHop's socket
// baseline: a process that echoes what it reads on a Unix socket.
const echoEnv = "MDPRESS_BENCH_ECHO"

func echo(sock string) {
	c, err := net.Dial("unix", sock)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	buf := make([]byte, 512)
	for {
		n, err := c.Read(buf)
		if err != nil {
			return
		}
		if _, err := c.Write(buf[:n]); err != nil {
			return
		}
	}
}

// echoPeer starts the echo process and returns its end of the socket.
func echoPeer(b *testing.B) net.Conn {
	sock := filepath.Join(b.TempDir(), "echo.sock")
	ln, err := net.Listen("unix", sock)
	if err != nil {
		b.Fatal(err)
	}
	defer ln.Close()
	cmd := exec.Command(os.Args[0])
	cmd.Env = append(os.Environ(), echoEnv+"="+sock)
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	c, err := ln.Accept()
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() {
		c.Close()
		_ = cmd.Wait()
	})
	return c
}

// host is a running `mdpress serve` with one pro account.
// maxClients is the most clients a benchmark runs at once.
const maxClients = 8

type host struct {
	url    string
	keys   chan string // one per client: a request takes one and gives it back
	client *http.Client
	pid    int
}

func startHost(b *testing.B, backend string) *host {
	b.Helper()
	if _, err := os.Stat(filepath.Join(binDir, "mdpress")); err != nil {
		b.Fatalf("no mdpress binary in %s (make build)", binDir)
	}
	data := b.TempDir()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	env := append(os.Environ(), "MDPRESS_LOG_LEVEL=warn")
	// One account per client: a key runs at most server.maxConcurrentPerKey
	// conversions at once (one on 2 cores), and the benchmarks measure the
	// pipeline with several users, not that fairness rule.
	keys := make(chan string, maxClients)
	for range maxClients {
		acct := exec.Command(filepath.Join(binDir, "mdpress"), "accounts", "create", "--plan", "pro", "--credits", "100000000", "--json", "--data-dir", data)
		acct.Env = env
		out, err := acct.Output()
		if err != nil {
			b.Fatalf("accounts create: %v", err)
		}
		var a struct{ APIKey string }
		if err := json.Unmarshal(out, &a); err != nil {
			b.Fatal(err)
		}
		keys <- a.APIKey
	}
	cmd := exec.Command(filepath.Join(binDir, "mdpress"), "serve", "--addr", addr, "--data-dir", data,
		"--plugin-dir", filepath.Join(binDir, "plugins"), "--backend", backend)
	cmd.Env = env
	var logs bytes.Buffer
	cmd.Stdout, cmd.Stderr = &logs, &logs
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		_ = cmd.Wait()
	})
	h := &host{url: "http://" + addr, keys: keys, client: &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 16}},
		pid: cmd.Process.Pid}
	for deadline := time.Now().Add(60 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		if resp, err := http.Get(h.url + "/readyz"); err == nil {
			resp.Body.Close()
			if resp.StatusCode == 200 {
				return h
			}
		}
	}
	b.Fatalf("host not ready:\n%s", logs.String())
	return nil
}

// convert posts Markdown and returns the PDF's size.
func (h *host) convert(ctx context.Context, md string) (int, error) {
	size, _, err := h.convertPages(ctx, md)
	return size, err
}

// convertPages posts Markdown and returns the PDF's size and page count.
func (h *host) convertPages(ctx context.Context, md string) (size, pages int, err error) {
	body, _ := json.Marshal(map[string]string{"markdown": md, "pageNumeration": "center"})
	req, _ := http.NewRequestWithContext(ctx, "POST", h.url+"/v1/pdf/markdown", bytes.NewReader(body))
	key := <-h.keys
	defer func() { h.keys <- key }()
	req.Header.Set("Authorization", "Bearer "+key)
	req.Header.Set("Content-Type", "application/json")
	resp, err := h.client.Do(req)
	if err != nil {
		return 0, 0, err
	}
	defer resp.Body.Close()
	n, err := io.Copy(io.Discard, resp.Body)
	if resp.StatusCode != 200 {
		return 0, 0, fmt.Errorf("status %d", resp.StatusCode)
	}
	pages, _ = strconv.Atoi(resp.Header.Get("X-Pdf-Pages"))
	return int(n), pages, err
}

// stageMeans reads the host's /metrics and returns the mean duration in
// seconds of the successful calls of each stage.
func (h *host) stageMeans(b *testing.B) map[string]float64 {
	resp, err := h.client.Get(h.url + "/metrics")
	if err != nil {
		b.Fatal(err)
	}
	defer resp.Body.Close()
	text, err := io.ReadAll(resp.Body)
	if err != nil {
		b.Fatal(err)
	}
	sums, counts := map[string]float64{}, map[string]float64{}
	for _, line := range strings.Split(string(text), "\n") {
		name, rest, ok := strings.Cut(line, "{")
		if !ok || !strings.HasPrefix(name, "mdpress_stage_duration_seconds_") || !strings.Contains(rest, `outcome="ok"`) {
			continue
		}
		_, st, _ := strings.Cut(rest, `stage="`)
		st, _, _ = strings.Cut(st, `"`)
		fields := strings.Fields(rest)
		v, err := strconv.ParseFloat(fields[len(fields)-1], 64)
		if err != nil {
			continue
		}
		switch name {
		case "mdpress_stage_duration_seconds_sum":
			sums[st] += v
		case "mdpress_stage_duration_seconds_count":
			counts[st] += v
		}
	}
	means := map[string]float64{}
	for st, n := range counts {
		if n > 0 {
			means[st] = sums[st] / n
		}
	}
	return means
}

// processCPU returns the CPU time so far of the host, as "mdpress", and of
// each of its plugin processes by command name; empty where there is no
// /proc.
func (h *host) processCPU() map[string]time.Duration {
	stats, _ := filepath.Glob("/proc/[0-9]*")
	out := map[string]time.Duration{}
	for _, dir := range stats {
		pid, _ := strconv.Atoi(filepath.Base(dir))
		st, err := plugintest.ReadProcStat(pid)
		if err == nil && (pid == h.pid || st.PPid == h.pid) {
			out[st.Name] += st.CPU
		}
	}
	return out
}

// onePage is a short document; tenPages fills about ten A4 pages.
const onePage = "# Report\n\nOne page of text for the benchmark, with **bold** and `code`.\n"

func tenPages() string {
	var sb strings.Builder
	sb.WriteString("# Quarterly report\n\n")
	for i := range 28 {
		fmt.Fprintf(&sb, "## Section %d\n\nThis paragraph describes the results of section %d in some detail, so that the page fills with ordinary prose the way a real report would. It has **bold** words, _italic_ words and a [link](https://example.com).\n\n- first point\n- second point\n- third point\n\n| metric | value |\n|---|---:|\n| revenue | %d |\n| cost | %d |\n\n", i+1, i+1, 1000+i, 500+i)
	}
	return sb.String()
}
