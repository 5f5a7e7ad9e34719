package watermark

import (
	"bytes"
	"strings"
	"testing"
	"time"
)

// FuzzStamp stamps arbitrary bytes: whatever they are, Stamp returns in
// bounded time and memory without panicking, and what it stamps is the
// input rewritten, its objects copied but its pages, which are replaced,
// and that reads, and stamps, again. With
// objects set, the input is a list of objects split at NUL bytes that
// build numbers and indexes, so that mutations reach the object syntax
// rather than break the offsets of the cross-reference table.
//
//	go test ./plugins/render-chrome/chrome/watermark/ -run '^$' -fuzz FuzzStamp -fuzztime 3m -parallel 1
func FuzzStamp(f *testing.F) {
	chromium := chromiumPDF(f)
	f.Add(chromium, false)
	f.Add(handPDF(), false)
	if stamped, err := Stamp(chromium, Mark{Text: "X"}); err == nil {
		f.Add(stamped, false)
	}
	for _, objs := range [][]string{
		handObjects(),
		{`<</Type /Catalog /Pages 2 0 R>>`, `<</Type /Pages /Kids [2 0 R] /Count 1>>`},
		{
			`<</Type /Catalog /Pages 2 0 R>>`,
			`<</Type /Pages /Kids [3 0 R] /Count 1>>`,
			`<</Type /Page /Parent 2 0 R /MediaBox [0 0 600 800] /Resources <<>>>>`,
		},
	} {
		f.Add([]byte(strings.Join(objs, "\x00")), true)
	}
	f.Fuzz(func(t *testing.T, in []byte, objects bool) {
		if objects {
			in = build(strings.Split(string(in), "\x00")...)
		}
		start := time.Now()
		out, err := Stamp(in, Mark{Text: "A (B) \\"})
		// Linear work on a few kilobytes takes well under a millisecond;
		// this leaves room for a loaded machine and the race detector.
		if took := time.Since(start); took > time.Second {
			t.Fatalf("Stamp took %v on %d bytes", took, len(in))
		}
		if err != nil {
			return
		}
		if len(out) > maxSize(len(in), bytes.Count(in, []byte("obj"))) {
			t.Fatalf("stamped %d bytes from %d bytes of input", len(out), len(in))
		}
		checkRewritten(t, in, out)
		again, err := Stamp(out, Mark{Text: "again"})
		if err != nil {
			t.Fatalf("the stamped PDF does not stamp again: %v", err)
		}
		checkRewritten(t, out, again)
	})
}

// maxSize is the most a stamp may write for a file of n bytes with at
// most objs objects, and so pages: linear in both.
func maxSize(n, objs int) int { return 2*n + 1<<16 + objs<<10 }

// FuzzDescribe describes arbitrary bytes: whatever they are, Describe
// returns without panicking, and a file it changed reads again, with
// its update, and describes again to itself.
//
//	go test ./plugins/render-chrome/chrome/watermark/ -run '^$' -fuzz FuzzDescribe -fuzztime 1m -parallel 1
func FuzzDescribe(f *testing.F) {
	f.Add(chromiumPDF(f), "Printed by Chro mium")
	f.Add(handPDF(), "x")
	f.Fuzz(func(t *testing.T, in []byte, heading string) {
		m := Meta{Creator: "mdpress (c)", Producer: "mdpress é", Headings: []string{heading}}
		out, err := Describe(in, m)
		if err != nil || bytes.Equal(out, in) {
			return
		}
		if _, err := readFile(out); err != nil {
			t.Fatalf("the described PDF does not read: %v", err)
		}
		again, err := Describe(out, m)
		if err != nil {
			t.Fatalf("the described PDF does not describe again: %v", err)
		}
		if _, err := readFile(again); err != nil {
			t.Fatalf("the PDF described twice does not read: %v", err)
		}
	})
}
