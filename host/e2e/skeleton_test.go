package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"math"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/mdpress/mdpress/host/config"
	"github.com/mdpress/mdpress/host/internal/pdfcheck"
)

// TestHiOnEveryBackend is the README's first curl: {"markdown":"# Hi"} gives
// an A4 PDF whose text is "Hi", on each render backend, chosen by flag only.
func TestHiOnEveryBackend(t *testing.T) {
	pdfcheck.Require(t)
	for _, backend := range []string{"fpdf", "chrome"} {
		t.Run(backend, func(t *testing.T) {
			if backend == "chrome" && !chromiumAvailable() {
				t.Skip("chromium not installed (apt-get install chromium)")
			}
			h := startHost(t, withArgs("--backend", backend))
			_, key := h.account("pro", -1)
			resp, body := h.post(key, map[string]string{"markdown": "# Hi"})
			if resp.StatusCode != 200 {
				t.Fatalf("status %d: %s", resp.StatusCode, body)
			}
			if ct := resp.Header.Get("Content-Type"); ct != "application/pdf" {
				t.Fatalf("Content-Type %q", ct)
			}
			info := pdfcheck.Read(t, body)
			if math.Abs(info.WidthPt-595.28) > 1 || math.Abs(info.HeightPt-841.89) > 1 || info.Pages != 1 {
				t.Fatalf("want one A4 page, got %d pages of %.2fx%.2f", info.Pages, info.WidthPt, info.HeightPt)
			}
			if text := strings.Join(strings.Fields(pdfcheck.PageText(t, body)[0]), " "); !strings.HasPrefix(text, "Hi") {
				t.Fatalf("text %q does not start with Hi", text)
			}
			if !strings.Contains(h.logs.String(), "render-"+backend) {
				t.Fatalf("host did not say it serves render-%s", backend)
			}
		})
	}
}

// TestOnePluginProcessPerStage: ps shows one child process per stage.
func TestOnePluginProcessPerStage(t *testing.T) {
	h := startHost(t, withArgs("--backend", "fpdf"))
	kids := children(h.pid())
	want := map[string]bool{"auth-apikey": true, "meter-credits": true, "parse-goldmark": true, "style-themes": true, "render-fpdf": true, "sink-disk": true}
	got := map[string]int{}
	for _, name := range kids {
		got[name]++
	}
	for name := range want {
		if got[name] != 1 {
			t.Errorf("%s: %d processes, want 1 (children: %v)", name, got[name], kids)
		}
	}
	if len(kids) != len(want) {
		t.Errorf("host has %d children, want %d: %v", len(kids), len(want), kids)
	}
}

// TestKilledPluginIsRelaunched: SIGKILL a stage plugin; the next request
// succeeds and the restart is counted.
func TestKilledPluginIsRelaunched(t *testing.T) {
	pdfcheck.Require(t)
	h := startHost(t, withArgs("--backend", "fpdf"))
	_, key := h.account("pro", -1)
	for _, victim := range []string{"render-fpdf", "parse-goldmark"} {
		pid := h.plugin(victim)
		if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
			t.Fatal(err)
		}
		for alive(pid) {
			time.Sleep(10 * time.Millisecond)
		}
		resp, body := h.post(key, map[string]string{"markdown": "# After " + victim})
		if resp.StatusCode != 200 {
			t.Fatalf("after killing %s: status %d: %s", victim, resp.StatusCode, body)
		}
		if !strings.Contains(pdfcheck.Text(t, body), "After "+victim) {
			t.Fatalf("wrong PDF after killing %s", victim)
		}
	}
	_, metrics := h.do("GET", "/metrics", "", nil, nil)
	for _, victim := range []string{"render-fpdf", "parse-goldmark"} {
		if !strings.Contains(string(metrics), `mdpress_plugin_restarts_total{plugin="`+victim+`"} 1`) {
			t.Errorf("restart of %s not counted", victim)
		}
	}
	if !strings.Contains(string(metrics), `mdpress_stage_duration_seconds_count{outcome="ok",plugin="render-fpdf",stage="render"}`) {
		t.Error("stage histogram missing from /metrics")
	}
}

