package api

import (
	"bufio"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"
)

// FuzzFramerServes: a stream of well-framed requests, one never carrying
// both lengths, is served whole by net/http behind the connection limit:
// the framer, which follows what net/http reads, refuses none of them. The
// fuzzer's bytes choose the requests (methods, bodies of either framing,
// chunk sizes, extensions and trailers, bare LF lines, the CR LF an old
// client sends after a POST's body, OPTIONS *, HTTP/1.0 keep-alive), so
// that every stream it makes is one net/http accepts; a refusal is the
// framer parting from net/http.
func FuzzFramerServes(f *testing.F) {
	f.Add([]byte{0, 1, 2, 3, 4, 5, 6, 7})
	f.Add([]byte("\x01\x11\x21\x31\x41\x51\x61\x71\x81\x91"))
	f.Add([]byte("POST chunked \r\n\r\n trailers and extensions"))
	f.Add([]byte{2, 255, 7, 3, 9, 200, 4, 4, 4, 1, 6, 6})
	conns := NewConnLimit(64, WithLogger(slog.New(slog.DiscardHandler)))
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		f.Fatal(err)
	}
	srv := &http.Server{
		Handler: conns.Handler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			n, _ := io.Copy(io.Discard, r.Body)
			fmt.Fprintf(w, "%d", n)
		})),
		ConnState:         conns.ConnState,
		ConnContext:       conns.ConnContext,
		ReadHeaderTimeout: 5 * time.Second,
	}
	go func() { _ = srv.Serve(conns.Listener(ln)) }()
	f.Cleanup(func() { _ = srv.Close() })

	f.Fuzz(func(t *testing.T, choices []byte) {
		stream, bodies := wellFramed(choices)
		c, err := net.Dial("tcp", ln.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		_ = c.SetDeadline(time.Now().Add(5 * time.Second))
		if _, err := io.WriteString(c, stream); err != nil {
			t.Fatal(err)
		}
		br := bufio.NewReader(c)
		for i, want := range bodies {
			resp, err := http.ReadResponse(br, nil)
			if err != nil {
				t.Fatalf("answer %d of %d: %v\nstream %q", i+1, len(bodies), err, stream)
			}
			got, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != http.StatusOK || (want >= 0 && string(got) != fmt.Sprint(want)) {
				t.Fatalf("answer %d of %d: %d %q, want 200 %d\nstream %q", i+1, len(bodies), resp.StatusCode, got, want, stream)
			}
		}
	})
}

// wellFramed makes a stream of requests net/http accepts from choices, and
// the body length each answer reports (-1: OPTIONS *, answered by net/http
// itself).
func wellFramed(choices []byte) (string, []int) {
	next := func() int {
		if len(choices) == 0 {
			return 0
		}
		b := choices[0]
		choices = choices[1:]
		return int(b)
	}
	var s strings.Builder
	var bodies []int
	for range 1 + next()%6 {
		eol := "\r\n"
		if next()%5 == 0 {
			eol = "\n" // net/http reads bare LF header lines
		}
		proto := "HTTP/1.1"
		if next()%6 == 0 {
			proto = "HTTP/1.0"
		}
		kind := next() % 4
		if kind == 3 && proto == "HTTP/1.0" {
			kind = 1 // no chunked body in HTTP/1.0
		}
		// A body holding what looks like framing, for the framer not to
		// take for the stream's.
		body := strings.Repeat("x\r\nPOST / HTTP/1.1\r\nContent-Length: 1\r\n\r\n"[:next()%40], 1+next()%3)
		switch kind {
		case 0:
			s.WriteString("OPTIONS * " + proto + eol + "Host: m" + eol)
			bodies = append(bodies, -1)
		case 1:
			s.WriteString("GET /a?b=" + fmt.Sprint(next()) + " " + proto + eol + "Host: m" + eol)
			bodies = append(bodies, 0)
		case 2:
			s.WriteString("POST /p " + proto + eol + "Host: m" + eol + fmt.Sprintf("content-length: %d", len(body)) + eol)
			bodies = append(bodies, len(body))
		case 3:
			s.WriteString("POST /c " + proto + eol + "Host: m" + eol + "Transfer-Encoding: chunked" + eol)
			bodies = append(bodies, len(body))
		}
		if proto == "HTTP/1.0" {
			s.WriteString("Connection: keep-alive" + eol)
		}
		if next()%3 == 0 {
			s.WriteString("X-Extra: a" + eol)
		}
		s.WriteString(eol)
		switch kind {
		case 2:
			s.WriteString(body)
			if next()%4 == 0 {
				s.WriteString("\r\n") // an old client's, after a POST's body
			}
		case 3:
			for rest := body; rest != ""; {
				n := min(len(rest), 1+next()%17)
				ext := ""
				if next()%4 == 0 {
					ext = ";name=value"
				}
				fmt.Fprintf(&s, "%x%s\r\n%s\r\n", n, ext, rest[:n])
				rest = rest[n:]
			}
			s.WriteString("0\r\n")
			if next()%3 == 0 {
				s.WriteString("X-Trailer: t\r\n")
			}
			s.WriteString("\r\n")
		}
	}
	return s.String(), bodies
}
