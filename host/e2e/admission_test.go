package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/mdpress/mdpress/host/config"
)

// TestAdmissionQueueFull: with one conversion at a time and one waiting,
// a burst gets 429 with Retry-After for the rest, nothing is charged for
// them, and every admitted request gets its PDF.
func TestAdmissionQueueFull(t *testing.T) {
	h := startHost(t, fpdf(), writeConfig(t, func(c *config.Config) {
		c.Server.MaxConcurrent, c.Server.Queue = 1, 1
	}))
	_, key := h.account("pro", 100)
	heavy := map[string]string{"markdown": strings.Repeat("## Heading\n\nA paragraph of text that takes some laying out.\n\n", 1500)}
	outs := burst([]*host{h}, key, 8, func(int) any { return heavy }, nil)
	got := statuses(outs)
	if got[200] < 2 || got[429] < 1 || got[200]+got[429] != 8 {
		t.Fatalf("statuses %v: want some 200 (admitted and queued) and the rest 429", got)
	}
	for _, o := range outs {
		switch o.status {
		case 429:
			if ra, err := strconv.Atoi(o.header.Get("Retry-After")); err != nil || ra < 1 {
				t.Errorf("429 without a Retry-After in seconds: %q", o.header.Get("Retry-After"))
			}
			decodeError(t, o.status, o.body)
		case 200:
			if !isPDF(o.body) {
				t.Error("200 without a PDF")
			}
		}
	}
	if bal := h.balance(key); bal != int64(100-got[200]) {
		t.Fatalf("balance %d, want %d: only delivered PDFs are charged", bal, 100-got[200])
	}
}

// TestAdmissionQueueHoldsLargeDocuments: with one conversion at a time,
// the default queue of 128 takes a burst of 129 documents of 300 KB (more
// than twice the corpus's largest) without a 429, although their bodies
// are held together; the held-body bound of the config still refuses
// what does not fit.
func TestAdmissionQueueHoldsLargeDocuments(t *testing.T) {
	// A few pages to lay out, and a comment no backend draws, so that the
	// bodies are large and the conversions quick.
	doc := strings.Repeat("A paragraph of text that takes some laying out.\n\n", 200) +
		"<!--\n" + strings.Repeat("x", 300<<10) + "\n-->\n"
	body := map[string]string{"markdown": doc}
	const clients = 129 // one converting, 128 waiting

	h := startHost(t, fpdf(), writeConfig(t, func(c *config.Config) { c.Server.MaxConcurrent = 1 }))
	_, key := h.account("pro", 1000)
	outs := burst([]*host{h}, key, clients, func(int) any { return body }, nil)
	if got := statuses(outs); got[200] != clients {
		t.Fatalf("statuses %v: want %d x 200, the queue's default room", got, clients)
	}

	small := startHost(t, fpdf(), writeConfig(t, func(c *config.Config) {
		c.Server.MaxConcurrent, c.Server.MaxHeldBodyBytes = 1, 4<<20
	}))
	_, key = small.account("pro", 1000)
	outs = burst([]*host{small}, key, clients, func(int) any { return body }, nil)
	got := statuses(outs)
	if got[429] == 0 || got[200]+got[429] != clients {
		t.Fatalf("statuses %v: want 429 past server.maxHeldBodyBytes (4 MiB, about 13 bodies)", got)
	}
	for _, o := range outs {
		if o.status == 429 {
			decodeError(t, o.status, o.body)
		}
	}
}

