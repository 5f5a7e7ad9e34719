package api

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"testing"
	"time"
)

// TestConnLimitSending: at the bound, an address past its share gives up
// the connection it has been sending a request on the longest, and only
// while the request is still coming: connections whose requests are in,
// being answered (a conversion running), keep their places, as do bodies
// coming at a slow link's pace past the grace.
func TestConnLimitSending(t *testing.T) {
	const bound = 4
	read := make(chan struct{}, bound)
	hold := make(chan struct{})
	defer close(hold)
	l := NewConnLimit(bound, WithSendingPerAddress(1))
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{
		Handler: l.Handler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if _, err := io.ReadAll(r.Body); err == nil && r.Method == http.MethodPost {
				read <- struct{}{}
				<-hold // a conversion running
			}
		})),
		ConnState: l.ConnState, ConnContext: l.ConnContext, ReadHeaderTimeout: 10 * time.Second,
	}
	go func() { _ = srv.Serve(l.Listener(ln)) }()
	defer srv.Close()
	dial := func(from string) net.Conn {
		t.Helper()
		d := net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(from)}}
		c, err := d.Dial("tcp", ln.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		return c
	}
	get := func(from string) int {
		t.Helper()
		c := dial(from)
		fmt.Fprint(c, "GET / HTTP/1.1\r\nHost: x\r\n\r\n")
		_ = c.SetReadDeadline(time.Now().Add(5 * time.Second))
		resp, err := http.ReadResponse(bufio.NewReader(c), nil)
		if err != nil {
			t.Fatalf("GET from %s: %v", from, err)
		}
		resp.Body.Close()
		c.Close()
		return resp.StatusCode
	}
	post := func(from, body string) net.Conn {
		c := dial(from)
		fmt.Fprintf(c, "POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 10\r\n\r\n%s", body)
		return c
	}
	closed := func(c net.Conn) bool {
		_ = c.SetReadDeadline(time.Now().Add(20 * time.Millisecond))
		_, err := c.Read(make([]byte, 1))
		return err == io.EOF
	}

	var received []net.Conn
	for range bound {
		received = append(received, post("127.0.0.1", "0123456789"))
	}
	for range bound {
		<-read
	}
	if code := get("127.0.0.2"); code != http.StatusServiceUnavailable {
		t.Fatalf("past the bound beside requests all received: %d, want 503", code)
	}
	for i, c := range received {
		if closed(c) {
			t.Fatalf("received request %d lost its connection", i)
		}
	}
	for range bound {
		hold <- struct{}{}
	}
	for _, c := range received {
		c.Close()
	}

	time.Sleep(100 * time.Millisecond) // their places given back
	var sending []net.Conn
	for range bound {
		sending = append(sending, post("127.0.0.1", "0"))
		time.Sleep(10 * time.Millisecond) // in order of age
	}
	time.Sleep(100 * time.Millisecond)
	if code := get("127.0.0.2"); code != http.StatusOK {
		t.Fatalf("past the bound beside one address's bodies still coming: %d, want 200", code)
	}
	if !closed(sending[0]) {
		t.Error("the connection sending longest kept its place")
	}
	for i, c := range sending[1:] {
		if closed(c) {
			t.Errorf("sending connection %d closed, want only the oldest", i+1)
		}
		c.Close()
	}

	// Bodies coming at a slow link's pace, past the grace, one an
	// address: a client's uploads, which keep their places.
	time.Sleep(100 * time.Millisecond)
	stop := make(chan struct{})
	done := make(chan struct{}, bound)
	var uploads []net.Conn
	for i := range bound {
		c := dial(fmt.Sprintf("127.0.0.%d", 10+i))
		uploads = append(uploads, c)
		fmt.Fprint(c, "POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 1000000\r\n\r\n")
		go func() {
			defer func() { done <- struct{}{} }()
			chunk := make([]byte, 512)
			for {
				select {
				case <-stop:
					return
				case <-time.After(100 * time.Millisecond): // 5 KiB/s
				}
				if _, err := c.Write(chunk); err != nil {
					return
				}
			}
		}()
	}
	time.Sleep(sendGrace + 500*time.Millisecond)
	if code := get("127.0.0.4"); code != http.StatusServiceUnavailable {
		t.Errorf("past the bound beside uploads at 5 KiB/s: %d, want 503", code)
	}
	close(stop)
	for range uploads {
		<-done
	}
	for i, c := range uploads {
		if closed(c) {
			t.Errorf("upload %d at 5 KiB/s lost its connection", i)
		}
	}
}

// TestConnLimitRefusesLateRequest: past the bound, a connection whose
// request comes after the second the server waits for it is still
// answered 503, not closed unanswered or reset.
func TestConnLimitRefusesLateRequest(t *testing.T) {
	l := NewConnLimit(1)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: l.Handler(http.NotFoundHandler()),
		ConnState: l.ConnState, ConnContext: l.ConnContext, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = srv.Serve(l.Listener(ln)) }()
	defer srv.Close()
	dial := func() net.Conn {
		t.Helper()
		c, err := net.Dial("tcp", ln.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		return c
	}
	dial() // holds the one place, sending nothing for less than sendGrace
	time.Sleep(50 * time.Millisecond)
	late := dial()
	time.Sleep(time.Second + 200*time.Millisecond)
	fmt.Fprint(late, "GET / HTTP/1.1\r\nHost: x\r\n\r\n")
	_ = late.SetReadDeadline(time.Now().Add(5 * time.Second))
	resp, err := http.ReadResponse(bufio.NewReader(late), nil)
	if err != nil {
		t.Fatalf("a request 1.2 s after connecting past the bound: %v, want a 503", err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusServiceUnavailable {
		t.Fatalf("a request 1.2 s after connecting past the bound: %d, want 503", resp.StatusCode)
	}
}
