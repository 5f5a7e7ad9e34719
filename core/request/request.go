// Package request decodes and validates the public conversion request,
// applying the contract's defaults. Every rejection is an *apierr.Error with
// status 400 whose details name the field, what was sent and what is allowed.
package request

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"unicode/utf8"

	"golang.org/x/text/language"

	"github.com/mdpress/mdpress/core/apierr"
	"github.com/mdpress/mdpress/core/papers"
	"github.com/mdpress/mdpress/sdk/stage"
)

// Output values.
const (
	OutputBinary = "binary"
	OutputURL    = "url"
)

// Allowed values of the enum fields, in the contract's order.
var (
	Outputs    = []string{OutputBinary, OutputURL}
	Themes     = []string{"basic", "modern"}
	Numberings = []string{"none", "center", "left", "right"}
)

// Defaults of the contract. pageNumeration: the seed documents disagree
// (none vs center); the reference's value, center, is used.
const (
	DefaultOutput    = OutputBinary
	DefaultTheme     = "modern"
	DefaultNumbering = "center"
	DefaultPageSize  = papers.Default
)

// Conversion is a validated request with defaults applied.
type Conversion struct {
	Markdown  string
	Output    string
	Theme     string
	Numbering stage.Numbering
	Page      stage.PageSize
	// Lang is the document's language as a canonical BCP 47 tag, or empty
	// when the client did not say: the PDF then claims none, since a
	// guess (Chromium's is its own locale, en-US) would have a screen
	// reader announce a French document as English.
	Lang string
}

// langAllowed describes the lang field's values in a rejection.
const langAllowed = "a BCP 47 language tag such as fr, pt-BR or zh-Hans; leave lang out when unknown"

// Decode parses and validates a request body. The body is read twice (the
// decoder's validity scan, then the decoding itself), not once per check
// as before: five times, which took a ten-page document's body and a
// megabyte's 1.6-1.7x as long (BenchmarkDecode).
func Decode(body []byte) (*Conversion, error) {
	if UTF16(body) {
		return nil, invalid("the request body is UTF-16, not UTF-8", map[string]any{"received": "UTF-16", "allowed": "UTF-8 text"}).
			WithHint("re-encode it as UTF-8: iconv -f utf-16 -t utf-8, or in PowerShell Set-Content -Encoding utf8")
	}
	// A byte order mark is what Windows tools (PowerShell's Set-Content
	// -Encoding UTF8, Notepad before 2019) start a UTF-8 file with, and
	// RFC 8259 lets a parser ignore it: refused, it was "not valid JSON"
	// at position 1, at a character no editor shows.
	trimmed := bytes.TrimSpace(bytes.TrimPrefix(body, []byte("\xef\xbb\xbf")))
	if len(trimmed) == 0 {
		return nil, invalid("the request body is empty", nil).
			WithHint(`send a JSON object such as {"markdown": "# Hello"}`)
	}
	fields, err := decodeObject(trimmed)
	if err != nil {
		return nil, err
	}

	// Before the markdown field's own checks: {"Markdown": ...} is told
	// its field's name, not that the field is missing.
	if err := nearMisses(fields); err != nil {
		return nil, err
	}

	c := &Conversion{Output: DefaultOutput, Theme: DefaultTheme, Numbering: DefaultNumbering}
	page := DefaultPageSize

	raw, ok := fields["markdown"]
	if !ok || raw == nil {
		received := "null"
		if !ok {
			received = "nothing"
		}
		return nil, invalid("the markdown field is required", map[string]any{"field": "markdown", "received": received, "allowed": "a string of at least 1 character"}).
			WithHint(`add "markdown": "<your Markdown text>" to the body`)
	}
	md, err := str("markdown", raw, "a string of at least 1 character")
	if err != nil {
		return nil, err
	}
	if strings.ContainsRune(md, utf8.RuneError) && !utf8.Valid(body) {
		return nil, notUTF8(body)
	}
	if md == "" {
		return nil, invalid("the markdown field must not be empty", map[string]any{"field": "markdown", "received": "", "allowed": "a string of at least 1 character"}).
			WithHint("send at least one character of Markdown")
	}
	c.Markdown = md

	for _, f := range []struct {
		name    string
		allowed []string
		dst     *string
	}{
		{"output", Outputs, &c.Output},
		{"theme", Themes, &c.Theme},
		{"pageNumeration", Numberings, (*string)(&c.Numbering)},
		{"pageSize", papers.Names(), &page},
	} {
		raw, ok := fields[f.name]
		if !ok || raw == nil {
			continue
		}
		v, err := enum(f.name, raw, f.allowed)
		if err != nil {
			return nil, err
		}
		*f.dst = v
	}
	c.Page, _ = papers.Lookup(page)
	if raw, ok := fields["lang"]; ok && raw != nil {
		if c.Lang, err = lang(raw); err != nil {
			return nil, err
		}
	}
	return c, nil
}

// Fields are the request's fields, as the contract spells them.
var Fields = []string{"markdown", "output", "theme", "pageNumeration", "pageSize", "lang"}

