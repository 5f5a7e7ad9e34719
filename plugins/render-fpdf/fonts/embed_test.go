package fonts

import (
	"bytes"
	"os/exec"
	"sync"
	"testing"
	"time"

	"github.com/go-pdf/fpdf"
)

// drawSample writes sample in three faces of the set into a one-page PDF.
func drawSample(t testing.TB, s *Set) []byte {
	t.Helper()
	ids := []ID{Of(Sans, Regular), Of(Serif, BoldItalic), Of(Mono, Bold)}
	pdf := fpdf.NewCustom(&fpdf.InitType{UnitStr: "pt", Size: fpdf.SizeType{Wd: 420, Ht: 160}})
	pdf.SetCompression(false)
	pdf.SetCatalogSort(true)
	pdf.SetCreationDate(time.Unix(0, 0))
	pdf.SetModificationDate(time.Unix(0, 0))
	used := runesOf(sample)
	for _, id := range ids {
		s.Embed(pdf, id, used)
	}
	pdf.AddPage()
	for i, id := range ids {
		pdf.SetFont(s.Face(id).Name, "", 13)
		pdf.Text(10, float64(40+40*i), sample)
	}
	var buf bytes.Buffer
	if err := pdf.Output(&buf); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// TestEmbedPathsAgree checks the prepared-definition path against fpdf's
// own parse of the same per-document font: same pixels, same text.
func TestEmbedPathsAgree(t *testing.T) {
	for _, tool := range []string{"pdftoppm", "pdftotext"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("%s not installed", tool)
		}
	}
	fast := loadSet(t)
	if !fast.Injecting() {
		t.Fatal("prepared font definitions are not in use with the pinned fpdf version")
	}
	slow := *fast
	slow.inject = nil
	a, b := drawSample(t, fast), drawSample(t, &slow)
	tool := func(pdf []byte, name string, args ...string) []byte {
		cmd := exec.Command(name, args...)
		cmd.Stdin = bytes.NewReader(pdf)
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		return out
	}
	if !bytes.Equal(tool(a, "pdftoppm", "-r", "72", "-gray", "-"), tool(b, "pdftoppm", "-r", "72", "-gray", "-")) {
		t.Error("the two paths render different pixels")
	}
	ta, tb := tool(a, "pdftotext", "-enc", "UTF-8", "-", "-"), tool(b, "pdftotext", "-enc", "UTF-8", "-", "-")
	if !bytes.Equal(ta, tb) || !bytes.Contains(ta, []byte("Привет")) {
		t.Errorf("text differs:\n%s\n%s", ta, tb)
	}
	// Everything outside the font objects is the same document.
	if len(a) < 1000 || len(b) < 1000 {
		t.Fatalf("PDFs of %d and %d bytes", len(a), len(b))
	}
}

// TestEmbedConcurrent renders from one Set on many goroutines; run with
// -race it shows that documents share nothing they write.
func TestEmbedConcurrent(t *testing.T) {
	s := loadSet(t)
	want := drawSample(t, s)
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			for range 2 {
				if got := drawSample(t, s); !bytes.Equal(got, want) {
					t.Error("concurrent documents differ")
					return
				}
			}
		})
	}
	wg.Wait()
}
