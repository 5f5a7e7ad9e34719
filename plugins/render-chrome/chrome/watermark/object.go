package watermark

import (
	"bytes"
	"errors"
	"fmt"
	"strconv"
)

// kind is the type of a PDF object.
type kind int

const (
	kOther  kind = iota // booleans, null, strings: kept as written
	kNumber             // integer or real
	kName
	kArray
	kDict
	kRef
)

// value is one parsed PDF object. raw is the object as written in the
// file, so that what the stamp does not change is copied byte for byte.
type value struct {
	kind     kind
	raw      []byte
	num      float64 // kNumber
	name     string  // kName, without the slash
	elems    []value // kArray
	entries  []entry // kDict, in file order
	obj, gen int     // kRef
}

type entry struct {
	key    string // without the slash, #xx escapes decoded
	rawKey []byte // as written, without the slash
	val    value
}

// get returns the value of a dictionary's key.
func (v value) get(key string) (value, bool) {
	for _, e := range v.entries {
		if e.key == key {
			return e.val, true
		}
	}
	return value{}, false
}

// maxDepth bounds the nesting of arrays and dictionaries.
const maxDepth = 64

var errSyntax = errors.New("pdf syntax")

// parser reads objects from a PDF file's bytes.
type parser struct {
	src []byte
	pos int
	// skim reads the syntax without building the values' parts: the
	// elements, entries and names are left out, for an object whose end
	// is all that is wanted.
	skim bool
}

func isSpace(c byte) bool {
	return c == ' ' || c == '\n' || c == '\r' || c == '\t' || c == '\f' || c == 0
}

func isDelim(c byte) bool {
	switch c {
	case '(', ')', '<', '>', '[', ']', '{', '}', '/', '%':
		return true
	}
	return false
}

// skip moves past white space and comments.
func (p *parser) skip() {
	for p.pos < len(p.src) {
		c := p.src[p.pos]
		switch {
		case isSpace(c):
			p.pos++
		case c == '%':
			for p.pos < len(p.src) && p.src[p.pos] != '\n' && p.src[p.pos] != '\r' {
				p.pos++
			}
		default:
			return
		}
	}
}

// token returns the regular characters at the position: a number or a
// keyword.
func (p *parser) token() []byte {
	p.skip()
	start := p.pos
	for p.pos < len(p.src) && !isSpace(p.src[p.pos]) && !isDelim(p.src[p.pos]) {
		p.pos++
	}
	return p.src[start:p.pos]
}

// keyword reads the keyword want or fails.
func (p *parser) keyword(want string) error {
	if got := p.token(); string(got) != want {
		return fmt.Errorf("%w: %q at offset %d, want %q", errSyntax, got, p.pos-len(got), want)
	}
	return nil
}

// integer reads a non-negative integer.
func (p *parser) integer() (int, error) {
	t := p.token()
	n, err := strconv.Atoi(string(t))
	if err != nil || n < 0 {
		return 0, fmt.Errorf("%w: %q at offset %d, want an integer", errSyntax, t, p.pos-len(t))
	}
	return n, nil
}

// value parses the object at the position.
func (p *parser) value(depth int) (value, error) {
	if depth > maxDepth {
		return value{}, fmt.Errorf("%w: objects nested deeper than %d", errSyntax, maxDepth)
	}
	p.skip()
	if p.pos >= len(p.src) {
		return value{}, fmt.Errorf("%w: unexpected end of file", errSyntax)
	}
	start := p.pos
	var v value
	var err error
	switch c := p.src[p.pos]; {
	case c == '/':
		p.pos++
		v = value{kind: kName}
		if name := p.token(); !p.skim {
			v.name = decodeName(name)
		}
	case c == '(':
		err = p.literalString()
	case c == '<' && p.pos+1 < len(p.src) && p.src[p.pos+1] == '<':
		v, err = p.dict(depth)
	case c == '<':
		end := bytes.IndexByte(p.src[p.pos:], '>')
		if end < 0 {
			return value{}, fmt.Errorf("%w: unterminated hex string at offset %d", errSyntax, start)
		}
		p.pos += end + 1
	case c == '[':
		v, err = p.array(depth)
	case c == '+' || c == '-' || c == '.' || c >= '0' && c <= '9':
		v, err = p.number()
	case isDelim(c):
		return value{}, fmt.Errorf("%w: unexpected %q at offset %d", errSyntax, c, start)
	default: // true, false, null
		if len(p.token()) == 0 {
			return value{}, fmt.Errorf("%w: unexpected %q at offset %d", errSyntax, c, start)
		}
	}
	if err != nil {
		return value{}, err
	}
	v.raw = p.src[start:p.pos]
	return v, nil
}

