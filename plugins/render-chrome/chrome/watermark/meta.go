package watermark

import (
	"bytes"
	"encoding/hex"
	"fmt"
	"slices"
	"strings"
	"unicode"
	"unicode/utf16"

	"golang.org/x/text/unicode/norm"
)

// Meta is what Describe writes over what Chromium put in a PDF for its
// readers.
type Meta struct {
	// Creator and Producer replace the document information's, which
	// Chromium fills with its user agent (the browser's exact version,
	// in every PDF handed to a client) and Skia's name. Empty: kept.
	Creator, Producer string
	// Headings are the texts of the document's headings. Chromium titles
	// a bookmark with its heading's text as laid out, and drops the space
	// where a heading wraps ("on andon"), and when a page break pushed
	// the heading down, puts first what it laid out of it before the
	// break ("Sub 4Sub 4"): a bookmark whose title is a heading's but for
	// white space, or a heading's after such a start, gets the heading's;
	// so does one that is a heading's and its footnote numbers. Math in a
	// heading Chromium titles with the formula's characters run together
	// ("𝑒𝑖𝜋+1=0"); the heading's text has it in plain form ("e^(iπ)+1=0"):
	// a title that is a heading's but for what the plain form adds gets
	// the heading's too.
	Headings []string
}

// maxOutline bounds the bookmarks Describe walks.
const maxOutline = 100_000

// Describe returns pdf with m written into it. The new document
// information takes the place of the old, in place: Chromium's is longer,
// its user agent, and what is left is padded with spaces, so that no
// offset moves and the file stays in one piece. Retitled bookmarks, whose
// titles grow by the spaces they get back, follow the file as an
// incremental update; so does the information when it does not fit,
// the old one blanked, so that the user agent leaves the file's bytes.
// Stamp, which reads updates, rewrites the file in one piece when a mark
// is due.
func Describe(pdf []byte, m Meta) ([]byte, error) {
	f, err := readFile(pdf)
	if err != nil {
		return nil, fmt.Errorf("read pdf: %w", err)
	}
	changed := make(map[int][]byte)
	info, hasInfo := f.trailer.get("Info")
	hasInfo = hasInfo && info.kind == kRef && (m.Creator != "" || m.Producer != "")
	if hasInfo {
		d, _, err := f.object(info.obj)
		if err != nil {
			return nil, fmt.Errorf("document information: %w", err)
		}
		if d.kind != kDict {
			return nil, fmt.Errorf("document information: %w: not a dictionary", errSyntax)
		}
		var b bytes.Buffer
		b.WriteString("<<")
		for _, e := range d.entries {
			if (e.key == "Creator" && m.Creator != "") || (e.key == "Producer" && m.Producer != "") {
				continue
			}
			writeEntry(&b, e)
		}
		for _, kv := range [][2]string{{"Creator", m.Creator}, {"Producer", m.Producer}} {
			if kv[1] != "" {
				b.WriteString("/" + kv[0] + " " + textString(kv[1]) + "\n")
			}
		}
		b.WriteString(">>")
		changed[info.obj] = b.Bytes()
	}
	if err := f.retitle(m.Headings, changed); err != nil {
		return nil, fmt.Errorf("outline: %w", err)
	}
	if len(changed) == 0 {
		return pdf, nil
	}

	out := make([]byte, len(pdf), len(pdf)+len(changed)<<9)
	copy(out, pdf)
	if hasInfo {
		start := f.xref[info.obj].off
		end, err := f.objectEnd(info.obj)
		if err != nil {
			return nil, fmt.Errorf("document information: %w", err)
		}
		obj := fmt.Appendf(nil, "%d %d obj\n", info.obj, f.xref[info.obj].gen)
		obj = append(obj, changed[info.obj]...)
		const tail = "\nendobj"
		if len(obj)+len(tail) <= end-start {
			// White space before endobj is white space to every reader.
			obj = append(obj, bytes.Repeat([]byte{' '}, end-start-len(obj)-len(tail))...)
			obj = append(obj, tail...)
			delete(changed, info.obj)
		} else {
			// The update writes it; between objects, spaces are nothing.
			obj = bytes.Repeat([]byte{' '}, end-start)
		}
		copy(out[start:end], obj)
		if len(changed) == 0 {
			return out, nil
		}
	}
	if out[len(out)-1] != '\n' {
		out = append(out, '\n')
	}
	nums := make([]int, 0, len(changed))
	for n := range changed {
		nums = append(nums, n)
	}
	slices.Sort(nums)
	offs := make([]int, len(nums))
	for i, n := range nums {
		offs[i] = len(out)
		out = fmt.Appendf(out, "%d %d obj\n", n, f.xref[n].gen)
		out = append(out, changed[n]...)
		out = append(out, "\nendobj\n"...)
	}
	start := len(out)
	out = append(out, "xref\n"...)
	for i, n := range nums {
		out = fmt.Appendf(out, "%d 1\n%010d %05d n\r\n", n, offs[i], f.xref[n].gen)
	}
	out = append(out, "trailer\n<<"...)
	for _, key := range []string{"Size", "Root", "Info", "ID"} {
		if v, ok := f.trailer.get(key); ok {
			out = append(out, "/"+key+" "...)
			out = append(out, v.raw...)
			out = append(out, '\n')
		}
	}
	out = fmt.Appendf(out, "/Prev %d>>\nstartxref\n%d\n%%%%EOF\n", f.startxref, start)
	return out, nil
}

