package e2e

import (
	"bufio"
	"net"
	"net/http"
	"syscall"
	"testing"
	"time"

	"github.com/mdpress/mdpress/host/config"
)

// TestSIGTERMCutsStalledDownload: a download whose client stopped reading
// is cut when the drain ends, and the host exits then. Its write used to
// run on to the stall bound (a minute), so the host waited out the 15 s it
// gives cut requests and exited that much past its shutdownTimeout.
func TestSIGTERMCutsStalledDownload(t *testing.T) {
	h := startHost(t, fpdf(), writeConfig(t, func(c *config.Config) { c.Server.ShutdownTimeout = time.Second }))
	// Far more than the socket buffers of both ends hold.
	id := storeDirect(t, h.DataDir, bigPDF(64<<20, "stalled"))

	conn, err := net.Dial("tcp", h.URL[len("http://"):])
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	_ = conn.(*net.TCPConn).SetReadBuffer(4 << 10)
	if _, err := conn.Write([]byte("GET /v1/files/" + id + " HTTP/1.1\r\nHost: mdpress\r\n\r\n")); err != nil {
		t.Fatal(err)
	}
	resp, err := http.ReadResponse(bufio.NewReaderSize(conn, 4<<10), nil)
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("download: %v %v", resp, err)
	}
	// The client reads nothing more; give the host time to fill the buffers.
	time.Sleep(time.Second)

	start := time.Now()
	if err := h.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case <-h.done:
	case <-time.After(60 * time.Second):
		t.Fatal("host did not exit within 60 s of SIGTERM")
	}
	// The drain (1 s) and the plugins' exit; the 15 s wait for cut
	// requests is not spent.
	if took := time.Since(start); took > 8*time.Second {
		t.Fatalf("host exited %v after SIGTERM with a stalled download, want about shutdownTimeout (1s)", took.Round(100*time.Millisecond))
	}
}
