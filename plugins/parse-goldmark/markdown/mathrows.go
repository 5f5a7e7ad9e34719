package markdown

import (
	"bytes"
	"errors"
	"html"
	"io"
	"strings"

	xhtml "golang.org/x/net/html"
)

// A display formula that is one environment of rows (align, gather,
// eqnarray, multline, starred or not) may number each row with a \tag,
// which MathJax prints at the right margin on the row's baseline; and
// multline sets its first row flush left, its last flush right and those
// between centred, across the whole line, numbering its last row. The
// converter knows neither \tag nor multline. envRows takes the tags out
// of the TeX row by row and writes multline as gather, whose one centred
// column it is; finishRows then puts the tags and multline's alignment
// into the MathML. For Chromium, which lays out no <mlabeledtr>, a tagged
// table spans the line between two columns that share the room left, the
// last holding the row's tag, so that the rows stay centred and the tags
// end at the margin. The tree has MathML's own form, which render-fpdf
// lays out: a tagged row is an <mlabeledtr> whose first cell is the tag,
// and multline's table is 100% wide, each row's cell with its
// columnalign.

// rowEnvs are the environments whose rows may each carry a tag.
var rowEnvs = map[string]bool{
	"align": true, "align*": true, "gather": true, "gather*": true,
	"eqnarray": true, "eqnarray*": true, "multline": true, "multline*": true,
}

// envRows returns, when tex is one environment of rowEnvs and nothing
// else but spaces and comments, its name, tex without its tags (multline
// written as gather) and each row's tag as printed ("" for none; nil when
// no row has one). For any other formula env is "" and tex is returned
// as it is. ok is false when the formula must print as its source: a row
// with two tags, a tag displayTag would not read, one inside braces or
// an environment within, a multline with two tags, or a tag on an empty
// last row, which the converter drops.
func envRows(tex []byte) (env string, rest []byte, tags []string, ok bool) {
	return readRows(tex, nil)
}

// readRows is envRows that, when ok and label is not nil, also calls
// label with each \label's key of a tagged row and that row's tag as
// written (multline's one tag for any of its labels), for \eqref.
func readRows(tex []byte, label func(key, raw string)) (env string, rest []byte, tags []string, ok bool) {
	begin := skipBlank(tex, 0)
	env, body, found := envName(tex, begin, "begin")
	if !found || !rowEnvs[env] {
		return "", tex, nil, true
	}
	multline := strings.HasPrefix(env, "multline")
	var b bytes.Buffer
	b.Grow(len(tex))
	b.Write(tex[:begin])
	if multline {
		b.WriteString(`\begin{gather` + strings.TrimPrefix(env, "multline") + `}`)
	} else {
		b.Write(tex[begin:body])
	}
	tags = []string{""}
	raws := []string{""} // each row's tag as written
	type rowLabel struct {
		row int
		key string
	}
	var labels []rowLabel
	tagged := 0
	content := false // the row holds something the converter draws
	depth, nested := 0, 0
	for i := body; i < len(tex); {
		switch c := tex[i]; c {
		case '%':
			end := lineEnd(tex, i)
			b.Write(tex[i:end])
			i = end
			continue
		case '{', '}':
			if c == '{' {
				depth++
			} else {
				depth--
			}
			content = true
		case ' ', '\t', '\n', '\r':
		case '\\':
			name, end := controlWord(tex, i)
			switch name {
			case "":
				end = min(i+2, len(tex))
				if end == i+2 && tex[i+1] == '\\' && depth == 0 && nested == 0 {
					tags = append(tags, "")
					raws = append(raws, "")
					content = false
				} else {
					content = true
				}
			case "tag":
				last := len(tags) - 1
				raw, star, after, read := readTag(tex, i)
				if !read || depth != 0 || nested != 0 || tags[last] != "" {
					return "", nil, nil, false
				}
				tags[last], raws[last] = printedTag(raw, star), raw
				tagged++
				b.WriteByte(' ')
				i = after
				continue
			case "label":
				// Printed as nothing (see rewriteTeX): no row of its own.
				if key, after, read := readLabel(tex, end); read {
					end = after
					if label != nil {
						labels = append(labels, rowLabel{len(tags) - 1, key})
					}
				}
			case "notag", "nonumber":
			case "begin":
				nested++
				content = true
			case "end":
				if nested > 0 {
					nested--
					break
				}
				name, after, found := envName(tex, i, "end")
				if !found || name != env || depth != 0 {
					return "", nil, nil, false
				}
				if skipBlank(tex, after) != len(tex) {
					// More after it: not one environment.
					return "", tex, nil, true
				}
				if last := len(tags) - 1; !content {
					if tags[last] != "" {
						return "", nil, nil, false
					}
					tags = tags[:last]
				}
				switch {
				case tagged == 0:
					tags = nil
				case multline && tagged > 1:
					return "", nil, nil, false
				case multline:
					// Its one tag numbers its last row, wherever written,
					// and so do its labels.
					var tag, raw string
					for j, t := range tags {
						tag += t
						raw += raws[j]
						tags[j] = ""
					}
					tags[len(tags)-1] = tag
					for j := range labels {
						raws[labels[j].row] = raw
					}
				}
				if multline {
					b.WriteString(`\end{gather` + strings.TrimPrefix(env, "multline") + `}`)
				} else {
					b.Write(tex[i:after])
				}
				b.Write(tex[after:])
				ok := len(tags) > 0 || tagged == 0
				if ok && label != nil {
					for _, l := range labels {
						if raws[l.row] != "" {
							label(l.key, raws[l.row])
						}
					}
				}
				return env, b.Bytes(), tags, ok
			default:
				content = true
			}
			b.Write(tex[i:end])
			i = end
			continue
		default:
			content = true
		}
		b.WriteByte(tex[i])
		i++
	}
	// Not ended: the converter's to refuse.
	return "", tex, nil, true
}

