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
}

// Decode parses and validates a request body.
func Decode(body []byte) (*Conversion, error) {
	trimmed := bytes.TrimSpace(body)
	if len(trimmed) == 0 {
		return nil, invalid("the request body is empty", nil).
			WithHint(`send a JSON object such as {"markdown": "# Hello"}`)
	}
	if !json.Valid(trimmed) {
		return nil, invalid("the request body is not valid JSON", map[string]any{"position": syntaxOffset(trimmed)}).
			WithHint(`send a JSON object such as {"markdown": "# Hello"} with Content-Type: application/json`)
	}
	if trimmed[0] != '{' {
		return nil, invalid("the request body must be a JSON object", map[string]any{"received": jsonType(trimmed)}).
			WithHint(`wrap the fields in an object: {"markdown": "# Hello"}`)
	}
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(trimmed, &fields); err != nil {
		return nil, invalid("the request body is not valid JSON", nil)
	}

	c := &Conversion{Output: DefaultOutput, Theme: DefaultTheme, Numbering: DefaultNumbering}
	page := DefaultPageSize

	raw, ok := fields["markdown"]
	if !ok || isNull(raw) {
		return nil, invalid("the markdown field is required", map[string]any{"field": "markdown", "received": jsonType(raw), "allowed": "a string of at least 1 character"}).
			WithHint(`add "markdown": "<your Markdown text>" to the body`)
	}
	md, err := str("markdown", raw, "a string of at least 1 character")
	if err != nil {
		return nil, err
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
		if !ok || isNull(raw) {
			continue
		}
		v, err := enum(f.name, raw, f.allowed)
		if err != nil {
			return nil, err
		}
		*f.dst = v
	}
	c.Page, _ = papers.Lookup(page)
	return c, nil
}

func str(field string, raw json.RawMessage, allowed any) (string, error) {
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		return "", invalid(fmt.Sprintf("the %s field must be a string, not %s", field, jsonType(raw)),
			map[string]any{"field": field, "received": jsonType(raw), "allowed": allowed}).
			WithHint(fmt.Sprintf("send %s as a JSON string", field))
	}
	return s, nil
}

func enum(field string, raw json.RawMessage, allowed []string) (string, error) {
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

func isNull(raw json.RawMessage) bool { return string(bytes.TrimSpace(raw)) == "null" }

func jsonType(raw []byte) string {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 {
		return "nothing"
	}
	switch raw[0] {
	case '{':
		return "an object"
	case '[':
		return "an array"
	case '"':
		return "a string"
	case 't', 'f':
		return "a boolean"
	case 'n':
		return "null"
	default:
		return "a number"
	}
}

func syntaxOffset(b []byte) int64 {
	var v any
	var se *json.SyntaxError
	if err := json.Unmarshal(b, &v); errors.As(err, &se) {
		return se.Offset
	}
	return 0
}
