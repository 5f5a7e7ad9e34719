package markdown

import (
	"bytes"
	"context"
	"strings"

	"github.com/yuin/goldmark/ast"
)

// A tagged display formula (or a tagged row of one, see mathrows.go) may
// carry a \label{key}; \eqref{key} anywhere in the page's math then
// prints its tag as (1) and \ref{key} as 1, forward references too, and
// an unknown key as (???) and ???, as GitHub's MathJax prints them. The
// converter knows none of the three. So before any formula converts, the
// labels of the document's display formulas are collected from
// goldmark's tree, which holds exactly what is math (no code span or
// block); then each \eqref and \ref is written as the \text MathJax
// itself prints a tag with, and \label as nothing (rewriteTeX). A
// streamed parse converts its first part before it has read the last, so
// it parses the whole document once more to collect them, only when the
// document holds both \label and a reference.

// Bounds on the labels kept: a key past maxLabelBytes, or any past
// maxLabels labels, is unknown. A README numbers dozens of equations.
const (
	maxLabels     = 4096
	maxLabelBytes = 256
)

// usesLabels reports whether src may hold a \label that a reference
// needs; without both, no label is collected.
func usesLabels(src []byte) bool {
	return bytes.Contains(src, []byte(`\label`)) &&
		(bytes.Contains(src, []byte(`\eqref`)) || bytes.Contains(src, []byte(`\ref`)))
}

// mathLabels returns the labels of doc's display formulas, each key with
// its tag as written ("1" for \tag{1}). A key defined twice keeps its
// first tag, as MathJax does, which also marks the second formula as an
// error: that is logged, once.
func mathLabels(ctx context.Context, doc ast.Node, src []byte) map[string]string {
	labels := map[string]string{}
	twice := 0
	add := func(key, raw string) {
		switch _, seen := labels[key]; {
		case len(key) > maxLabelBytes:
		case seen:
			twice++
		case len(labels) < maxLabels:
			labels[key] = raw
		}
	}
	_ = ast.Walk(doc, func(n ast.Node, entering bool) (ast.WalkStatus, error) {
		if !entering {
			return ast.WalkContinue, nil
		}
		switch n := n.(type) {
		case *mathBlock:
			formulaLabels(mathTeX(n, src), add)
		case *mathInline:
			if n.display {
				formulaLabels(n.tex, add)
			}
		}
		return ast.WalkContinue, nil
	})
	if l := mathLog.Load(); l != nil && twice > 0 {
		l.InfoContext(ctx, "math labels defined more than once, the first kept", "labels", twice)
	}
	return labels
}

// formulaLabels calls add with each label of the display formula tex
// and the tag it names: the formula's one tag (see displayTag) or its
// row's (see envRows). A formula whose tags are not read, or one too
// long to convert, names nothing: it prints as its source.
func formulaLabels(tex []byte, add func(key, raw string)) {
	if len(tex) > maxFormulaBytes || !bytes.Contains(tex, []byte(`\label`)) {
		return
	}
	env, _, _, ok := readRows(tex, add)
	if env != "" || !ok {
		return
	}
	_, raw, _ := displayTagRaw(tex)
	if raw == "" {
		return
	}
	for i := 0; i < len(tex); i++ {
		switch tex[i] {
		case '%':
			i = lineEnd(tex, i)
		case '\\':
			name, end := controlWord(tex, i)
			if name == "label" {
				if key, after, ok := readLabel(tex, end); ok {
					add(key, raw)
					end = after
				}
			}
			i = max(end-1, i+1)
		}
	}
}

// readLabel reads the braced argument of \label, \eqref or \ref from
// tex[i:] (spaces first): its text as written, which is the key as
// MathJax matches it, and the index after it; false when there is no
// closed group. Braces nest, and a backslash escapes the byte after it.
func readLabel(tex []byte, i int) (key string, end int, ok bool) {
	o := skipSpace(tex, i)
	if o >= len(tex) || tex[o] != '{' {
		return "", 0, false
	}
	depth := 0
	for j := o; j < len(tex); j++ {
		switch tex[j] {
		case '\\':
			j++
		case '{':
			depth++
		case '}':
			if depth--; depth == 0 {
				return string(tex[o+1 : j]), j + 1, true
			}
		}
	}
	return "", 0, false
}

// resolveRefs writes each \eqref{key} and \ref{key} of tex as the text
// MathJax prints for it, from labels (see mathLabels); changed is false
// when tex holds none. A tag's text holds no TeX specials (see readTag);
// the converter copies \text's through to the MathML as it is, so its
// HTML specials are escaped, and cleanMathML reads them back.
func resolveRefs(tex []byte, labels map[string]string) (out []byte, changed bool) {
	if !bytes.Contains(tex, []byte(`ref`)) {
		return tex, false
	}
	var b bytes.Buffer
	for i := 0; i < len(tex); {
		switch tex[i] {
		case '%':
			end := lineEnd(tex, i)
			b.Write(tex[i:end])
			i = end
			continue
		case '\\':
			name, end := controlWord(tex, i)
			if name == "" {
				end = min(i+2, len(tex))
			}
			if name == "eqref" || name == "ref" {
				if key, after, ok := readLabel(tex, end); ok {
					raw, known := labels[key]
					if !known {
						raw = "???"
					}
					if name == "eqref" {
						raw = "(" + raw + ")"
					}
					b.WriteString(`\text{` + texTextEscaper.Replace(raw) + `}`)
					changed = true
					i = after
					continue
				}
			}
			b.Write(tex[i:end])
			i = end
			continue
		}
		b.WriteByte(tex[i])
		i++
	}
	if !changed {
		return tex, false
	}
	return b.Bytes(), true
}

// texTextEscaper escapes what the converter would copy into its MathML
// as markup.
var texTextEscaper = strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;")
