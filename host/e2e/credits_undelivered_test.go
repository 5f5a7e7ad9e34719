package e2e

import (
	"bufio"
	"bytes"
	"encoding/base64"
	"encoding/json"
	"image"
	"image/png"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/mdpress/mdpress/core/accounts"
	"github.com/mdpress/mdpress/host/config"
)

// TestCutAnswerRefunded: a client that goes away while its PDF is being
// written (after the headers, or after part of the body) is not charged:
// the reservation is refunded, with the reason in the ledger, the request's
// log line and /metrics. A retry with the same Idempotency-Key then
// converts and is charged once, rather than replaying for free a PDF no one
// paid for. A PDF read in full is still charged, and a hosted URL whose
// JSON answer was lost stays charged: the file is stored, and a retry gets
// the same URL for nothing.
func TestCutAnswerRefunded(t *testing.T) {
	h := startHost(t, fpdf())
	uid, key := h.account("pro", 20)
	st := accountStore{name: "sqlite"}.open(t, h.DataDir, 0)
	// Far more than the socket buffers of both ends hold, so that the
	// server is still writing when the client leaves.
	big := noiseDocument(t)
	want := int64(20)
	// The charge follows the answer: a moment may pass before it shows.
	balance := func(when string) {
		t.Helper()
		b := h.balance(key)
		for deadline := time.Now().Add(5 * time.Second); b != want && time.Now().Before(deadline); b = h.balance(key) {
			time.Sleep(20 * time.Millisecond)
		}
		if b != want {
			t.Fatalf("%s: balance %d, want %d", when, b, want)
		}
		checkLedger(t, st, uid, want)
	}

	t.Run("gone after the headers", func(t *testing.T) {
		resp := cutConversion(t, h, key, big, nil, 0)
		if resp.StatusCode != 200 || resp.ContentLength < 4<<20 {
			t.Fatalf("answer %d of %d bytes: the PDF fits the socket buffers", resp.StatusCode, resp.ContentLength)
		}
		balance("a client gone after the headers")
		waitLog(t, h, "undelivered=refunded", 1)
	})
	t.Run("gone in the middle of the body", func(t *testing.T) {
		cutConversion(t, h, key, big, nil, 1<<20)
		balance("a client gone after 1 MiB")
		waitLog(t, h, "undelivered=refunded", 2)
	})
	t.Run("read in full", func(t *testing.T) {
		resp, pdf := h.do("POST", convertPath, key, big, nil)
		if resp.StatusCode != 200 || !isPDF(pdf) || int64(len(pdf)) != resp.ContentLength {
			t.Fatalf("answer %d, %d bytes of %d", resp.StatusCode, len(pdf), resp.ContentLength)
		}
		want--
		balance("a PDF read in full")
	})
	t.Run("idempotent retry after a cut", func(t *testing.T) {
		idem := map[string]string{"Idempotency-Key": "cut-1"}
		cutConversion(t, h, key, big, idem, 64<<10)
		balance("a cut answer with an Idempotency-Key")
		waitLog(t, h, "undelivered=refunded", 3)
		r1, pdf1 := h.do("POST", convertPath, key, big, idem)
		if r1.StatusCode != 200 || r1.Header.Get(replayed) != "" || !isPDF(pdf1) {
			t.Fatalf("retry: %d, %s %q, %d bytes: want a new conversion", r1.StatusCode, replayed, r1.Header.Get(replayed), len(pdf1))
		}
		want--
		balance("the retry of a cut answer")
		r2, pdf2 := h.do("POST", convertPath, key, big, idem)
		if r2.StatusCode != 200 || r2.Header.Get(replayed) != "true" || !bytes.Equal(pdf1, pdf2) {
			t.Fatalf("second retry: %d, %s %q: want the delivered PDF replayed", r2.StatusCode, replayed, r2.Header.Get(replayed))
		}
		balance("a replay of the delivered retry")
	})
	t.Run("hosted answer lost stays charged", func(t *testing.T) {
		body := map[string]string{"markdown": "# Hosted, answer lost", "output": "url"}
		idem := map[string]string{"Idempotency-Key": "cut-url"}
		cutConversion(t, h, key, body, idem, 0)
		want--
		balance("a hosted answer lost")
		resp, b := h.do("POST", convertPath, key, body, idem)
		var out struct{ URL string }
		mustJSON(t, b, &out)
		if resp.StatusCode != 200 || resp.Header.Get(replayed) != "true" || out.URL == "" {
			t.Fatalf("retry: %d %s %q", resp.StatusCode, b, resp.Header.Get(replayed))
		}
		if get, pdf := fetch(t, "GET", out.URL, nil); get.StatusCode != 200 || !isPDF(pdf) {
			t.Fatalf("the URL of a lost answer: %d", get.StatusCode)
		}
		balance("the retry of a lost hosted answer")
	})

	refunds := 0
	for _, e := range checkLedger(t, st, uid, want).entries {
		if e.Kind == accounts.LedgerRefund {
			refunds++
			if !strings.HasPrefix(e.Reason, "undelivered") {
				t.Errorf("refund %s: reason %q, want it to say the PDF was undelivered", e.ReservationID, e.Reason)
			}
		}
	}
	if refunds != 3 {
		t.Errorf("%d refunds in the ledger, want 3 (one per cut answer)", refunds)
	}
	_, metrics := rawGet(t, h, "/metrics")
	if !bytes.Contains(metrics, []byte(`mdpress_pdf_undelivered_total{credits="refunded"} 3`)) ||
		!bytes.Contains(metrics, []byte("mdpress_credits_charged_total 3")) {
		t.Errorf("metrics do not count 3 refunded answers and 3 charged credits:\n%s", grepLines(metrics, "mdpress_pdf_undelivered_total", "mdpress_credits_charged_total"))
	}
}