// TestPluginKilledWhileParsing: SIGKILL the style or the render plugin,
// idle, while a request's document is parsed. The call that follows the
// parse reaches the relaunched plugin. It was sent to the client the
// request took at its start, the dead process's, and failed with a 500
// though nothing had reached the plugin. Chromium's renderer reads HTML,
// so the styling and the render wait for the whole parse, a window long
// enough to kill in.
func TestPluginKilledWhileParsing(t *testing.T) {
	pdfcheck.Require(t)
	if !chromiumAvailable() {
		t.Skip("no Chromium: with fpdf, the styling and the render start beside the parse")
	}
	h := startHost(t, withArgs("--backend", "chrome"))
	_, key := h.account("pro", -1)
	if resp, body := h.post(key, map[string]string{"markdown": "# warm"}); resp.StatusCode != http.StatusOK {
		t.Fatalf("warm-up: %d %s", resp.StatusCode, body)
	}
	client := burstClient()
	defer client.CloseIdleConnections()
	for _, victim := range []string{"style-themes", "render-chrome"} {
		parser, pid := h.plugin("parse-goldmark"), h.plugin(victim)
		before := cpuTicks(parser)
		answer := make(chan outcome, 1)
		go func() {
			answer <- call(context.Background(), client, h.URL, key, map[string]string{"markdown": largeMarkdown(t) + "\n\nThe end"}, nil)
		}()
		awaitBusy(t, parser, before, answer)
		if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
			t.Fatal(err)
		}
		o := <-answer
		if o.err != nil || o.status != http.StatusOK || !isPDF(o.body) {
			t.Fatalf("%s killed during the parse: %d %v %.300s", victim, o.status, o.err, o.body)
		}
		if !strings.Contains(pdfcheck.Text(t, o.body), "The end") {
			t.Fatalf("%s killed during the parse: the PDF is not the document's", victim)
		}
		if pid == h.plugin(victim) {
			t.Fatalf("%s was not relaunched", victim)
		}
	}
}

// TestSIGTERMDrains: requests in flight when SIGTERM arrives complete, the
// host exits 0, and no plugin or browser process is left behind.
func TestSIGTERMDrains(t *testing.T) {
	pdfcheck.Require(t)
	backend := "fpdf"
	if chromiumAvailable() {
		backend = "chrome"
	}
	// The drain must finish what is in flight, however long that takes:
	// three 80-page documents on one tab took 30 s, the default shutdown
	// timeout, on a loaded CI machine, and the last was cut.
	h := startHost(t, withArgs("--backend", backend), writeConfig(t, func(c *config.Config) {
		c.Server.ShutdownTimeout = 3 * time.Minute
	}))
	_, key := h.account("pro", -1)
	// Warm up so the browser and all its processes exist.
	if resp, body := h.post(key, map[string]string{"markdown": "# warm"}); resp.StatusCode != 200 {
		t.Fatalf("warm-up: %d %s", resp.StatusCode, body)
	}
	tree := descendants(h.pid())
	if len(tree) < 6 {
		t.Fatalf("expected at least 6 descendant processes, got %v", tree)
	}
	md := corpus(t, "large.md")
	const inFlight = 3
	var wg sync.WaitGroup
	codes := make([]int, inFlight)
	sizes := make([]int, inFlight)
	finished := make([]time.Time, inFlight)
	for i := range inFlight {
		wg.Add(1)
		go func() {
			defer wg.Done()
			b, _ := json.Marshal(map[string]string{"markdown": md})
			req, _ := http.NewRequest("POST", h.URL+"/v1/pdf/markdown", strings.NewReader(string(b)))
			req.Header.Set("Authorization", "Bearer "+key)
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				codes[i] = -1
				return
			}
			defer resp.Body.Close()
			buf := make([]byte, 1<<20)
			for {
				n, err := resp.Body.Read(buf)
				sizes[i] += n
				if err != nil {
					break
				}
			}
			codes[i] = resp.StatusCode
			finished[i] = time.Now()
		}()
	}
	time.Sleep(300 * time.Millisecond) // let the requests reach the pipeline
	signalled := time.Now()
	sigtermAndWait(t, h, &wg)
	if h.exitErr != nil {
		t.Fatalf("host exit: %v", h.exitErr)
	}
	for i, c := range codes {
		if c != 200 || sizes[i] < 1000 {
			t.Errorf("in-flight request %d: status %d, %d bytes", i, c, sizes[i])
		}
		if !finished[i].After(signalled) {
			t.Errorf("request %d finished before SIGTERM: the test did not drain anything", i)
		}
	}
	deadline := time.Now().Add(5 * time.Second)
	for _, p := range tree {
		for alive(p) && time.Now().Before(deadline) {
			time.Sleep(20 * time.Millisecond)
		}
		if alive(p) {
			comm, _ := os.ReadFile("/proc/" + itoa(p) + "/comm")
			t.Errorf("process %d (%s) outlived the host", p, strings.TrimSpace(string(comm)))
		}
	}
}

