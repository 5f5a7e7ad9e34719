package bench

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// mdToPdf is md-to-pdf (npm) converting on one warm browser, driven over
// a pipe by testdata/mdtopdf-driver.js.
type mdToPdf struct {
	in  io.WriteCloser
	out *bufio.Scanner
}

// startMdToPdf starts the driver, or skips when md-to-pdf or node is
// missing: the comparison needs them, the rest of the benchmarks do not.
func startMdToPdf(b *testing.B, chromium string) *mdToPdf {
	b.Helper()
	dir := os.Getenv("MDPRESS_MD_TO_PDF_DIR")
	if dir == "" {
		b.Skip("md-to-pdf not installed: make bench-deps (npm), or set MDPRESS_MD_TO_PDF_DIR")
	}
	if _, err := os.Stat(filepath.Join(dir, "node_modules", "md-to-pdf")); err != nil {
		b.Skipf("no md-to-pdf in %s: make bench-deps", dir)
	}
	node, err := exec.LookPath("node")
	if err != nil {
		b.Skip("node not installed (apt-get install nodejs)")
	}
	cmd := exec.Command(node, filepath.Join("testdata", "mdtopdf-driver.js"), dir, chromium)
	cmd.Stderr = os.Stderr
	in, err := cmd.StdinPipe()
	if err != nil {
		b.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		b.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() {
		in.Close()
		_ = cmd.Wait()
	})
	d := &mdToPdf{in: in, out: bufio.NewScanner(out)}
	d.out.Buffer(nil, 1<<20)
	var ready struct{ Ready bool }
	if err := d.answer(&ready); err != nil || !ready.Ready {
		b.Fatalf("md-to-pdf driver did not start: %v", err)
	}
	return d
}

func (d *mdToPdf) answer(v any) error {
	if !d.out.Scan() {
		if err := d.out.Err(); err != nil {
			return err
		}
		return io.ErrUnexpectedEOF
	}
	return json.Unmarshal(d.out.Bytes(), v)
}

// convert has md-to-pdf make a PDF of md, written to file too unless file
// is "", and returns its size.
func (d *mdToPdf) convert(md, file string) (int, error) {
	line, _ := json.Marshal(map[string]string{"markdown": md, "out": file})
	if _, err := d.in.Write(append(line, '\n')); err != nil {
		return 0, err
	}
	var a struct {
		Bytes int
		Error string
	}
	if err := d.answer(&a); err != nil {
		return 0, err
	}
	if a.Error != "" {
		return 0, fmt.Errorf("md-to-pdf: %s", a.Error)
	}
	return a.Bytes, nil
}

// pdfPages is pdfinfo's page count of the PDF in file, 0 without pdfinfo.
func pdfPages(file string) int {
	out, err := exec.Command("pdfinfo", file).Output()
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(out), "\n") {
		if v, ok := strings.CutPrefix(line, "Pages:"); ok {
			n, _ := strconv.Atoi(strings.TrimSpace(v))
			return n
		}
	}
	return 0
}

// BenchmarkVsMdToPdf: one client, the corpus's small, medium and large
// documents, end to end through mdpress on each backend vs md-to-pdf (npm)
// on a browser kept warm for the whole run, on the same Chromium. The three
// take turns document by document, so the machine's noise hits them alike.
// Figures: ms per document for each, and mdtopdf/chrome and mdtopdf/fpdf,
// how many times faster mdpress is (above 1: faster). Pages are reported
// for each, as the documents' layouts differ (themes, margins).
func BenchmarkVsMdToPdf(b *testing.B) {
	chromium := chromePath(b)
	theirs := startMdToPdf(b, chromium)
	ch := startHost(b, "chrome")
	fp := startHost(b, "fpdf")
	ctx := context.Background()
	theirPDF := filepath.Join(b.TempDir(), "md-to-pdf.pdf")
	for _, name := range []string{"small", "medium", "large"} {
		raw, err := os.ReadFile(filepath.Join("..", "render-fpdf", "render", "testdata", name+".md"))
		if err != nil {
			b.Fatal(err)
		}
		md := string(raw)
		b.Run(name, func(b *testing.B) {
			var pages [3]int
			for range 3 {
				var err error
				if _, pages[0], err = ch.convertPages(ctx, md); err != nil {
					b.Fatal(err)
				}
				if _, pages[1], err = fp.convertPages(ctx, md); err != nil {
					b.Fatal(err)
				}
				if _, err := theirs.convert(md, theirPDF); err != nil {
					b.Fatal(err)
				}
			}
			pages[2] = pdfPages(theirPDF)
			var chrome, fpdf, mdtopdf time.Duration
			for b.Loop() {
				start := time.Now()
				if _, err := ch.convert(ctx, md); err != nil {
					b.Fatal(err)
				}
				chromeDone := time.Now()
				if _, err := fp.convert(ctx, md); err != nil {
					b.Fatal(err)
				}
				fpdfDone := time.Now()
				time.Sleep(settle) // the hosts' commits after their answers
				theirStart := time.Now()
				if _, err := theirs.convert(md, ""); err != nil {
					b.Fatal(err)
				}
				mdtopdf += time.Since(theirStart)
				chrome += chromeDone.Sub(start)
				fpdf += fpdfDone.Sub(chromeDone)
			}
			n := float64(b.N)
			b.ReportMetric(chrome.Seconds()*1000/n, "chrome-ms/doc")
			b.ReportMetric(fpdf.Seconds()*1000/n, "fpdf-ms/doc")
			b.ReportMetric(mdtopdf.Seconds()*1000/n, "mdtopdf-ms/doc")
			b.ReportMetric(mdtopdf.Seconds()/chrome.Seconds(), "mdtopdf/chrome")
			b.ReportMetric(mdtopdf.Seconds()/fpdf.Seconds(), "mdtopdf/fpdf")
			b.ReportMetric(float64(pages[0]), "chrome-pages")
			b.ReportMetric(float64(pages[1]), "fpdf-pages")
			b.ReportMetric(float64(pages[2]), "mdtopdf-pages")
		})
	}
}
