package watermark

import (
	"bytes"
	"cmp"
	"fmt"
	"math"
	"slices"
)

// span is where an object is written in a file: from "N G obj" to the end
// of its "endobj".
type span struct{ num, start, end int }

// spans returns the spans of the objects in use, in file order. They must
// not overlap: each object is copied once, and what an object spans is
// its own.
func (f *file) spans() ([]span, error) {
	out := make([]span, 0, len(f.xref))
	for n, e := range f.xref {
		if !e.inUse {
			continue
		}
		if n == 0 {
			return nil, fmt.Errorf("%w: object 0 is in use", errSyntax)
		}
		end, err := f.objectEnd(n)
		if err != nil {
			return nil, fmt.Errorf("object %d: %w", n, err)
		}
		out = append(out, span{n, e.off, end})
	}
	slices.SortFunc(out, func(a, b span) int { return cmp.Compare(a.start, b.start) })
	for i := 1; i < len(out); i++ {
		if out[i].start < out[i-1].end {
			return nil, fmt.Errorf("%w: object %d lies within object %d", errSyntax, out[i].num, out[i-1].num)
		}
	}
	return out, nil
}

// objectEnd returns the offset past the "endobj" of object num. A stream
// is skipped by its /Length, direct or indirect; the keywords must be
// where it says.
func (f *file) objectEnd(num int) (int, error) {
	e := f.xref[num]
	if e.off < 0 || e.off >= len(f.src) {
		return 0, fmt.Errorf("%w: offset %d outside the file", errSyntax, e.off)
	}
	p := &parser{src: f.src, pos: e.off, skim: true}
	n, err := p.integer()
	if err != nil {
		return 0, err
	}
	gen, err := p.integer()
	if err != nil {
		return 0, err
	}
	if n != num || gen != e.gen {
		return 0, fmt.Errorf("%w: the entry of object %d %d points to object %d %d", errSyntax, num, e.gen, n, gen)
	}
	if err := p.keyword("obj"); err != nil {
		return 0, err
	}
	if _, err := p.value(0); err != nil {
		return 0, err
	}
	switch t := p.token(); string(t) {
	case "endobj":
		return p.pos, nil
	case "stream":
	default:
		return 0, fmt.Errorf("%w: %q at offset %d, want endobj or stream", errSyntax, t, p.pos-len(t))
	}
	v, _, err := f.object(num) // the stream's dictionary, in full
	if err != nil {
		return 0, err
	}
	length, err := f.resolve(getOr(v, "Length", value{}))
	if err != nil {
		return 0, fmt.Errorf("stream /Length: %w", err)
	}
	// The line end after "stream" is CR LF or LF.
	if p.pos < len(p.src) && p.src[p.pos] == '\r' {
		p.pos++
	}
	if p.pos < len(p.src) && p.src[p.pos] == '\n' {
		p.pos++
	}
	l := length.num
	if length.kind != kNumber || l < 0 || l != math.Trunc(l) || l > float64(len(p.src)-p.pos) {
		return 0, fmt.Errorf("%w: stream /Length %q", errSyntax, length.raw)
	}
	p.pos += int(l)
	if err := p.keyword("endstream"); err != nil {
		return 0, fmt.Errorf("stream /Length %q: %w", length.raw, err)
	}
	if err := p.keyword("endobj"); err != nil {
		return 0, err
	}
	return p.pos, nil
}

// version returns the version in a file's header, "%PDF-1.4" at least:
// the mark's opacity is of PDF 1.4.
func version(src []byte) ([]byte, error) {
	const prefix = "%PDF-"
	if !bytes.HasPrefix(src, []byte(prefix)) {
		return nil, fmt.Errorf("%w: no %%PDF- header", errSyntax)
	}
	v := src[len(prefix):min(len(src), len(prefix)+3)]
	if len(v) != 3 || v[0] < '1' || v[0] > '9' || v[1] != '.' || v[2] < '0' || v[2] > '9' {
		return nil, fmt.Errorf("%w: header %q", errSyntax, src[:min(len(src), 8)])
	}
	if string(v) < "1.4" {
		v = []byte("1.4")
	}
	return v, nil
}

// rewrite is the stamped file being written: a header, the objects of the
// original that stay as they are, copied byte for byte, the new and the
// replaced objects, and one cross-reference table for them all.
type rewrite struct {
	out  []byte
	xref []xentryAt
}

type xentryAt struct{ num, gen, off int }

// newRewrite starts a file of version v with room for src and the mark
// on pages pages.
func newRewrite(v []byte, src []byte, pages int) *rewrite {
	w := &rewrite{out: make([]byte, 0, len(src)+4<<10+pages<<9)}
	// The comment's bytes past 127 tell transfer programs the file is
	// binary.
	w.out = append(w.out, "%PDF-"...)
	w.out = append(w.out, v...)
	w.out = append(w.out, "\n%\xe2\xe3\xcf\xd3\n"...)
	return w
}

// copy writes the original's object at s as it is.
func (w *rewrite) copy(src []byte, s span, gen int) {
	w.xref = append(w.xref, xentryAt{s.num, gen, len(w.out)})
	w.out = append(w.out, src[s.start:s.end]...)
	w.out = append(w.out, '\n')
}

func (w *rewrite) object(num, gen int, body []byte) {
	w.xref = append(w.xref, xentryAt{num, gen, len(w.out)})
	w.out = fmt.Appendf(w.out, "%d %d obj\n", num, gen)
	w.out = append(w.out, body...)
	w.out = append(w.out, "\nendobj\n"...)
}

func (w *rewrite) stream(num int, data []byte) {
	body := fmt.Appendf(nil, "<</Length %d>>\nstream\n", len(data))
	body = append(body, data...)
	body = append(body, "\nendstream"...)
	w.object(num, 0, body)
}

// xrefLen is the length of the cross-reference table of size objects.
func xrefLen(size int) int { return len("xref\n0 \n") + 20 + 20*size }

// finish writes the cross-reference table of objects 0 to size-1 and the
// trailer, which keeps the original's /Root, /Info and /ID. The numbers
// not written are free, linked in order from object 0; a free entry keeps
// the generation the original gave it.
func (w *rewrite) finish(f *file, size int) []byte {
	slices.SortFunc(w.xref, func(a, b xentryAt) int { return cmp.Compare(a.num, b.num) })
	start := len(w.out)
	w.out = fmt.Appendf(w.out, "xref\n0 %d\n", size)
	written := w.xref
	for n := 0; n < size; n++ {
		if len(written) > 0 && written[0].num == n {
			w.out = fmt.Appendf(w.out, "%010d %05d n\r\n", written[0].off, written[0].gen)
			written = written[1:]
			continue
		}
		next := n + 1
		for i := 0; next < size && i < len(written) && written[i].num == next; i++ {
			next++
		}
		if next == size {
			next = 0
		}
		gen := 0
		if n == 0 {
			gen = 65535
		} else if e, ok := f.xref[n]; ok {
			gen = e.gen
		}
		w.out = fmt.Appendf(w.out, "%010d %05d f\r\n", next, gen)
	}
	w.out = fmt.Appendf(w.out, "trailer\n<</Size %d", size)
	for _, key := range []string{"Root", "Info", "ID"} {
		if v, ok := f.trailer.get(key); ok {
			w.out = append(w.out, "\n/"+key+" "...)
			w.out = append(w.out, v.raw...)
		}
	}
	w.out = fmt.Appendf(w.out, ">>\nstartxref\n%d\n%%%%EOF\n", start)
	return w.out
}
