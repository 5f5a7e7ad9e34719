package watermark

import (
	"bytes"
	"errors"
	"fmt"
	"strconv"
)

// errUnsupported marks a PDF this package does not stamp: one with
// cross-reference streams, an encrypted one, or one whose pages share so
// much, or numbers its objects so sparsely, that the stamped file would
// outgrow it. Chromium writes none of them.
var errUnsupported = errors.New("unsupported pdf")

// file is a PDF read through its classic cross-reference tables, newest
// section first.
type file struct {
	src       []byte
	startxref int   // offset of the newest cross-reference section
	trailer   value // the newest trailer
	xref      map[int]xentry
	// parsed keeps the objects read, so that one that many pages share,
	// such as resources inherited from the page tree, is parsed once.
	parsed map[int]parsed
}

type parsed struct {
	v      value
	stream bool
}

type xentry struct {
	off, gen int
	inUse    bool
}

// maxSections bounds the chain of /Prev links.
const maxSections = 1024

func readFile(src []byte) (*file, error) {
	tail := src[max(0, len(src)-1024):]
	i := bytes.LastIndex(tail, []byte("startxref"))
	if i < 0 {
		return nil, fmt.Errorf("%w: no startxref at the end", errSyntax)
	}
	p := &parser{src: tail, pos: i + len("startxref")}
	start, err := p.integer()
	if err != nil {
		return nil, err
	}
	f := &file{src: src, startxref: start, xref: make(map[int]xentry), parsed: make(map[int]parsed)}
	seen := make(map[int]bool)
	for off := start; ; {
		if seen[off] || len(seen) == maxSections {
			return nil, fmt.Errorf("%w: the cross-reference sections loop or are too many", errSyntax)
		}
		seen[off] = true
		trailer, err := f.section(off)
		if err != nil {
			return nil, err
		}
		if len(seen) == 1 {
			f.trailer = trailer
		}
		if _, ok := trailer.get("Encrypt"); ok {
			return nil, fmt.Errorf("%w: encrypted", errUnsupported)
		}
		if _, ok := trailer.get("XRefStm"); ok {
			return nil, fmt.Errorf("%w: cross-reference streams", errUnsupported)
		}
		prev, ok := trailer.get("Prev")
		if !ok {
			return f, nil
		}
		if prev.kind != kNumber {
			return nil, fmt.Errorf("%w: /Prev is %q", errSyntax, prev.raw)
		}
		off = int(prev.num)
	}
}

// section reads the cross-reference section at off, keeping the entries
// that no newer section defined, and returns its trailer.
func (f *file) section(off int) (value, error) {
	if off < 0 || off >= len(f.src) {
		return value{}, fmt.Errorf("%w: cross-reference offset %d outside the file", errSyntax, off)
	}
	p := &parser{src: f.src, pos: off}
	if t := p.token(); string(t) != "xref" {
		// "N 0 obj" here is a cross-reference stream (PDF 1.5).
		return value{}, fmt.Errorf("%w: no cross-reference table at offset %d (a cross-reference stream?)", errUnsupported, off)
	}
	for {
		save := p.pos
		if string(p.token()) == "trailer" {
			break
		}
		p.pos = save
		first, err := p.integer()
		if err != nil {
			return value{}, err
		}
		count, err := p.integer()
		if err != nil {
			return value{}, err
		}
		for n := first; n < first+count; n++ {
			at, err := p.integer()
			if err != nil {
				return value{}, err
			}
			gen, err := p.integer()
			if err != nil {
				return value{}, err
			}
			typ := string(p.token())
			if typ != "n" && typ != "f" {
				return value{}, fmt.Errorf("%w: cross-reference entry type %q", errSyntax, typ)
			}
			if _, ok := f.xref[n]; !ok {
				f.xref[n] = xentry{off: at, gen: gen, inUse: typ == "n"}
			}
		}
	}
	trailer, err := p.value(0)
	if err != nil {
		return value{}, err
	}
	if trailer.kind != kDict {
		return value{}, fmt.Errorf("%w: the trailer is not a dictionary", errSyntax)
	}
	return trailer, nil
}

// object returns object num, and whether it is a stream (of which only
// the dictionary is parsed).
func (f *file) object(num int) (v value, stream bool, err error) {
	if o, ok := f.parsed[num]; ok {
		return o.v, o.stream, nil
	}
	e, ok := f.xref[num]
	if !ok || !e.inUse || e.off < 0 || e.off >= len(f.src) {
		return value{}, false, fmt.Errorf("%w: object %d is not in the file", errSyntax, num)
	}
	p := &parser{src: f.src, pos: e.off}
	n, err := p.integer()
	if err != nil {
		return value{}, false, err
	}
	gen, err := p.integer()
	if err != nil {
		return value{}, false, err
	}
	if n != num || gen != e.gen {
		return value{}, false, fmt.Errorf("%w: the entry of object %d %d points to object %d %d", errSyntax, num, e.gen, n, gen)
	}
	if err := p.keyword("obj"); err != nil {
		return value{}, false, err
	}
	if v, err = p.value(0); err != nil {
		return value{}, false, err
	}
	stream = string(p.token()) == "stream"
	f.parsed[num] = parsed{v, stream}
	return v, stream, nil
}

// resolve follows v while it is a reference.
func (f *file) resolve(v value) (value, error) {
	for range 8 {
		if v.kind != kRef {
			return v, nil
		}
		var err error
		if v, _, err = f.object(v.obj); err != nil {
			return value{}, err
		}
	}
	return value{}, fmt.Errorf("%w: a chain of references too long", errSyntax)
}

// ref writes a reference to object num.
func ref(num, gen int) string {
	return strconv.Itoa(num) + " " + strconv.Itoa(gen) + " R"
}