// TestUnreadAnswerFreesSlot: a client that asks for a PDF larger than the
// sockets' buffers and never reads it does not keep the conversion slot
// while the host waits to write the rest (until the write timeout, a
// minute past the request timeout): with one slot, another client's
// conversion is answered meanwhile.
func TestUnreadAnswerFreesSlot(t *testing.T) {
	h := startHost(t, fpdf(), writeConfig(t, func(c *config.Config) { c.Server.MaxConcurrent = 1 }))
	_, key := h.account("pro", 100)
	// About 11 MB of PDF, more than loopback's socket buffers take.
	var doc strings.Builder
	for i := range 40000 {
		fmt.Fprintf(&doc, "## Section %d\n\nA paragraph of text that takes some laying out, number %d.\n\n", i, i)
	}
	body, _ := json.Marshal(map[string]string{"markdown": doc.String()})
	d := net.Dialer{Control: func(_, _ string, c syscall.RawConn) error {
		return c.Control(func(fd uintptr) { _ = syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_RCVBUF, 4096) })
	}}
	conn, err := d.Dial("tcp", strings.TrimPrefix(h.URL, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	fmt.Fprintf(conn, "POST /v1/pdf/markdown HTTP/1.1\r\nHost: mdpress\r\nAuthorization: Bearer %s\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n", key, len(body))
	if _, err := conn.Write(body); err != nil {
		t.Fatal(err)
	}
	time.Sleep(500 * time.Millisecond) // the large conversion takes the slot first

	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	start := time.Now()
	o := call(ctx, http.DefaultClient, h.URL, key, map[string]string{"markdown": "# Small"}, nil)
	if o.err != nil || o.status != 200 {
		t.Fatalf("a conversion beside an unread answer: %d %v after %s, want 200", o.status, o.err, time.Since(start).Round(time.Millisecond))
	}
}

// TestAdmissionOneKeyCannotHoldEveryTab: a few bytes of CSS keep a
// Chromium tab busy for the whole render timeout, and a render that times
// out is refunded. One key sending as many such documents at once as
// there are tabs (one per core by default) kept every other account's
// conversions waiting until they timed out, for free. By default a key
// runs one conversion fewer than there are tabs: another account's small
// document is answered in seconds while the key's are stuck.
func TestAdmissionOneKeyCannotHoldEveryTab(t *testing.T) {
	if !chromiumAvailable() {
		t.Skip("chromium not installed (apt-get install chromium)")
	}
	if runtime.NumCPU() < 2 {
		t.Skip("one CPU: one tab, which a key's one conversion holds")
	}
	const stuck = 20 * time.Second
	h := startHost(t, withArgs("--backend", "chrome"), writeConfig(t, func(c *config.Config) {
		c.Render.Timeout = stuck
	}))
	_, hog := h.account("pro", 100)
	_, other := h.account("pro", 100)
	// Giant letters spaced wider still: laying them out outlasts any
	// render timeout.
	slow := map[string]string{"markdown": `<p style="font-size:100000px;letter-spacing:100000px">` +
		strings.Repeat("W", 5000) + "</p>\n"}
	hogs := make(chan outcome, runtime.NumCPU())
	client := burstClient()
	defer client.CloseIdleConnections()
	for range runtime.NumCPU() {
		go func() { hogs <- call(context.Background(), client, h.URL, hog, slow, nil) }()
	}
	time.Sleep(2 * time.Second) // the hog's documents are in their tabs
	start := time.Now()
	o := call(context.Background(), client, h.URL, other, map[string]string{"markdown": "# Small\n\nA small document."}, nil)
	took := time.Since(start)
	if o.err != nil || o.status != 200 || !isPDF(o.body) {
		t.Fatalf("another account's document: status %d, err %v, %.200s", o.status, o.err, o.body)
	}
	if took > stuck/2 {
		t.Fatalf("another account's document took %v, waiting for the hog's renders (timeout %v)", took, stuck)
	}
	t.Logf("another account's document took %v", took.Round(time.Millisecond))
	for range runtime.NumCPU() {
		if o := <-hogs; o.status == 200 {
			t.Errorf("the slow document printed: want it to time out")
		}
	}
}

// TestAdmissionOneAccountCannotFillQueue: an account of an unlimited plan
// that keeps sending kept the shared queue full, so that every other
// account's conversion that had to wait for a slot was answered 429 for as
// long as it kept sending. Now the other account takes a place of the
// hog's, which is refused instead (429 with Retry-After).
func TestAdmissionOneAccountCannotFillQueue(t *testing.T) {
	h := startHost(t, fpdf(), writeConfig(t, func(c *config.Config) {
		c.Server.MaxConcurrent, c.Server.Queue = 1, 8
	}))
	hogID, hog := h.account("pro", 100000)
	// A second key of the same account: its requests count against the
	// same share.
	var k struct {
		APIKey string `json:"apiKey"`
	}
	if err := json.Unmarshal(h.mdpress("accounts", "keys", "create", "--json", hogID), &k); err != nil || k.APIKey == "" {
		t.Fatalf("second key: %v", err)
	}
	_, other := h.account("pro", 100)
	heavy := map[string]string{"markdown": strings.Repeat("## Heading\n\nA paragraph of text that takes some laying out.\n\n", 1500)}

	ctx, stop := context.WithCancel(context.Background())
	defer stop()
	client := burstClient()
	defer client.CloseIdleConnections()
	var wg sync.WaitGroup
	var hogStatus sync.Map
	for i := range 24 { // three times the queue, sending without pause
		wg.Add(1)
		go func() {
			defer wg.Done()
			key := []string{hog, k.APIKey}[i%2]
			for ctx.Err() == nil {
				o := call(ctx, client, h.URL, key, heavy, nil)
				if o.err == nil {
					n, _ := hogStatus.LoadOrStore(o.status, new(atomic.Int64))
					n.(*atomic.Int64).Add(1)
				}
			}
		}()
	}
	defer wg.Wait()
	defer stop()
	time.Sleep(time.Second) // the queue is full of the hog's requests
	got := map[int]int{}
	for range 10 {
		o := call(context.Background(), client, h.URL, other, map[string]string{"markdown": "# Small"}, nil)
		if o.err != nil {
			t.Fatal(o.err)
		}
		got[o.status]++
		time.Sleep(100 * time.Millisecond)
	}
	refused := int64(0)
	if n, ok := hogStatus.Load(429); ok {
		refused = n.(*atomic.Int64).Load()
	}
	if refused == 0 {
		t.Fatal("the hog was never refused: the queue was not full, the test proves nothing")
	}
	if got[200] != 10 {
		t.Fatalf("the other account's conversions beside a full queue: %v, want 10 x 200", got)
	}
}