// number parses a number, or a reference "obj gen R" that starts with one.
func (p *parser) number() (value, error) {
	t := p.token()
	f, err := strconv.ParseFloat(string(t), 64)
	if err != nil || !isNumber(t) {
		return value{}, fmt.Errorf("%w: bad number %q at offset %d", errSyntax, t, p.pos-len(t))
	}
	v := value{kind: kNumber, num: f}
	obj, errInt := strconv.Atoi(string(t))
	if errInt != nil || obj < 0 {
		return v, nil
	}
	// Look ahead for "gen R"; put the position back when it is not there.
	save := p.pos
	gen, err := strconv.Atoi(string(p.token()))
	if err == nil && gen >= 0 && string(p.token()) == "R" {
		return value{kind: kRef, obj: obj, gen: gen}, nil
	}
	p.pos = save
	return v, nil
}

// isNumber reports whether t is written as a PDF number: a sign, digits
// and at most one point. strconv also reads exponents, hexadecimal, Inf
// and NaN, none of which PDF has, and the last two would reach the mark's
// geometry from a page box.
func isNumber(t []byte) bool {
	if len(t) > 0 && (t[0] == '+' || t[0] == '-') {
		t = t[1:]
	}
	digits, points := 0, 0
	for _, c := range t {
		switch {
		case c >= '0' && c <= '9':
			digits++
		case c == '.':
			points++
		default:
			return false
		}
	}
	return digits > 0 && points <= 1
}

// literalString moves past a (string), whose parentheses nest.
func (p *parser) literalString() error {
	start := p.pos
	depth := 0
	for p.pos < len(p.src) {
		switch p.src[p.pos] {
		case '\\':
			p.pos++
		case '(':
			depth++
		case ')':
			depth--
			if depth == 0 {
				p.pos++
				return nil
			}
		}
		p.pos++
	}
	return fmt.Errorf("%w: unterminated string at offset %d", errSyntax, start)
}

func (p *parser) array(depth int) (value, error) {
	p.pos++ // [
	v := value{kind: kArray}
	for {
		p.skip()
		if p.pos >= len(p.src) {
			return value{}, fmt.Errorf("%w: unterminated array", errSyntax)
		}
		if p.src[p.pos] == ']' {
			p.pos++
			return v, nil
		}
		e, err := p.value(depth + 1)
		if err != nil {
			return value{}, err
		}
		if !p.skim {
			v.elems = append(v.elems, e)
		}
	}
}

func (p *parser) dict(depth int) (value, error) {
	p.pos += 2 // <<
	v := value{kind: kDict}
	for {
		p.skip()
		if p.pos+1 < len(p.src) && p.src[p.pos] == '>' && p.src[p.pos+1] == '>' {
			p.pos += 2
			return v, nil
		}
		key, err := p.value(depth + 1)
		if err != nil {
			return value{}, err
		}
		if key.kind != kName {
			return value{}, fmt.Errorf("%w: dictionary key %q is not a name", errSyntax, key.raw)
		}
		val, err := p.value(depth + 1)
		if err != nil {
			return value{}, err
		}
		if !p.skim {
			v.entries = append(v.entries, entry{key: key.name, rawKey: key.raw[1:], val: val})
		}
	}
}

// decodeName undoes the #xx escapes of a name.
func decodeName(b []byte) string {
	if bytes.IndexByte(b, '#') < 0 {
		return string(b)
	}
	out := make([]byte, 0, len(b))
	for i := 0; i < len(b); i++ {
		if b[i] == '#' && i+2 < len(b) {
			if n, err := strconv.ParseUint(string(b[i+1:i+3]), 16, 8); err == nil {
				out = append(out, byte(n))
				i += 2
				continue
			}
		}
		out = append(out, b[i])
	}
	return string(out)
}
