package api

import (
	"strconv"
	"strings"
	"testing"
)

// TestFramer follows streams of requests read whole and a byte at a time,
// as a connection may read them.
func TestFramer(t *testing.T) {
	get := "GET / HTTP/1.1\r\nHost: x\r\n\r\n"
	inner := "POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n"
	long := "GET /" + strings.Repeat("a", 3000) + " HTTP/1.0\r\nCookie: " + strings.Repeat("c", 3000) + "\r\n\r\n"
	for _, tc := range []struct {
		name   string
		stream string
		count  int64 // requests the handler sees
		faulty int64 // the first faulty, 0 none
	}{
		{"plain", get + get, 2, 0},
		{"content-length body holding a request", "POST / HTTP/1.1\r\nContent-Length: " + strconv.Itoa(len(inner)) + "\r\n\r\n" + inner + get, 2, 0},
		{"chunked with extension and trailer", "POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n3;x=y\r\nabc\r\n0\r\nX-T: 1\r\n\r\n" + get, 2, 0},
		{"chunk extension longer than a kept line", "POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n3;x=" + strings.Repeat("e", 2000) + "\r\nabc\r\n0\r\n\r\n" + get, 2, 0},
		{"chunk data holding CRLFs", "POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n4\r\n\r\n\r\n\r\n0\r\n\r\n" + get, 2, 0},
		{"bare LF headers", "GET / HTTP/1.1\nHost: x\n\n" + get, 2, 0},
		{"CR LF after a POST's body", "POST / HTTP/1.1\r\nContent-Length: 2\r\n\r\nab\r\n" + get, 2, 0},
		{"long lines", long + get, 2, 0},
		{"both lengths", get + "POST / HTTP/1.1\r\nContent-Length: 3\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n" + get, 2, 2},
		{"Content-Length folded onto the next line", "GET / HTTP/1.1\r\nContent-Length:\r\n 2\r\n\r\nab" + get, 2, 0},
		{"Content-Length folded, then repeated", "GET / HTTP/1.1\r\nContent-Length: \r\n\t2 \r\ncontent-length: 2\r\n\r\nab" + get, 2, 0},
		{"Content-Length folded into another", "GET / HTTP/1.1\r\nContent-Length: 2\r\nContent-Length:\r\n 3\r\n\r\nabc" + get, 0, 1},
		{"Content-Length folded into two numbers", "GET / HTTP/1.1\r\nContent-Length: 1\r\n 2\r\n\r\nab" + get, 1, 2},
		{"folded header, space before the colon", "POST / HTTP/1.1\r\nX: a\r\n b\r\ncontent-LENGTH : 3\r\ntransfer-encoding: chunked\r\n\r\n", 0, 1},
		{"transfer-encoding in HTTP/1.0", "POST / HTTP/1.0\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n", 0, 1},
		{"OPTIONS * is not the handler's", "OPTIONS * HTTP/1.1\r\n\r\n" + get + "GET / HTTP/1.1\r\nContent-Length: 0\r\nTransfer-Encoding: chunked\r\n\r\n", 1, 2},
		{"bad chunk end: the next request", "POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n1\r\nab\r\n0\r\n\r\n" + get, 1, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for _, step := range []int{len(tc.stream), 1, 7} {
				var f framer
				for s := tc.stream; s != ""; {
					n := min(step, len(s))
					f.read([]byte(s[:n]))
					s = s[n:]
				}
				if f.faulty != tc.faulty || (tc.faulty == 0 && f.count != tc.count) {
					t.Errorf("read %d bytes at a time: %d requests, faulty %d; want %d, %d", step, f.count, f.faulty, tc.count, tc.faulty)
				}
			}
		})
	}
}
