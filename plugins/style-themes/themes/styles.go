package themes

import (
	"regexp"
	"strings"
)

// mediaAttr finds a media attribute with a plain value in a style start
// tag (lower-cased): quoted, without markup characters.
var mediaAttr = regexp.MustCompile(`\smedia\s*=\s*"([a-z0-9 ,()\-:.]*)"`)

// extractStyles removes every <style> element from an HTML fragment and
// returns them in document order, with what remains of the fragment. It
// follows the HTML tokenizer as far as it matters for finding real style
// elements: comments, quoted attribute values and the raw-text elements
// (script, textarea, ...) cannot open one. An unclosed <style> runs to
// the end of the fragment, as in a browser, and is given its end tag.
func extractStyles(s string) (styles []string, rest string) {
	lower := asciiLower(s) // same length as s, so indexes carry over
	var out strings.Builder
	copied := 0 // s[:copied] is dealt with
	for i := 0; i < len(s); {
		j := strings.IndexByte(s[i:], '<')
		if j < 0 {
			break
		}
		i += j
		if strings.HasPrefix(s[i:], "<!--") {
			i = commentEnd(s, i)
			continue
		}
		name, end := openTag(lower, i)
		if name == "" {
			i++
			continue
		}
		switch name {
		case "style":
			closeStart, closeEnd := closeTagAt(lower, end, "style")
			// Written out anew rather than copied: the head it moves to
			// must get a style element and nothing else, whatever the
			// start tag held. Only a plain media attribute is kept.
			open := "<style>"
			if m := mediaAttr.FindStringSubmatch(lower[i:end]); m != nil {
				open = `<style media="` + m[1] + `">`
			}
			styles = append(styles, open+s[end:closeStart]+"</style>")
			if out.Len() == 0 {
				out.Grow(len(s))
			}
			out.WriteString(s[copied:i])
			copied, i = closeEnd, closeEnd
		case "script", "textarea", "title", "xmp", "iframe", "noembed", "noframes", "template":
			_, i = closeTagAt(lower, end, name)
		case "plaintext":
			i = len(s)
		default:
			i = end
		}
	}
	if copied == 0 {
		return styles, s
	}
	out.WriteString(s[copied:])
	return styles, out.String()
}

// commentEnd returns the index after the comment that starts at i,
// including the abrupt forms "<!-->" and "<!--->".
func commentEnd(s string, i int) int {
	body := i + len("<!--")
	switch {
	case strings.HasPrefix(s[body:], ">"):
		return body + 1
	case strings.HasPrefix(s[body:], "->"):
		return body + 2
	}
	if k := strings.Index(s[body:], "-->"); k >= 0 {
		return body + k + len("-->")
	}
	return len(s)
}

// openTag reads the start tag at lower[i] ("<name ...>") and returns its
// lower-case name and the index after its ">", or "" when lower[i] does
// not start a tag. Attributes are read as the HTML tokenizer reads them:
// an "=" where a name is expected begins a name, not a value, so
// `<style =" >` ends at its first ">" as it does in a browser.
func openTag(lower string, i int) (name string, end int) {
	k := i + 1
	if k >= len(lower) || lower[k] < 'a' || lower[k] > 'z' {
		return "", i
	}
	for k < len(lower) && !isSpace(lower[k]) && lower[k] != '/' && lower[k] != '>' {
		k++
	}
	name = lower[i+1 : k]
	skipSpace := func() {
		for k < len(lower) && isSpace(lower[k]) {
			k++
		}
	}
	for k < len(lower) {
		// Before an attribute name.
		for k < len(lower) && (isSpace(lower[k]) || lower[k] == '/') {
			k++
		}
		if k >= len(lower) {
			break
		}
		if lower[k] == '>' {
			return name, k + 1
		}
		// The name: its first character may be anything, "=" included.
		k++
		for k < len(lower) && !isSpace(lower[k]) && lower[k] != '/' && lower[k] != '>' && lower[k] != '=' {
			k++
		}
		skipSpace()
		if k >= len(lower) || lower[k] != '=' {
			continue
		}
		k++
		skipSpace()
		if k < len(lower) && (lower[k] == '"' || lower[k] == '\'') {
			q := strings.IndexByte(lower[k+1:], lower[k])
			if q < 0 {
				return name, len(lower)
			}
			k += q + 2
			continue
		}
		for k < len(lower) && !isSpace(lower[k]) && lower[k] != '>' {
			k++
		}
	}
	return name, len(lower)
}

// closeTagAt finds the end tag of a raw-text element named name from index
// from on and returns where it starts and the index after it; both are
// len(lower) without one.
func closeTagAt(lower string, from int, name string) (start, end int) {
	for at := from; at < len(lower); {
		k := strings.Index(lower[at:], "</"+name)
		if k < 0 {
			break
		}
		start = at + k
		k = start + 2 + len(name)
		if k == len(lower) || isSpace(lower[k]) || lower[k] == '/' || lower[k] == '>' {
			if gt := strings.IndexByte(lower[k:], '>'); gt >= 0 {
				return start, k + gt + 1
			}
			return start, len(lower)
		}
		at = k
	}
	return len(lower), len(lower)
}

func isSpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f'
}

// asciiLower lower-cases ASCII letters only, keeping every byte offset.
func asciiLower(s string) string {
	b := []byte(s)
	for i, c := range b {
		if 'A' <= c && c <= 'Z' {
			b[i] = c + 'a' - 'A'
		}
	}
	return string(b)
}
