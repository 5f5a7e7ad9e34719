package paint

import (
	"bytes"
	"compress/zlib"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"sync"
)

// fpdf deflates each page content stream with a compressor of its own,
// 1.2 MB to allocate and zero per page: for a ten-page document, 12 MB and
// about a third of its render time, and fpdf (archived upstream) has no
// way to hand it one. So fpdf writes the page streams uncompressed and
// deflateContents deflates them afterwards with pooled compressors, at
// fpdf's level.
var compressors = sync.Pool{New: func() any {
	zw, _ := zlib.NewWriterLevel(nil, zlib.BestSpeed)
	return zw
}}

var scratch = sync.Pool{New: func() any { return new(bytes.Buffer) }}

// errLayout is a PDF that is not in the form fpdf writes: a bug here, not
// bad input, since only fpdf's output reaches deflateContents.
var errLayout = errors.New("deflate page streams: unexpected PDF layout")

// deflateContents returns pdf, as fpdf wrote it with compression off, with
// each page content stream deflated (and any other stream fpdf writes in
// the same plain form, such as an image's palette).
func deflateContents(pdf []byte) ([]byte, error) { return finish(pdf, true) }

// displayTitle is the catalog entry that has viewers show the document's
// title, not its file name, in their title bar and tab, as Chromium's PDFs
// do. fpdf has no way to write it, so finish adds it.
const displayTitle = "/ViewerPreferences << /DisplayDocTitle true >>\n"

// finish returns pdf, as fpdf wrote it with compression off, with
// displayTitle in its catalog and, when deflate is set, each plain stream
// deflated as deflateContents says. It relies only on what
// fpdf's output guarantees: the cross-reference table's offsets, and the
// exact form of a plain stream object (`N 0 obj\n<</Length L>>\nstream\n`,
// L bytes, `\nendstream\nendobj\n`). Every other object but the catalog is
// copied as it is, and the table is written again with the objects' new
// offsets.
func finish(pdf []byte, deflate bool) ([]byte, error) {
	xrefAt, offsets, trailer, err := readXref(pdf)
	if err != nil {
		return nil, err
	}
	// Objects in file order (fpdf writes the page tree root after the
	// pages): each runs to the start of the next, the last to the table.
	order := make([]int, 0, len(offsets))
	for n := 1; n < len(offsets); n++ {
		order = append(order, n)
	}
	slices.SortFunc(order, func(a, b int) int { return offsets[a] - offsets[b] })
	if len(order) == 0 || offsets[order[0]] <= 0 {
		return nil, errLayout
	}

	out := bytes.NewBuffer(make([]byte, 0, len(pdf)/2))
	out.Write(pdf[:offsets[order[0]]])
	moved := make([]int, len(offsets))
	zw := compressors.Get().(*zlib.Writer)
	defer compressors.Put(zw)
	z := scratch.Get().(*bytes.Buffer)
	defer scratch.Put(z)
	for i, n := range order {
		end := xrefAt
		if i+1 < len(order) {
			end = offsets[order[i+1]]
		}
		obj := pdf[offsets[n]:end]
		moved[n] = out.Len()
		if rest, ok := bytes.CutPrefix(obj, catalogHead(n)); ok {
			out.Write(obj[:len(obj)-len(rest)])
			out.WriteString(displayTitle)
			out.Write(rest)
			continue
		}
		if !deflate {
			out.Write(obj)
			continue
		}
		content, ok := contentStream(obj, n)
		if !ok {
			out.Write(obj)
			continue
		}
		z.Reset()
		zw.Reset(z)
		if _, err := zw.Write(content); err != nil {
			return nil, fmt.Errorf("deflate page stream: %w", err)
		}
		if err := zw.Close(); err != nil {
			return nil, fmt.Errorf("deflate page stream: %w", err)
		}
		fmt.Fprintf(out, "%d 0 obj\n<</Filter /FlateDecode /Length %d>>\nstream\n", n, z.Len())
		out.Write(z.Bytes())
		out.WriteString("\nendstream\nendobj\n")
	}

	table := out.Len()
	fmt.Fprintf(out, "xref\n0 %d\n0000000000 65535 f \n", len(offsets))
	for n := 1; n < len(offsets); n++ {
		fmt.Fprintf(out, "%010d 00000 n \n", moved[n])
	}
	out.Write(trailer)
	fmt.Fprintf(out, "startxref\n%d\n%%%%EOF\n", table)
	return out.Bytes(), nil
}

// readXref reads fpdf's cross-reference table: where it starts, the offset
// of each object by number (index 0 unused), and the trailer dictionary
// that follows it, up to "startxref".
func readXref(pdf []byte) (at int, offsets []int, trailer []byte, err error) {
	tail := pdf[max(0, len(pdf)-64):]
	i := bytes.LastIndex(tail, []byte("startxref\n"))
	if i < 0 {
		return 0, nil, nil, errLayout
	}
	num, _, _ := bytes.Cut(tail[i+len("startxref\n"):], []byte("\n"))
	at, err = strconv.Atoi(string(num))
	if err != nil || at <= 0 || at >= len(pdf) {
		return 0, nil, nil, errLayout
	}
	end := len(pdf) - len(tail) + i
	rest, ok := bytes.CutPrefix(pdf[at:end], []byte("xref\n0 "))
	if !ok {
		return 0, nil, nil, errLayout
	}
	num, rest, _ = bytes.Cut(rest, []byte("\n"))
	count, err := strconv.Atoi(string(num))
	// Entries are 20 bytes each: ten digits of offset, generation, type.
	if err != nil || count < 1 || len(rest) < 20*count {
		return 0, nil, nil, errLayout
	}
	offsets = make([]int, count)
	for n := 1; n < count; n++ {
		e := rest[20*n : 20*n+20]
		off, err := strconv.Atoi(string(e[:10]))
		if err != nil || e[17] != 'n' || off <= 0 || off >= at {
			return 0, nil, nil, errLayout
		}
		offsets[n] = off
	}
	return at, offsets, rest[20*count:], nil
}

// catalogHead is how fpdf starts object n when it is the catalog.
func catalogHead(n int) []byte {
	return fmt.Appendf(nil, "%d 0 obj\n<<\n/Type /Catalog\n", n)
}

// contentStream returns the data of obj if it is object n in the form fpdf
// writes a plain stream with nothing in its dictionary but the length.
func contentStream(obj []byte, n int) ([]byte, bool) {
	var head [32]byte
	prefix := strconv.AppendInt(head[:0], int64(n), 10)
	prefix = append(prefix, " 0 obj\n<</Length "...)
	rest, ok := bytes.CutPrefix(obj, prefix)
	if !ok {
		return nil, false
	}
	num, rest, ok := bytes.Cut(rest, []byte(">>\nstream\n"))
	if !ok {
		return nil, false
	}
	length, err := strconv.Atoi(string(num))
	if err != nil || length < 0 || length > len(rest) {
		return nil, false
	}
	if string(rest[length:]) != "\nendstream\nendobj\n" {
		return nil, false
	}
	return rest[:length], true
}
