package e2e

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"
)

// exchange writes raw on a new connection to h and reads the answers that
// come, until the server closes the connection (closed) or is silent for
// a second.
func exchange(t *testing.T, h *host, raw string) (answers []*http.Response, bodies []string, closed bool) {
	t.Helper()
	c, err := net.DialTimeout("tcp", strings.TrimPrefix(h.URL, "http://"), 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := io.WriteString(c, raw); err != nil {
		t.Fatal(err)
	}
	br := bufio.NewReader(c)
	for {
		_ = c.SetReadDeadline(time.Now().Add(time.Second))
		if _, err := br.Peek(1); err != nil {
			if ne, ok := err.(net.Error); ok && ne.Timeout() {
				return answers, bodies, false
			}
			return answers, bodies, true
		}
		_ = c.SetReadDeadline(time.Now().Add(10 * time.Second))
		resp, err := http.ReadResponse(br, nil)
		if err != nil {
			t.Fatalf("answer %d: %v", len(answers)+1, err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		answers, bodies = append(answers, resp), append(bodies, string(b))
	}
}

// TestSecurityAmbiguousFraming: a request carrying both Content-Length and
// Transfer-Encoding: chunked was served (net/http reads it as chunked and
// drops Content-Length before any handler sees it), charged, and its
// connection kept open for the requests after it. A proxy in front that
// went by Content-Length instead forwarded the rest of the body as the
// next request on that connection: request smuggling. RFC 9112 §6.1 has it
// handled as an error and the connection closed; the host answers 400
// and closes, charging nothing, while a plain chunked request is served
// as before on a connection kept open.
func TestSecurityAmbiguousFraming(t *testing.T) {
	h := startHost(t, fpdf())
	_, key := h.account("pro", 10)
	body := `{"markdown":"# Smuggled","output":"url"}`
	chunked := fmt.Sprintf("%x\r\n%s\r\n0\r\n\r\n", len(body), body)
	post := "POST /v1/pdf/markdown HTTP/1.1\r\nHost: mdpress\r\nAuthorization: Bearer " + key +
		"\r\nContent-Type: application/json\r\n"
	next := "GET /healthz HTTP/1.1\r\nHost: mdpress\r\n\r\n"

	for _, tc := range []struct {
		name, raw string
		// the answers' statuses, the 400 last when the connection must
		// close after it
		want    []int
		closed  bool
		charged int64
	}{
		{"chunked", post + "Transfer-Encoding: chunked\r\n\r\n" + chunked + next, []int{200, 200}, false, 1},
		// An old client's CR LF after the body, which net/http skips
		// (RFC 9112 §2.2), does not make the next request faulty.
		{"CR LF after the body", post + "Content-Length: " + fmt.Sprint(len(body)) + "\r\n\r\n" + body + "\r\n" + next, []int{200, 200}, false, 1},
		// net/http takes chunk lines up to 4 KiB: a long extension does
		// not make the next request faulty.
		{"long chunk extension", post + "Transfer-Encoding: chunked\r\n\r\n" + fmt.Sprintf("%x;x=%s\r\n%s\r\n0\r\n\r\n", len(body), strings.Repeat("e", 2000), body) + next, []int{200, 200}, false, 1},
		// A Content-Length folded onto the next line (obs-fold), which
		// net/http joins, is the length too.
		{"folded Content-Length", post + "Content-Length:\r\n " + fmt.Sprint(len(body)) + "\r\n\r\n" + body + next, []int{200, 200}, false, 1},
		{"both", post + "Content-Length: 4\r\nTransfer-Encoding: chunked\r\n\r\n" + chunked + next, []int{400}, true, 0},
		{"both, Content-Length first in lower case", post + "transfer-encoding: chunked\r\ncontent-length: 100\r\n\r\n" + chunked + next, []int{400}, true, 0},
		{"after a plain chunked request", post + "Transfer-Encoding: chunked\r\n\r\n" + chunked +
			post + "Content-Length: 4\r\nTransfer-Encoding: chunked\r\n\r\n" + chunked + next, []int{200, 400}, true, 1},
		// net/http answers OPTIONS * itself, without the handler: the
		// requests after it are still told apart.
		{"after OPTIONS *", "OPTIONS * HTTP/1.1\r\nHost: mdpress\r\n\r\n" +
			"GET /healthz HTTP/1.1\r\nHost: mdpress\r\nContent-Length: 0\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n" + next, []int{200, 400}, true, 0},
		{"Transfer-Encoding in HTTP/1.0", strings.Replace(post, "HTTP/1.1", "HTTP/1.0", 1) +
			"Connection: keep-alive\r\nTransfer-Encoding: chunked\r\nContent-Length: " + fmt.Sprint(len(chunked)) + "\r\n\r\n" + chunked, []int{400}, true, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before := h.balance(key)
			answers, bodies, closed := exchange(t, h, tc.raw)
			var got []int
			for _, a := range answers {
				got = append(got, a.StatusCode)
			}
			if fmt.Sprint(got) != fmt.Sprint(tc.want) || closed != tc.closed {
				t.Fatalf("answers %v, connection closed %v; want %v, closed %v\n%q", got, closed, tc.want, tc.closed, bodies)
			}
			last := len(answers) - 1
			if tc.want[last] == http.StatusBadRequest {
				e := decodeError(t, 400, []byte(bodies[last]))
				if !strings.Contains(e.Error, "Transfer-Encoding") {
					t.Errorf("400 body does not say why: %q", bodies[last])
				}
				if !answers[last].Close {
					t.Errorf("400 without Connection: close: %v", answers[last].Header)
				}
			}
			if after := h.balance(key); before-after != tc.charged {
				t.Errorf("charged %d credits, want %d", before-after, tc.charged)
			}
		})
	}
	// They are counted where operators look for refused requests.
	_, metrics := rawGet(t, h, "/metrics")
	if want := `mdpress_http_requests_total{code="400",route="faulty_framing"} 5`; !bytes.Contains(metrics, []byte(want)) {
		t.Errorf("metrics lack %s:\n%s", want, grepLines(metrics, "mdpress_http_requests_total"))
	}
}

// TestRefusedBeforeBody: a request refused before its body is read (a bad
// key here) is answered at once, its body unsent. It waited for the body:
// the connection bound wrapped the server's own request's body, so the
// server no longer knew a client awaiting 100 Continue (curl's way past
// 1 MiB), which then sent nothing until its own timeout (curl's: a
// second), nor a large body, of which it read 256 KiB before answering.
func TestRefusedBeforeBody(t *testing.T) {
	h := startHost(t, fpdf())
	post := "POST /v1/pdf/markdown HTTP/1.1\r\nHost: mdpress\r\nAuthorization: Bearer mdp_wrong\r\nContent-Type: application/json\r\n"
	for _, tc := range []struct{ name, headers string }{
		{"expecting 100 Continue", "Content-Length: 20000\r\nExpect: 100-continue\r\n"},
		{"large body", "Content-Length: 5000000\r\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, err := net.DialTimeout("tcp", strings.TrimPrefix(h.URL, "http://"), 5*time.Second)
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			if _, err := io.WriteString(c, post+tc.headers+"\r\n"); err != nil {
				t.Fatal(err)
			}
			_ = c.SetReadDeadline(time.Now().Add(700 * time.Millisecond))
			resp, err := http.ReadResponse(bufio.NewReader(c), nil)
			if err != nil {
				t.Fatalf("no answer with the body unsent: %v", err)
			}
			resp.Body.Close()
			if resp.StatusCode != http.StatusUnauthorized || !resp.Close {
				t.Fatalf("%d, Connection: close %v; want 401 and close", resp.StatusCode, resp.Close)
			}
		})
	}
}
