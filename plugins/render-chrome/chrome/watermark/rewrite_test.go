package watermark

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"testing"
)

// pageObjects returns the page objects of pdf as written, "N G obj" to
// "endobj", with their /Contents, by the page tree.
func pageObjects(t *testing.T, pdf []byte) [][]byte {
	t.Helper()
	f, err := readFile(pdf)
	if err != nil {
		t.Fatal(err)
	}
	pages, err := f.pages()
	if err != nil {
		t.Fatal(err)
	}
	var out [][]byte
	for _, pg := range pages {
		off := f.xref[pg.num].off
		end := bytes.Index(pdf[off:], []byte("endobj"))
		if end < 0 {
			t.Fatalf("page object %d has no endobj", pg.num)
		}
		out = append(out, pdf[off:off+end+len("endobj")])
	}
	return out
}

// TestStampLeavesNoUnmarkedVersion: the stamped file is one version of
// the document, so no cut of it at an end of file marker yields the
// unmarked print, and the print's page objects are not in it.
func TestStampLeavesNoUnmarkedVersion(t *testing.T) {
	for name, in := range map[string][]byte{"chromium": chromiumPDF(t), "hand": handPDF()} {
		t.Run(name, func(t *testing.T) {
			out, err := Stamp(in, Mark{Text: "mdpress free plan"})
			if err != nil {
				t.Fatal(err)
			}
			for _, kw := range []string{"%%EOF", "startxref", "trailer"} {
				if n := bytes.Count(out, []byte(kw)); n != 1 {
					t.Errorf("%d %q in the stamped file, want 1", n, kw)
				}
			}
			if n := len(regexp.MustCompile(`(?m)^xref\r?$`).FindAllIndex(out, -1)); n != 1 {
				t.Errorf("%d cross-reference sections, want 1", n)
			}
			if !bytes.HasSuffix(out, []byte("%%EOF\n")) {
				t.Errorf("the file does not end at its %%%%EOF: %q", out[max(0, len(out)-20):])
			}
			if n := bytes.Count(out, []byte("%PDF-")); n != 1 || !bytes.HasPrefix(out, []byte("%PDF-1.4\n")) {
				t.Errorf("%d headers, want one %%PDF-1.4 at the start", n)
			}
			for _, pg := range pageObjects(t, in) {
				if bytes.Contains(out, pg) {
					t.Errorf("the stamped file holds the unmarked page object\n%s", pg)
				}
			}
			// Each object is written once: as many "obj" as the table
			// has objects in use.
			f, err := readFile(out)
			if err != nil {
				t.Fatal(err)
			}
			live := 0
			for _, e := range f.xref {
				if e.inUse {
					live++
				}
			}
			if n := len(regexp.MustCompile(`(?m)^\d+ \d+ obj\b`).FindAllIndex(out, -1)); n != live {
				t.Errorf("%d objects written, %d in use", n, live)
			}
			tool(t, out, "qpdf", "--check", "{}")
		})
	}
}

// TestStampSurvivesRecovery: readers rebuild a file whose
// cross-reference table is damaged by scanning it for objects. What they
// rebuild from the stamped file, cut at its first %%EOF and its table
// cut out, is the marked document, every page of it; and cut before its
// table, with no trailer left, it is nothing, or marked pages.
func TestStampSurvivesRecovery(t *testing.T) {
	needTool(t, "qpdf")
	needTool(t, "pdftotext")
	const mark = "mdpress free plan"
	for name, in := range map[string][]byte{"chromium": chromiumPDF(t), "hand": handPDF()} {
		t.Run(name, func(t *testing.T) {
			out, err := Stamp(in, Mark{Text: mark})
			if err != nil {
				t.Fatal(err)
			}
			eof := bytes.Index(out, []byte("%%EOF"))
			table := bytes.Index(out, []byte("\nxref"))
			trailer := bytes.Index(out, []byte("\ntrailer"))
			if table < 0 || trailer < table || eof < trailer {
				t.Fatal("no cross-reference table, trailer and end of file marker")
			}
			noTable := append(bytes.Clone(out[:table+1]), out[trailer+1:eof+len("%%EOF\n")]...)
			pages := len(pageObjects(t, in))
			for reader, pdf := range map[string][]byte{"poppler": noTable, "qpdf": rebuild(t, noTable)} {
				texts := pageTexts(t, pdf)
				if len(texts) != pages {
					t.Errorf("%s: %d pages recovered, want %d", reader, len(texts), pages)
				}
				for i, text := range texts {
					if !hasMark(text, mark) {
						t.Errorf("%s: recovered page %d has no mark:\n%s", reader, i+1, text)
					}
				}
			}
			cut := filepath.Join(t.TempDir(), "cut.pdf")
			if err := os.WriteFile(cut, out[:table+1], 0o644); err != nil {
				t.Fatal(err)
			}
			if text, err := exec.Command("pdftotext", "-raw", cut, "-").Output(); err == nil {
				for i, page := range bytes.Split(bytes.TrimRight(text, "\f\n"), []byte("\f")) {
					if !hasMark(string(page), mark) {
						t.Errorf("cut before the table: poppler reads page %d without the mark:\n%s", i+1, page)
					}
				}
			}
		})
	}
}