// retitle puts into changed the bookmarks whose titles need a heading's
// spacing back.
func (f *file) retitle(headings []string, changed map[int][]byte) error {
	if len(headings) == 0 {
		return nil
	}
	hs := newHeadingSet(headings)
	root, err := f.resolve(getOr(f.trailer, "Root", value{}))
	if err != nil {
		return err
	}
	outlines, ok := root.get("Outlines")
	if !ok || outlines.kind != kRef {
		return nil
	}
	top, _, err := f.object(outlines.obj)
	if err != nil {
		return err
	}
	seen := make(map[int]bool)
	stack := []value{getOr(top, "First", value{})}
	for len(stack) > 0 {
		item := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if item.kind != kRef {
			continue
		}
		if seen[item.obj] || len(seen) == maxOutline {
			return fmt.Errorf("%w: the outline loops or is too long", errSyntax)
		}
		seen[item.obj] = true
		d, _, err := f.object(item.obj)
		if err != nil {
			return err
		}
		if d.kind != kDict {
			return fmt.Errorf("%w: outline item %d is not a dictionary", errSyntax, item.obj)
		}
		stack = append(stack, getOr(d, "Next", value{}), getOr(d, "First", value{}))
		title, ok := d.get("Title")
		if !ok {
			continue
		}
		got, ok := decodeText(title.raw)
		if !ok {
			continue
		}
		fixed := hs.match(squeeze(got))
		if fixed == "" || fixed == got {
			continue
		}
		var b bytes.Buffer
		b.WriteString("<<")
		for _, e := range d.entries {
			if e.key == "Title" {
				b.WriteString("/Title " + textString(fixed) + "\n")
				continue
			}
			writeEntry(&b, e)
		}
		b.WriteString(">>")
		changed[item.obj] = b.Bytes()
	}
	return nil
}

// headingSet finds the heading a bookmark's title stands for.
type headingSet struct {
	// want maps a heading's text without white space to the text; ""
	// for a text that two headings spaced differently share.
	want    map[string]string
	math    map[string]string // as want, by mathKey
	lengths []int             // of want's keys, longest first
	budget  int               // bytes left to compare on titles that match no key
}

// maxMatchWork bounds the bytes compared to match all of a document's
// titles that are not exactly a heading's: a document of many long
// headings, all mangled, keeps the rest as Chromium wrote them.
const maxMatchWork = 16 << 20

func newHeadingSet(headings []string) *headingSet {
	hs := &headingSet{want: make(map[string]string, len(headings)), math: make(map[string]string), budget: maxMatchWork}
	for _, h := range headings {
		h = strings.Join(strings.Fields(h), " ")
		k := squeeze(h)
		if m := mathKey(k); m != k {
			if prev, ok := hs.math[m]; ok && prev != h {
				hs.math[m] = ""
			} else {
				hs.math[m] = h
			}
		}
		if prev, ok := hs.want[k]; ok && prev != h {
			h = ""
		}
		if _, ok := hs.want[k]; !ok {
			hs.lengths = append(hs.lengths, len(k))
		}
		hs.want[k] = h
	}
	slices.Sort(hs.lengths)
	hs.lengths = slices.Compact(hs.lengths)
	slices.Reverse(hs.lengths)
	return hs
}

// match returns the heading that t, a title without white space, is, or
// "". Chromium's title is a heading's text, or, for a heading that a page
// break pushed down, what it laid out of it before the break (its first
// lines, or all of it) followed by all of it: "Sub 4Sub 4". An exact
// match wins, so a heading "Go Go" is not "Go" twice.
func (hs *headingSet) match(t string) string {
	if h, ok := hs.want[t]; ok {
		return h
	}
	if len(hs.math) > 0 {
		if h := hs.math[mathKey(t)]; h != "" {
			return h
		}
	}
	// Chromium's title also holds the numbers of the heading's footnote
	// references, which its text (render-fpdf's bookmark, the PDF's
	// title) leave out: "Results1". The longest heading wins: "Sub41" is
	// "Sub 4" and note 1.
	for i := len(t) - 1; i > 0 && t[i] >= '0' && t[i] <= '9'; i-- {
		if hs.budget -= i; hs.budget < 0 {
			return ""
		}
		if h, ok := hs.want[t[:i]]; ok {
			return h
		}
	}
	for _, l := range hs.lengths {
		if l >= len(t) || l == 0 {
			continue
		}
		if hs.budget -= len(t); hs.budget < 0 {
			return ""
		}
		h, ok := hs.want[t[len(t)-l:]]
		if ok && prefixRun(t[:len(t)-l], t[len(t)-l:]) {
			return h
		}
	}
	return ""
}

