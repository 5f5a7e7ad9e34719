package e2e

import (
	"bytes"
	"context"
	"crypto/sha256"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"path/filepath"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/mdpress/mdpress/sdk/plugintest"
	"github.com/mdpress/mdpress/sdk/stage"

	"github.com/mdpress/mdpress/host/internal/pdfcheck"
)

// bigPDFBytes is the size of the streamed file: about the hosted-file
// limit's default (50 MiB), so the largest file a client may be handed.
const bigPDFBytes = 50_000_000

// TestDeliveryStreamsLargeFile proves the host streams a hosted file
// rather than holding it: while a ~50 MB PDF is downloaded, the host's
// resident memory grows by a small fraction of the file. The file is put
// into the store by the sink-disk binary itself (rendering 50 MB of PDF
// would take minutes), then served by a host started on the same data dir.
func TestDeliveryStreamsLargeFile(t *testing.T) {
	pdfcheck.Require(t)
	dir := t.TempDir()
	pdf := bigPDF(bigPDFBytes, "Fifty megabytes of report")
	if info := pdfcheck.Read(t, pdf); info.Pages != 1 {
		t.Fatalf("the generated file is not a one-page PDF: %s", info.Raw)
	}
	want := sha256.Sum256(pdf)
	id := storeDirect(t, dir, pdf)

	h := startHost(t, withArgs("--backend", "fpdf"), withDataDir(dir))
	u := h.URL + "/v1/files/" + id

	head, body := fetch(t, "HEAD", u, nil)
	if head.StatusCode != http.StatusOK || len(body) != 0 || head.Header.Get("Content-Length") != strconv.Itoa(len(pdf)) ||
		head.Header.Get("ETag") != fmt.Sprintf(`"%x"`, want) {
		t.Fatalf("HEAD: %d, %d body bytes, headers %v", head.StatusCode, len(body), head.Header)
	}
	mid := len(pdf) / 2
	part, body := fetch(t, "GET", u, map[string]string{"Range": fmt.Sprintf("bytes=%d-%d", mid, mid+65535)})
	if part.StatusCode != http.StatusPartialContent || !bytes.Equal(body, pdf[mid:mid+65536]) ||
		part.Header.Get("Content-Range") != fmt.Sprintf("bytes %d-%d/%d", mid, mid+65535, len(pdf)) {
		t.Errorf("Range in the middle: %d %q, %d bytes", part.StatusCode, part.Header.Get("Content-Range"), len(body))
	}

	sinkPID := h.plugin("sink-disk")
	hostBase, sinkBase := rssKB(h.pid()), rssKB(sinkPID)
	stop := make(chan struct{})
	var hostPeak, sinkPeak int64
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		tick := time.NewTicker(5 * time.Millisecond)
		defer tick.Stop()
		for {
			hostPeak, sinkPeak = max(hostPeak, rssKB(h.pid())), max(sinkPeak, rssKB(sinkPID))
			select {
			case <-stop:
				return
			case <-tick.C:
			}
		}
	}()

	start := time.Now()
	resp, err := http.Get(u)
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.New()
	// A reader slower than the disk: a host that reads ahead of the
	// client would show the file in its memory.
	n, err := io.Copy(sum, &slowReader{r: resp.Body, every: 4 << 20, pause: 20 * time.Millisecond})
	resp.Body.Close()
	took := time.Since(start)
	close(stop)
	wg.Wait()
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("GET: %d after %d bytes: %v", resp.StatusCode, n, err)
	}
	if n != int64(len(pdf)) || !bytes.Equal(sum.Sum(nil), want[:]) {
		t.Fatalf("downloaded %d bytes with sha256 %x, want %d bytes with %x", n, sum.Sum(nil), len(pdf), want)
	}

	hostGrowth, sinkGrowth := hostPeak-hostBase, sinkPeak-sinkBase
	t.Logf("streamed %.1f MB in %s (%.0f MB/s, with %d pauses of 20ms); RSS host %d -> peak %d KiB (+%.1f MiB), sink-disk %d -> peak %d KiB (+%.1f MiB)",
		float64(n)/1e6, took.Round(time.Millisecond), float64(n)/1e6/took.Seconds(), n/(4<<20),
		hostBase, hostPeak, float64(hostGrowth)/1024, sinkBase, sinkPeak, float64(sinkGrowth)/1024)
	// Streaming still costs a bounded amount: gRPC's flow-control window
	// (sdk/plugin.WindowBytes, one chunk) holds data the HTTP client has not
	// taken yet, and 1 MiB chunks leave garbage until the next GC.
	// Measured: +14 MiB for a 50 MB file (+11 to +19 MiB for 10-150 MB
	// files with gRPC's dynamic window, which grows to 16 MiB). A host that
	// held the file would grow by the whole 48 MiB.
	const bound = 24 << 10 // KiB: half the file
	if hostGrowth > bound {
		t.Errorf("host RSS grew by %.1f MiB while streaming a %.0f MB file: it is buffering", float64(hostGrowth)/1024, float64(len(pdf))/1e6)
	}
	if sinkGrowth > bound {
		t.Errorf("sink-disk RSS grew by %.1f MiB while streaming a %.0f MB file: it is buffering", float64(sinkGrowth)/1024, float64(len(pdf))/1e6)
	}
}