// rebuild has qpdf rebuild a damaged pdf's cross-reference table.
func rebuild(t *testing.T, pdf []byte) []byte {
	t.Helper()
	dir := t.TempDir()
	in, out := filepath.Join(dir, "damaged.pdf"), filepath.Join(dir, "rebuilt.pdf")
	if err := os.WriteFile(in, pdf, 0o644); err != nil {
		t.Fatal(err)
	}
	// qpdf warns that the file is damaged and exits 3.
	b, err := exec.Command("qpdf", in, out).CombinedOutput()
	if ee, ok := err.(*exec.ExitError); err != nil && (!ok || ee.ExitCode() != 3) {
		t.Fatalf("qpdf: %v\n%s", err, b)
	}
	if !bytes.Contains(b, []byte("reconstruct")) {
		t.Fatalf("qpdf did not rebuild the table:\n%s", b)
	}
	rebuilt, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	return rebuilt
}

// checkRewritten checks that out is in rewritten with a mark: one file
// ending at its %%EOF, with in's objects in use copied byte for byte,
// but its pages, which are the same pages, each in a new version only.
func checkRewritten(t testing.TB, in, out []byte) {
	t.Helper()
	if !bytes.HasPrefix(out, []byte("%PDF-")) || !bytes.HasSuffix(out, []byte("\n%%EOF\n")) {
		t.Fatal("the stamped PDF does not start at a header and end at its end of file marker")
	}
	fin, err := readFile(in)
	if err != nil {
		t.Fatal(err)
	}
	fout, err := readFile(out)
	if err != nil {
		t.Fatalf("the stamped PDF does not read: %v", err)
	}
	if _, ok := fout.trailer.get("Prev"); ok {
		t.Fatal("the stamped PDF's trailer links to an earlier one")
	}
	pin, err := fin.pages()
	if err != nil {
		t.Fatal(err)
	}
	pout, err := fout.pages()
	if err != nil {
		t.Fatalf("the stamped PDF's pages do not read: %v", err)
	}
	if len(pin) != len(pout) {
		t.Fatalf("%d pages stamped, %d printed", len(pout), len(pin))
	}
	replaced := make(map[int]bool)
	for i := range pin {
		if pin[i].num != pout[i].num || bytes.Equal(pin[i].dict.raw, pout[i].dict.raw) {
			t.Fatalf("page %d: object %d printed, object %d stamped, the same dictionary: %v",
				i+1, pin[i].num, pout[i].num, bytes.Equal(pin[i].dict.raw, pout[i].dict.raw))
		}
		replaced[pin[i].num] = true
	}
	spans, err := fin.spans()
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range spans {
		if replaced[s.num] {
			continue
		}
		e, ok := fout.xref[s.num]
		if o := in[s.start:s.end]; !ok || !e.inUse || !bytes.HasPrefix(out[e.off:], o) {
			t.Fatalf("object %d is not copied as it was", s.num)
		}
	}
}