// envName reads \begin{name} or \end{name} (cmd) at tex[i] and returns
// the name and the index after it.
func envName(tex []byte, i int, cmd string) (name string, end int, ok bool) {
	if i >= len(tex) || tex[i] != '\\' {
		return "", 0, false
	}
	word, end := controlWord(tex, i)
	if word != cmd {
		return "", 0, false
	}
	o := skipSpace(tex, end)
	if o >= len(tex) || tex[o] != '{' {
		return "", 0, false
	}
	c := bytes.IndexByte(tex[o:], '}')
	if c < 0 {
		return "", 0, false
	}
	return strings.TrimSpace(string(tex[o+1 : o+c])), o + c + 1, true
}

// skipBlank skips spaces and comments from i.
func skipBlank(tex []byte, i int) int {
	for {
		i = skipSpace(tex, i)
		if i >= len(tex) || tex[i] != '%' {
			return i
		}
		nl := bytes.IndexByte(tex[i:], '\n')
		if nl < 0 {
			return len(tex)
		}
		i += nl + 1
	}
}

// Chromium's cells of a tagged table: the first column and the tag's
// share the room beside the rows, so that the rows stay centred. A
// multline's one column takes the whole line, the tag's (empty when it
// has none, its padding then the last row's em from the margin) as
// little as its tag: a column of 100% alone, or beside an empty one,
// left the table as narrow as its rows, as the table's own width does
// inside the formula's <mrow>.
const (
	rowSpacerCell     = `<mtd style="width:50%;padding:0"></mtd>`
	rowTagCell        = `<mtd style="width:50%;padding:0;text-align:-webkit-right">`
	multlineTagCell   = `<mtd style="width:0;padding:0 0 0 1em;text-align:-webkit-right">`
	multlineEmptyCell = `<mtd style="width:0;padding:0 0 0 1em">`
)