// aliases are names clients reach for that mean one of Fields, folded as
// fold folds them.
var aliases = map[string]string{
	"numbering": "pageNumeration", "pagenumbering": "pageNumeration", "pagenumbers": "pageNumeration",
	"pagenumber": "pageNumeration", "pagenumeration": "pageNumeration",
	"papersize": "pageSize", "paper": "pageSize", "pageformat": "pageSize",
	"language": "lang", "locale": "lang",
}

// nearMisses refuses a field the contract does not know when it is a
// known one misspelt: a different case ("pagesize"), snake or kebab case
// ("page_size"), a typo ("pageSzie") or a common synonym ("numbering").
// Ignored, as unknown fields are, it would have the client charged for a
// PDF without the option it asked for, A4 for its Letter, and no error to
// say why. Fields far from every known name stay ignored, so a client
// written against a later version of the contract still works.
func nearMisses(fields map[string]any) error {
	// Of several misses, the first in byte order is reported, so that the
	// same body always gets the same answer; names are not sorted for it,
	// since a body may hold a hundred thousand.
	var name, meant string
	for n := range fields {
		if m, ok := meantBy(n); ok && (meant == "" || n < name) {
			name, meant = n, m
		}
	}
	if meant == "" {
		return nil
	}
	shown := clip(name)
	hint := fmt.Sprintf("name the field %q", meant)
	if strings.EqualFold(strings.NewReplacer("_", "", "-", "", " ", "").Replace(name), meant) {
		hint = fmt.Sprintf("field names are case-sensitive: send %q", meant)
	}
	return invalid(fmt.Sprintf("unknown field %q; did you mean %q?", shown, meant),
		map[string]any{"field": meant, "received": shown, "allowed": Fields}).WithHint(hint)
}

// maxNearMiss is the longest name that may be a misspelt field: the
// longest field, pageNumeration, is 14 bytes, and a longer name,
// separators and all, is no misspelling of it.
const maxNearMiss = 24

// folded are Fields as fold folds them.
var folded = func() []string {
	f := make([]string, len(Fields))
	for i, k := range Fields {
		var buf [maxNearMiss]byte
		f[i] = string(fold(buf[:0], k))
	}
	return f
}()

// meantBy returns the field name is a near miss of, if any.
func meantBy(name string) (string, bool) {
	if len(name) > maxNearMiss || slices.Contains(Fields, name) {
		return "", false
	}
	var buf [maxNearMiss]byte
	f := fold(buf[:0], name)
	if meant, ok := aliases[string(f)]; ok {
		return meant, true
	}
	for i, k := range folded {
		// Within one edit for the short names, two for the long ones:
		// at two, "input" would be taken for "output".
		limit := 1
		if len(k) >= 8 {
			limit = 2
		}
		if d := len(f) - len(k); d > limit || -d > limit {
			continue
		}
		if string(f) == k || withinEdits(f, k, limit) {
			return Fields[i], true
		}
	}
	return "", false
}

// fold appends name to dst lowercased (ASCII) without the separators of
// snake and kebab case.
func fold(dst []byte, name string) []byte {
	for i := 0; i < len(name); i++ {
		c := name[i]
		switch {
		case c == '_' || c == '-' || c == ' ':
		case 'A' <= c && c <= 'Z':
			dst = append(dst, c+'a'-'A')
		default:
			dst = append(dst, c)
		}
	}
	return dst
}

// withinEdits says whether a is at most limit edits (Levenshtein, in
// bytes) from b; both are at most maxNearMiss bytes long. It stops at the
// first row past the limit, so a name far from b costs a row or two.
func withinEdits(a []byte, b string, limit int) bool {
	var rows [2][maxNearMiss + 1]int
	prev, cur := &rows[0], &rows[1]
	for j := range len(b) + 1 {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		best := i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
			best = min(best, cur[j])
		}
		if best > limit {
			return false
		}
		prev, cur = cur, prev
	}
	return prev[len(b)] <= limit
}

// ParseLang validates a BCP 47 language tag and returns its canonical
// form ("EN_us" is en-US, "iw" is he). A tag that is well-formed but names
// no registered language ("xx") is refused too: no reader could use it.
// The canonical form holds only letters, digits and hyphens, so it goes
// into HTML and a PDF string as it is.
func ParseLang(s string) (string, error) {
	tag, err := language.Parse(s)
	if err != nil {
		return "", err
	}
	return tag.String(), nil
}

func lang(raw any) (string, error) {
	s, err := str("lang", raw, langAllowed)
	if err != nil {
		return "", err
	}
	canonical, err := ParseLang(s)
	if err != nil {
		shown := clip(s)
		return "", invalid(fmt.Sprintf("the lang field %q is not a language tag", shown),
			map[string]any{"field": "lang", "received": shown, "allowed": langAllowed}).
			WithHint("use a BCP 47 tag: a language, optionally a script and a region, e.g. fr, pt-BR, zh-Hans")
	}
	return canonical, nil
}