// TestStampReadsObjectEnds: objects are copied by where they end, a
// stream's by its /Length, direct or indirect, which must end at
// "endstream"; a file whose objects overlap, or that lacks a header, or
// whose object numbers leave gaps too large, is refused.
func TestStampReadsObjectEnds(t *testing.T) {
	// The content stream's /Length is object 5, written after it, and
	// its data holds what looks like the end of the object.
	data := "BT /F1 12 Tf 20 250 Td (endstream endobj) Tj ET"
	indirect := build(
		`<</Type /Catalog /Pages 2 0 R>>`,
		`<</Type /Pages /Kids [3 0 R] /Count 1>>`,
		`<</Type /Page /Parent 2 0 R /MediaBox [0 0 300 400] /Contents 4 0 R /Resources <</Font <</F1 6 0 R>>>>>>`,
		"<</Length 5 0 R>>\nstream\r\n"+data+"\nendstream",
		strconv.Itoa(len(data)),
		`<</Type /Font /Subtype /Type1 /BaseFont /Helvetica>>`,
	)
	out, err := Stamp(indirect, Mark{Text: "LENGTH"})
	if err != nil {
		t.Fatal(err)
	}
	checkRewritten(t, indirect, out)
	checkStamped(t, indirect, out, "LENGTH", []string{"endstream endobj"})

	// Free objects, and earlier versions of objects, are left out: here
	// object 7 is free, and an update gives object 6 a new version.
	freed := bytes.Replace(indirect, []byte("0000000000 65535 f\r\n"), nil, 1)
	freed = bytes.Replace(freed, []byte("xref\n0 7\n"), []byte("xref\n0 1\n0000000007 65535 f\r\n7 1\n0000000000 00001 f\r\n1 6\n"), 1)
	freed = bytes.Replace(freed, []byte("/Size 7"), []byte("/Size 8"), 1)
	prev := bytes.LastIndex(freed, []byte("\nxref\n")) + 1
	at := len(freed)
	freed = fmt.Appendf(freed, "6 0 obj\n<</Type /Font /Subtype /Type1 /BaseFont /Courier>>\nendobj\n")
	freed = fmt.Appendf(freed, "xref\n6 1\n%010d 00000 n\r\ntrailer\n<</Size 8 /Root 1 0 R /Prev %d>>\nstartxref\n%d\n%%%%EOF\n",
		at, prev, at+len("6 0 obj\n<</Type /Font /Subtype /Type1 /BaseFont /Courier>>\nendobj\n"))

	tool(t, freed, "qpdf", "--check", "{}")
	if out, err = Stamp(freed, Mark{Text: "LENGTH"}); err != nil {
		t.Fatal(err)
	}
	checkRewritten(t, freed, out)
	tool(t, out, "qpdf", "--check", "{}")
	table := out[bytes.Index(out, []byte("xref\n")):]
	if !bytes.HasPrefix(table, []byte("xref\n0 12\n0000000007 65535 f\r\n")) || !bytes.Contains(table, []byte("\n0000000000 00001 f\r\n")) {
		t.Errorf("the free object is not linked from object 0 with its generation:\n%s", table)
	}
	if bytes.Contains(out, []byte("/BaseFont /Helvetica>>")) || bytes.Count(out, []byte("%%EOF")) != 1 {
		t.Error("the stamped file keeps the earlier version of object 6, or the update's end")
	}

	// page is a PDF of one page whose content is a stream object.
	page := func(header, content string) []byte {
		pdf := build(
			`<</Type /Catalog /Pages 2 0 R>>`,
			`<</Type /Pages /Kids [3 0 R] /Count 1>>`,
			`<</Type /Page /Parent 2 0 R /MediaBox [0 0 600 800] /Contents 4 0 R>>`,
			content,
		)
		return append([]byte(header), pdf[len("%PDF-1.4"):]...)
	}
	const line = "0 0 m 10 10 l S"
	if _, err := Stamp(page("%PDF-1.4", stream(line)), Mark{Text: "X"}); err != nil {
		t.Fatalf("the sound file: %v", err)
	}
	tests := []struct {
		name string
		pdf  []byte
	}{
		{"/Length short", page("%PDF-1.4", "<</Length 14>>\nstream\n"+line+"\nendstream")},
		{"/Length long", page("%PDF-1.4", "<</Length 17>>\nstream\n"+line+"\nendstream")},
		{"/Length past the end", page("%PDF-1.4", "<</Length 99999>>\nstream\n"+line+"\nendstream")},
		{"/Length missing", page("%PDF-1.4", "<</Length2 15>>\nstream\n"+line+"\nendstream")},
		{"/Length a real", page("%PDF-1.4", "<</Length 15.5>>\nstream\n"+line+"\nendstream")},
		{"/Length a free object", page("%PDF-1.4", "<</Length 9 0 R>>\nstream\n"+line+"\nendstream")},
		{"no endobj", page("%PDF-1.4", stream(line)+"\nendobjx")},
		{"no header", page("%PDX-1.4", stream(line))},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, err := Stamp(tt.pdf, Mark{Text: "X"})
			if !errors.Is(err, errSyntax) {
				t.Fatalf("stamped (%d bytes, error %v), want a syntax error", len(out), err)
			}
		})
	}
	t.Run("/Size far past the objects", func(t *testing.T) {
		in := bytes.Replace(page("%PDF-1.4", stream(line)), []byte("/Size 5"), []byte("/Size 99999"), 1)
		if out, err := Stamp(in, Mark{Text: "X"}); !errors.Is(err, errUnsupported) {
			t.Fatalf("stamped (%d bytes, error %v), want unsupported", len(out), err)
		}
	})
	t.Run("objects overlap", func(t *testing.T) {
		// The page's entry points into object 4's data, which spells a
		// page too: copying object 4 would keep it.
		page := "3 0 obj\n<</Type /Page /Parent 2 0 R /MediaBox [0 0 600 800]>>\nendobj"
		in := build(
			`<</Type /Catalog /Pages 2 0 R>>`,
			`<</Type /Pages /Kids [3 0 R] /Count 1>>`,
			`<</Type /Page /Parent 2 0 R /MediaBox [0 0 600 800] /Contents 4 0 R>>`,
			stream(page),
		)
		entry := bytes.Index(in, []byte("xref\n")) + len("xref\n0 5\n") + 3*20
		copy(in[entry:], fmt.Sprintf("%010d", bytes.LastIndex(in, []byte(page))))
		if _, err := PageCount(in); err != nil {
			t.Fatalf("the page does not read: %v", err)
		}
		if out, err := Stamp(in, Mark{Text: "X"}); !errors.Is(err, errSyntax) {
			t.Fatalf("stamped (%d bytes, error %v), want a syntax error", len(out), err)
		}
	})
}