// prefixRun reports whether p is made of prefixes of h, one after the
// other.
func prefixRun(p, h string) bool {
	for p != "" {
		k := 0
		for k < len(p) && k < len(h) && p[k] == h[k] {
			k++
		}
		if k == 0 {
			return false
		}
		p = p[k:]
	}
	return true
}

// mathKey is t, a title without white space, as both a heading's plain
// form of its math and Chromium's title of it read: compatibility
// characters folded (𝑒 is e), without the characters the plain form adds
// ("^_()/√∛∜", Chromium draws what they stand for) and without marks,
// which either may write apart or over their letter.
func mathKey(t string) string {
	return strings.Map(func(r rune) rune {
		if strings.ContainsRune("^_()/√∛∜", r) || unicode.In(r, unicode.Mn, unicode.Cf) {
			return -1
		}
		return r
	}, norm.NFKC.String(t))
}

// squeeze drops the white space of s.
func squeeze(s string) string {
	return strings.Map(func(r rune) rune {
		if unicode.IsSpace(r) {
			return -1
		}
		return r
	}, s)
}

// decodeText reads a PDF text string as written, literal or hex: UTF-16BE
// after its byte order mark, else PDFDocEncoding, read as Latin-1 (they
// agree on what Chromium writes unmarked, printable ASCII).
func decodeText(raw []byte) (string, bool) {
	b, ok := stringBytes(raw)
	if !ok {
		return "", false
	}
	if len(b) >= 2 && b[0] == 0xfe && b[1] == 0xff {
		b = b[2:]
		if len(b)%2 != 0 {
			return "", false
		}
		u := make([]uint16, len(b)/2)
		for i := range u {
			u[i] = uint16(b[2*i])<<8 | uint16(b[2*i+1])
		}
		return string(utf16.Decode(u)), true
	}
	r := make([]rune, len(b))
	for i, c := range b {
		r[i] = rune(c)
	}
	return string(r), true
}

// stringBytes returns the bytes of a (literal) or <hex> string.
func stringBytes(raw []byte) ([]byte, bool) {
	if len(raw) >= 2 && raw[0] == '<' && raw[len(raw)-1] == '>' {
		h := bytes.Map(func(r rune) rune {
			if isSpace(byte(r)) {
				return -1
			}
			return r
		}, raw[1:len(raw)-1])
		if len(h)%2 != 0 {
			h = append(h, '0')
		}
		b := make([]byte, len(h)/2)
		if _, err := hex.Decode(b, h); err != nil {
			return nil, false
		}
		return b, true
	}
	if len(raw) < 2 || raw[0] != '(' || raw[len(raw)-1] != ')' {
		return nil, false
	}
	s := raw[1 : len(raw)-1]
	var b []byte
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c == '\r' { // an end of line in a string is read as \n
			if i+1 < len(s) && s[i+1] == '\n' {
				i++
			}
			b = append(b, '\n')
			continue
		}
		if c != '\\' || i+1 == len(s) {
			b = append(b, c)
			continue
		}
		i++
		switch c = s[i]; c {
		case 'n':
			b = append(b, '\n')
		case 'r':
			b = append(b, '\r')
		case 't':
			b = append(b, '\t')
		case 'b':
			b = append(b, '\b')
		case 'f':
			b = append(b, '\f')
		case '\r', '\n': // a line continued
			if c == '\r' && i+1 < len(s) && s[i+1] == '\n' {
				i++
			}
		case '0', '1', '2', '3', '4', '5', '6', '7':
			v := 0
			for j := 0; j < 3 && i < len(s) && s[i] >= '0' && s[i] <= '7'; j++ {
				v = v*8 + int(s[i]-'0')
				i++
			}
			i--
			b = append(b, byte(v))
		default: // \( \) \\, and a backslash before anything else is dropped
			b = append(b, c)
		}
	}
	return b, true
}

// textString writes s as a PDF text string: a literal when it is
// printable ASCII, else UTF-16BE with its byte order mark, in hex.
func textString(s string) string {
	ascii := true
	for i := 0; i < len(s); i++ {
		if s[i] < 0x20 || s[i] > 0x7e {
			ascii = false
			break
		}
	}
	if ascii {
		return literal([]byte(s))
	}
	u := utf16.Encode([]rune(s))
	b := make([]byte, 2, 2+2*len(u))
	b[0], b[1] = 0xfe, 0xff
	for _, c := range u {
		b = append(b, byte(c>>8), byte(c))
	}
	return "<" + strings.ToUpper(hex.EncodeToString(b)) + ">"
}