// storeDirect stores pdf in the data dir's hosted-file store through the
// sink-disk binary, as the host would, and returns its id. That plugin
// process lives until the test ends; it shares the directory with the
// host's own sink-disk as two replicas would.
func storeDirect(t *testing.T, dataDir string, pdf []byte) string {
	t.Helper()
	c := plugintest.Launch(t, filepath.Join(binDir, "plugins", "sink-disk"), stage.NameSink, plugintest.Config{
		Request: &stage.ConfigureRequest{Config: []byte("{}"), DataDir: dataDir},
	})
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	res, err := c.Store(ctx, &stage.StoreRequest{
		Owner: "usr_delivery", Filename: "Fifty megabytes.pdf", PDF: pdf, TTL: 7 * 24 * time.Hour,
	})
	if err != nil {
		t.Fatalf("Store through sink-disk: %v", err)
	}
	if res.URL != "" || !fileIDRE.MatchString(res.ID) {
		t.Fatalf("Store: %+v, want a 32-hex id and no URL of its own", res)
	}
	return res.ID
}

// bigPDF returns a valid one-page PDF of size bytes showing text, padded
// with an unreferenced stream of random (incompressible) bytes.
func bigPDF(size int, text string) []byte {
	var b bytes.Buffer
	var offsets []int
	obj := func(body string) {
		offsets = append(offsets, b.Len())
		fmt.Fprintf(&b, "%d 0 obj\n%s\nendobj\n", len(offsets), body)
	}
	b.WriteString("%PDF-1.4\n%\xe2\xe3\xcf\xd3\n")
	obj("<< /Type /Catalog /Pages 2 0 R >>")
	obj("<< /Type /Pages /Kids [3 0 R] /Count 1 >>")
	obj("<< /Type /Page /Parent 2 0 R /MediaBox [0 0 595 842] /Contents 4 0 R /Resources << /Font << /F1 5 0 R >> >> >>")
	content := fmt.Sprintf("BT /F1 24 Tf 72 760 Td (%s) Tj ET", text)
	obj(fmt.Sprintf("<< /Length %d >>\nstream\n%s\nendstream", len(content), content))
	obj("<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>")

	pad := len(offsets) + 1 // the padding stream's object number
	offsets = append(offsets, b.Len())
	streamHead := func(n int) string { return fmt.Sprintf("%d 0 obj\n<< /Length %d >>\nstream\n", pad, n) }
	const streamEnd = "\nendstream\nendobj\n"
	var xref bytes.Buffer
	fmt.Fprintf(&xref, "xref\n0 %d\n0000000000 65535 f \n", pad+1)
	for _, o := range offsets {
		fmt.Fprintf(&xref, "%010d 00000 n \n", o)
	}
	trailer := func(xrefAt int) string {
		return fmt.Sprintf("trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n", pad+1, xrefAt)
	}
	n := size - b.Len() - len(streamHead(size)) - len(streamEnd) - xref.Len() - len(trailer(size))
	b.WriteString(streamHead(n))
	data := make([]byte, n)
	_, _ = rand.NewChaCha8([32]byte{'m', 'd', 'p', 'r', 'e', 's', 's'}).Read(data)
	b.Write(data)
	b.WriteString(streamEnd)
	xrefAt := b.Len()
	b.Write(xref.Bytes())
	b.WriteString(trailer(xrefAt))
	return b.Bytes()
}

// slowReader pauses after every every bytes.
type slowReader struct {
	r            io.Reader
	every, since int
	pause        time.Duration
}

func (s *slowReader) Read(p []byte) (int, error) {
	n, err := s.r.Read(p)
	s.since += n
	if s.since >= s.every {
		s.since = 0
		time.Sleep(s.pause)
	}
	return n, err
}