// finishRows writes the tags (one per row of the formula's table, or nil)
// and a multline's alignment into s, cleanMathML's MathML for the HTML,
// or for the tree when tree is set (see the comment at the top). It
// reports false when the table's rows are not the rows tags are for.
func finishRows(s string, tree, multline bool, tags []string) (string, bool) {
	rows := countRows(s)
	if rows <= 0 || tags != nil && rows != len(tags) {
		return "", false
	}
	var b strings.Builder
	b.Grow(len(s) + len(s)/4)
	z := xhtml.NewTokenizer(strings.NewReader(s))
	depth, table, row := 0, 0, -1
	done := false
	for {
		tt := z.Next()
		switch tt {
		case xhtml.ErrorToken:
			return b.String(), errors.Is(z.Err(), io.EOF)
		case xhtml.StartTagToken:
			depth++
			tok := z.Token()
			in := table > 0 && !done
			switch {
			case table == 0 && tok.Data == "mtable":
				table = depth
				switch {
				case !tree:
					style := "width:100%"
					if st := strings.TrimSuffix(attr(tok, "style"), ";"); st != "" {
						style = st + ";" + style
					}
					tok.Attr = withAttr(tok.Attr, "style", style)
				case multline:
					tok.Attr = withAttr(tok.Attr, "width", "100%")
				}
			case in && depth == table+1:
				row++
				if tree && tags != nil && tags[row] != "" {
					tok.Data = "mlabeledtr"
					b.WriteString(tok.String())
					b.WriteString(`<mtd><mtext>` + html.EscapeString(tags[row]) + `</mtext></mtd>`)
					continue
				}
				b.WriteString(tok.String())
				if !tree && tags != nil && !multline {
					b.WriteString(rowSpacerCell)
				}
				continue
			case in && multline && depth == table+2:
				align, left, right := "center", "0", "0"
				switch {
				case row == 0:
					align, left = "left", "1em"
				case row == rows-1:
					align = "right"
					if tags != nil {
						right = "1em"
					}
				}
				if tree {
					tok.Attr = withAttr(tok.Attr, "columnalign", align)
				} else {
					tok.Attr = withAttr(tok.Attr, "style", "width:100%;text-align:-webkit-"+align+";padding-left:"+left+";padding-right:"+right)
				}
			}
			b.WriteString(tok.String())
		case xhtml.EndTagToken:
			if table > 0 && !done {
				switch depth {
				case table + 1:
					if !tree && (tags != nil || multline) {
						cell := rowTagCell
						switch {
						case multline && tags == nil:
							cell = multlineEmptyCell
						case multline:
							cell = multlineTagCell
						}
						b.WriteString(cell)
						if tags != nil && tags[row] != "" {
							b.WriteString(`<mtext>` + html.EscapeString(tags[row]) + `</mtext>`)
						}
						b.WriteString(`</mtd>`)
					}
					if tree && tags != nil && tags[row] != "" {
						b.WriteString(`</mlabeledtr>`)
						depth--
						continue
					}
				case table:
					done = true
				}
			}
			depth--
			b.Write(z.Raw())
		default:
			b.Write(z.Raw())
		}
	}
}

// countRows returns how many rows the first table of s has, or -1 when s
// has none.
func countRows(s string) int {
	z := xhtml.NewTokenizer(strings.NewReader(s))
	depth, table, rows := 0, 0, -1
	for {
		switch z.Next() {
		case xhtml.ErrorToken:
			return rows
		case xhtml.StartTagToken:
			depth++
			name, _ := z.TagName()
			switch {
			case table == 0 && string(name) == "mtable":
				table, rows = depth, 0
			case table > 0 && depth == table+1:
				rows++
			}
		case xhtml.EndTagToken:
			if depth == table {
				return rows
			}
			depth--
		}
	}
}

// withAttr sets a token's attribute, replacing the value it had.
func withAttr(as []xhtml.Attribute, key, val string) []xhtml.Attribute {
	return append(dropAttr(as, key), xhtml.Attribute{Key: key, Val: val})
}