// UTF16 reports whether body is UTF-16 text: it opens with a UTF-16 byte
// order mark, or with a NUL beside another byte, as a JSON text's first
// character, ASCII, is in UTF-16 (RFC 4627, 3). Windows PowerShell 5
// writes files so (its > and Out-File): refused as "not valid JSON" at
// position 1, the JSON its sender saw in an editor was valid.
func UTF16(body []byte) bool {
	if len(body) < 2 {
		return false
	}
	if bytes.HasPrefix(body, []byte{0xff, 0xfe}) || bytes.HasPrefix(body, []byte{0xfe, 0xff}) {
		return true
	}
	return (body[0] == 0) != (body[1] == 0)
}

// notUTF8 refuses a body that is not UTF-8, which RFC 8259 asks of JSON
// between systems. encoding/json made each such byte U+FFFD: a document
// saved as Latin-1 or Windows-1252 ("café" as caf\xe9) became a charged
// PDF reading "caf\uFFFD", whatever charset its Content-Type declared.
// Decode looks for it only when the markdown field holds U+FFFD, so a
// valid body is not scanned once more; in the other fields a replaced
// byte already makes a value or a name the contract does not know.
func notUTF8(body []byte) error {
	at := 0
	for at < len(body) {
		r, n := utf8.DecodeRune(body[at:])
		if r == utf8.RuneError && n == 1 {
			break
		}
		at += n
	}
	return invalid("the request body is not UTF-8", map[string]any{"position": at + 1, "received": "bytes that are not UTF-8", "allowed": "UTF-8 text"}).
		WithHint(fmt.Sprintf("re-encode the body as UTF-8 (the byte at position %d is not; text saved as Latin-1 or Windows-1252?), "+
			"or send the characters as JSON escapes such as \\u00e9", at+1))
}

// decodeObject decodes body, which must be one JSON object and nothing
// else.
func decodeObject(body []byte) (map[string]any, error) {
	var v any
	err := json.Unmarshal(body, &v)
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) {
		// Only a number beyond float64 gets here, and the decoder left it
		// null: decode again keeping numbers as written, so that a field
		// holding one is judged a number and one the contract does not
		// know is ignored. The body is valid JSON by now.
		dec := json.NewDecoder(bytes.NewReader(body))
		dec.UseNumber()
		v = nil
		err = dec.Decode(&v)
	}
	if err != nil {
		offset := int64(len(body)) // the body ends inside the value
		var se *json.SyntaxError
		if errors.As(err, &se) {
			offset = se.Offset
			// encoding/json stops at 10000 levels with a SyntaxError,
			// though the JSON may be valid: "not valid JSON" sent the
			// client looking for a typo that is not there.
			if strings.HasSuffix(se.Error(), "exceeded max depth") {
				return nil, invalid("the request body nests deeper than 10000 levels", map[string]any{"position": offset}).
					WithHint(`no field nests: send an object such as {"markdown": "# Hello"}`)
			}
		}
		return nil, invalid("the request body is not valid JSON", map[string]any{"position": offset}).
			WithHint(`send a JSON object such as {"markdown": "# Hello"} with Content-Type: application/json`)
	}
	fields, ok := v.(map[string]any)
	if !ok {
		return nil, invalid("the request body must be a JSON object", map[string]any{"received": jsonType(v)}).
			WithHint(`wrap the fields in an object: {"markdown": "# Hello"}`)
	}
	return fields, nil
}

func str(field string, raw any, allowed any) (string, error) {
	s, ok := raw.(string)
	if !ok {
		return "", invalid(fmt.Sprintf("the %s field must be a string, not %s", field, jsonType(raw)),
			map[string]any{"field": field, "received": jsonType(raw), "allowed": allowed}).
			WithHint(fmt.Sprintf("send %s as a JSON string", field))
	}
	return s, nil
}

func enum(field string, raw any, allowed []string) (string, error) {
	s, err := str(field, raw, allowed)
	if err != nil {
		return "", err
	}
	if slices.Contains(allowed, s) {
		return s, nil
	}
	hint := "use one of: " + strings.Join(allowed, ", ")
	for _, a := range allowed {
		if strings.EqualFold(a, s) {
			hint = fmt.Sprintf("values are case-sensitive: use %q", a)
			break
		}
	}
	shown := clip(s)
	return "", invalid(fmt.Sprintf("the %s field has an unsupported value %q", field, shown),
		map[string]any{"field": field, "received": shown, "allowed": allowed}).WithHint(hint)
}

// maxShown is the most bytes of a rejected value an error repeats: enough
// to recognise a typo, and the body and the log line stay small however
// large the value sent (a 5 MB pageSize came back twice over).
const maxShown = 64

// clip shortens s to maxShown bytes on a character boundary, marking the
// cut.
func clip(s string) string {
	if len(s) <= maxShown {
		return s
	}
	cut := maxShown
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "…"
}

func invalid(text string, details map[string]any) *apierr.Error {
	return apierr.New(http.StatusBadRequest, apierr.NameInvalidRequest, text).WithDetails(details)
}

// jsonType names the JSON type of a decoded value, or says it is missing.
func jsonType(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case map[string]any:
		return "an object"
	case []any:
		return "an array"
	case string:
		return "a string"
	case bool:
		return "a boolean"
	default:
		return "a number"
	}
}