// TestHostedURLAndUserInfo: output=url gives a URL that downloads with a
// plain GET, and /v1/user/info reports the charge.
func TestHostedURLAndUserInfo(t *testing.T) {
	pdfcheck.Require(t)
	h := startHost(t, withArgs("--backend", "fpdf"))
	user, key := h.account("pro", 10)
	resp, body := h.post(key, map[string]string{"markdown": "# Hosted\n\nbody", "output": "url"})
	if resp.StatusCode != 200 {
		t.Fatalf("status %d: %s", resp.StatusCode, body)
	}
	var out struct{ URL string }
	if err := json.Unmarshal(body, &out); err != nil || !strings.HasPrefix(out.URL, h.URL+"/v1/files/") {
		t.Fatalf("url response %s", body)
	}
	got, err := http.Get(out.URL)
	if err != nil {
		t.Fatal(err)
	}
	defer got.Body.Close()
	pdf := make([]byte, 0)
	buf := make([]byte, 32<<10)
	for {
		n, err := got.Body.Read(buf)
		pdf = append(pdf, buf[:n]...)
		if err != nil {
			break
		}
	}
	if got.StatusCode != 200 || !strings.Contains(pdfcheck.Text(t, pdf), "Hosted") {
		t.Fatalf("download: %d", got.StatusCode)
	}
	resp, body = h.do("GET", "/v1/user/info", key, nil, nil)
	var info struct {
		UserID       string `json:"userId"`
		Subscription struct {
			PlanName       string `json:"planName"`
			CurrentCredits int    `json:"currentCredits"`
		} `json:"subscription"`
	}
	if resp.StatusCode != 200 || json.Unmarshal(body, &info) != nil || info.UserID != user ||
		info.Subscription.CurrentCredits != 9 || info.Subscription.PlanName != "pro" {
		t.Fatalf("user info %d: %s", resp.StatusCode, body)
	}
}

func itoa(n int) string { return strconv.Itoa(n) }

// TestShutdownTimeoutRefunds: conversions still running when the shutdown
// timeout passes are cut, and each refunds its reservation before the
// plugins stop: what was charged is what was delivered.
func TestShutdownTimeoutRefunds(t *testing.T) {
	if !chromiumAvailable() {
		t.Skip("needs Chromium for conversions slow enough to outlast the shutdown timeout")
	}
	h := startHost(t, withArgs("--backend", "chrome"), writeConfig(t, func(c *config.Config) {
		c.Server.ShutdownTimeout = 50 * time.Millisecond
	}))
	user, key := h.account("pro", 100)
	md := corpus(t, "large.md")
	const inFlight = 3
	var wg sync.WaitGroup
	var delivered atomic.Int64
	for range inFlight {
		wg.Go(func() {
			b, _ := json.Marshal(map[string]string{"markdown": md})
			req, _ := http.NewRequest("POST", h.URL+"/v1/pdf/markdown", strings.NewReader(string(b)))
			req.Header.Set("Authorization", "Bearer "+key)
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				return // cut
			}
			defer resp.Body.Close()
			body, err := io.ReadAll(resp.Body)
			switch {
			case err == nil && resp.StatusCode == 200 && bytes.HasPrefix(body, []byte("%PDF-")):
				delivered.Add(1)
			case err == nil && resp.StatusCode != 503:
				t.Errorf("a cut conversion answered %d %.100q, want 503", resp.StatusCode, body)
			}
		})
	}
	time.Sleep(300 * time.Millisecond) // the requests are in the pipeline
	sigtermAndWait(t, h, &wg)
	var list []struct {
		UserID  string `json:"userId"`
		Credits int64  `json:"credits"`
	}
	if err := json.Unmarshal(h.mdpress("accounts", "list", "--json"), &list); err != nil {
		t.Fatal(err)
	}
	for _, a := range list {
		if a.UserID == user && a.Credits != 100-delivered.Load() {
			t.Fatalf("balance %d after %d of %d delivered: a cut conversion stayed charged", a.Credits, delivered.Load(), inFlight)
		}
	}
	t.Logf("%d of %d delivered before the cut", delivered.Load(), inFlight)
}

// sigtermAndWait sends the host SIGTERM and waits for the requests in
// flight (wg) and for the host to exit.
func sigtermAndWait(t *testing.T, h *host, wg *sync.WaitGroup) {
	t.Helper()
	if err := h.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	wg.Wait()
	select {
	case <-h.done:
	case <-time.After(60 * time.Second):
		t.Fatal("host did not exit within 60s of SIGTERM")
	}
}