// TestShutdownCutAnswerRefunded: a PDF whose client stops reading when a
// shutdown begins is cut when the drain window ends, and its reservation is
// refunded before the meter stops, not left held until it expires.
func TestShutdownCutAnswerRefunded(t *testing.T) {
	h := startHost(t, fpdf(), writeConfig(t, func(c *config.Config) { c.Server.ShutdownTimeout = time.Second }))
	uid, key := h.account("pro", 5)
	conn, resp := sendConversion(t, h, key, noiseDocument(t), nil)
	defer conn.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("status %d", resp.StatusCode)
	}
	// The client reads nothing more; give the host time to fill the buffers.
	time.Sleep(500 * time.Millisecond)
	if err := h.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case <-h.done:
	case <-time.After(60 * time.Second):
		t.Fatal("host did not exit within 60 s of SIGTERM")
	}
	if !strings.Contains(h.logs.String(), "undelivered=refunded") {
		t.Errorf("no request line says the cut answer was refunded")
	}
	st := accountStore{name: "sqlite"}.open(t, h.DataDir, 0)
	a, err := st.Account(t.Context(), uid)
	if err != nil {
		t.Fatal(err)
	}
	if a.Credits != 5 {
		t.Fatalf("balance %d after a shutdown cut the answer, want 5", a.Credits)
	}
	checkLedger(t, st, uid, 5)
	var held int
	if err := accountsDB(t, h).QueryRow(`SELECT count(*) FROM reservations WHERE state = 'reserved'`).Scan(&held); err != nil || held != 0 {
		t.Fatalf("%d reservations still held after the shutdown (%v)", held, err)
	}
}

// noiseDocument is a conversion whose PDF is about 6 MB (an image of noise,
// which no compression shrinks), more than loopback's socket buffers hold
// (4 MiB for the sender at most, the receiver's set small).
func noiseDocument(t *testing.T) map[string]string {
	t.Helper()
	img := image.NewNRGBA(image.Rect(0, 0, 1700, 1200))
	rng := rand.New(rand.NewPCG(1, 2))
	for i := range img.Pix {
		img.Pix[i] = byte(rng.Uint32())
		if i%4 == 3 {
			img.Pix[i] = 255
		}
	}
	var b bytes.Buffer
	if err := (&png.Encoder{CompressionLevel: png.NoCompression}).Encode(&b, img); err != nil {
		t.Fatal(err)
	}
	return map[string]string{"markdown": "# Noise\n\n![noise](data:image/png;base64," + base64.StdEncoding.EncodeToString(b.Bytes()) + ")\n"}
}

// sendConversion sends a conversion on a connection of its own, whose
// receive buffer is small, and reads the status line and headers.
func sendConversion(t *testing.T, h *host, key string, body any, hdr map[string]string) (net.Conn, *http.Response) {
	t.Helper()
	d := net.Dialer{Control: func(_, _ string, c syscall.RawConn) error {
		return c.Control(func(fd uintptr) { _ = syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_RCVBUF, 4<<10) })
	}}
	conn, err := d.Dial("tcp", strings.TrimPrefix(h.URL, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	j, _ := json.Marshal(body)
	req, _ := http.NewRequest("POST", h.URL+convertPath, bytes.NewReader(j))
	req.Header.Set("Authorization", "Bearer "+key)
	req.Header.Set("Content-Type", "application/json")
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	if err := req.Write(conn); err != nil {
		conn.Close()
		t.Fatal(err)
	}
	resp, err := http.ReadResponse(bufio.NewReaderSize(conn, 512), req)
	if err != nil {
		conn.Close()
		t.Fatal(err)
	}
	return conn, resp
}

// cutConversion sends a conversion, reads the headers and n bytes of the
// body, and closes the connection.
func cutConversion(t *testing.T, h *host, key string, body any, hdr map[string]string, n int64) *http.Response {
	t.Helper()
	conn, resp := sendConversion(t, h, key, body, hdr)
	defer conn.Close()
	if _, err := io.CopyN(io.Discard, resp.Body, n); err != nil {
		t.Fatalf("read %d bytes of the answer: %v", n, err)
	}
	return resp
}

// waitLog waits until the host's log holds n lines with s.
func waitLog(t *testing.T, h *host, s string, n int) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); strings.Count(h.logs.String(), s) < n; time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("%d log lines with %q after 10 s, want %d", strings.Count(h.logs.String(), s), s, n)
		}
	}
}

func grepLines(b []byte, prefixes ...string) string {
	var out []string
	for _, l := range strings.Split(string(b), "\n") {
		for _, p := range prefixes {
			if strings.HasPrefix(l, p) {
				out = append(out, l)
			}
		}
	}
	return strings.Join(out, "\n")
}
