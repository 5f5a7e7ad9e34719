package markdown

import (
	"bytes"
	"errors"
	"html"
	"io"
	"strings"

	xhtml "golang.org/x/net/html"
)

// The converter (treeblood) writes an <merror> holding the command's name
// for a command it does not know, and reads some common ones wrongly
// (\pmb as \mu). READMEs use these commands as GitHub's MathJax reads
// them, so rewriteTeX writes each as TeX the converter reads right before
// the formula is converted, and fixMathML finishes in the MathML what TeX
// cannot say (an operator's name as one <mi>, a box drawn in Chromium).
// A command neither knows is left to the converter, whose <merror> makes
// cleanMathML print the formula as its source.

// texRename are the commands written as another command, or as nothing.
var texRename = map[string]string{
	"bm":         `\boldsymbol`,
	"pmb":        `\boldsymbol`,
	"stackrel":   `\overset`,
	"dotsb":      `\cdots`,
	"dotsm":      `\cdots`,
	"dotsi":      `\cdots`,
	"dotsc":      `\ldots`,
	"dotso":      `\ldots`,
	"varnothing": `\emptyset`,
	"textrm":     `\text`,
	"textup":     `\text`,
	"textnormal": `\text`,
	"mbox":       `\text`,
	"hbox":       `\text`,
	"enspace":    `\ `,
	// The document numbers no equation, so there is nothing to suppress.
	"notag":    "",
	"nonumber": "",
	// The converter has no atom classes; what they hold still prints,
	// with the spacing of its own symbols.
	"mathbin":   "",
	"mathrel":   "",
	"mathord":   "",
	"mathpunct": "",
	"mathopen":  "",
	"mathclose": "",
	"mathinner": "",
}

// texWrap are the commands of one argument written as prefix, the
// argument, suffix.
var texWrap = map[string][2]string{
	"operatorname":  {`\class{mdpress-op}{\mathrm{`, `}}`},
	"operatorname*": {`\class{mdpress-opl}{\mathrm{`, `}}\limits`},
	"boxed":         {`\class{mdpress-boxed}{`, `}`},
	"fbox":          {`\class{mdpress-boxed}{\text{`, `}}`},
	"textbf":        {`\mathbf{\text{`, `}}`},
	"textit":        {`\mathit{\text{`, `}}`},
	"emph":          {`\mathit{\text{`, `}}`},
	"textsf":        {`\mathsf{\text{`, `}}`},
	"texttt":        {`\mathtt{\text{`, `}}`},
}

// texArrows are the extensible arrows, drawn as the long arrow with the
// argument over it (and the optional one under it).
var texArrows = map[string]string{
	"xrightarrow":     `\longrightarrow`,
	"xleftarrow":      `\longleftarrow`,
	"xRightarrow":     `\Longrightarrow`,
	"xLeftarrow":      `\Longleftarrow`,
	"xleftrightarrow": `\longleftrightarrow`,
	"xLeftrightarrow": `\Longleftrightarrow`,
	"xmapsto":         `\longmapsto`,
	"xhookrightarrow": `\hookrightarrow`,
	"xhookleftarrow":  `\hookleftarrow`,
	"xlongrightarrow": `\longrightarrow`,
	"xlongleftarrow":  `\longleftarrow`,
}

// texEnvs are the environments the converter lays out; split is written
// as aligned, which is the same table. Another (multline)
// would come out as its cells run together with the \\ and & printed,
// so the formula prints as its source. gather, gather* and gathered,
// which the converter reads so too, are rewritten as texGather says, and
// eqnarray as texEqnarray says.
var texEnvs = map[string]string{
	"split": "aligned", "aligned": "", "align": "", "align*": "", "equation": "", "equation*": "",
	"cases": "", "array": "", "subarray": "",
	"matrix": "", "pmatrix": "", "bmatrix": "", "Bmatrix": "", "vmatrix": "", "Vmatrix": "",
	"matrix*": "", "pmatrix*": "", "bmatrix*": "", "Bmatrix*": "", "vmatrix*": "", "Vmatrix*": "",
	"gather": "", "gather*": "", "gathered": "",
	"eqnarray": "", "eqnarray*": "",
}

// texEqnarray are LaTeX's eqnarray environments: rows of three cells,
// flush right, centred (the relation) and flush left, in display style,
// as MathJax draws them. Each is written as such an array, which
// fixMathML sets in display style as it does gather's.
var texEqnarray = map[string]bool{"eqnarray": true, "eqnarray*": true}

// rowsEnv reports whether the rewrite writes environment name's rows
// itself (gather, eqnarray), so that it must end in turn.
func rowsEnv(name string) bool { return texGather[name] || texEqnarray[name] }

// texGather are the environments of centred rows in display style. Each
// is written as a one-column centred array, which fixMathML sets in
// display style (an array's cells are in text style, where a fraction
// is small): the converter's \displaystyle before a row took the
// \begin{cases} after it apart.
var texGather = map[string]bool{"gather": true, "gather*": true, "gathered": true}

// texRefused are commands the converter reads as something else without
// an <merror>: \hspace{1em} prints "1em".
var texRefused = map[string]bool{"hspace": true, "hspace*": true, "vspace": true, "tag*": true}

// rewriteTeX returns tex written for the converter, whether it changed,
// and false when the formula must print as its source. It reads tex once
// (the groups are matched in one pass first), and adds at most a few dozen
// bytes per command it rewrites; the caller counts the result against the
// converter's bounds.
func rewriteTeX(tex []byte) (out []byte, changed, ok bool) {
	if !bytes.ContainsRune(tex, '\\') {
		return tex, false, true
	}
	match := matchGroups(tex)
	// rep[i] replaces the byte at i (a group's brace, an optional
	// argument's bracket) with what a rewrite put there.
	var rep map[int]string
	setRep := func(i int, s string) {
		if rep == nil {
			rep = map[int]string{}
		}
		rep[i] = s
	}
	var b bytes.Buffer
	b.Grow(len(tex) + len(tex)/4)
	// envs are the environments open at i, each with the depth of braces
	// it began at: a gather's own \\ and & are those at its depth with
	// no other environment open inside it.
	type env struct {
		name  string
		depth int
	}
	var envs []env
	depth := 0
	inGather := func() bool {
		return len(envs) > 0 && texGather[envs[len(envs)-1].name] && envs[len(envs)-1].depth == depth
	}
	for i := 0; i < len(tex); {
		switch tex[i] {
		case '{':
			depth++
		case '}':
			depth--
		}
		if s, ok := rep[i]; ok {
			b.WriteString(s)
			i++
			continue
		}
		c := tex[i]
		if c == '&' && inGather() {
			return nil, false, false // an error in TeX: gather has one column
		}
		if c != '\\' {
			b.WriteByte(c)
			i++
			continue
		}
		name, end := controlWord(tex, i)
		if name == "" && i+1 < len(tex) && tex[i+1] == '\\' && inGather() {
			// A row's end. The vertical space of \\[4pt] is dropped (the
			// array would print it), and a \\ that ends the last row,
			// which would add an empty one.
			end = skipSpace(tex, i+2)
			if end < len(tex) && tex[end] == '[' && match[end] >= 0 {
				end = skipSpace(tex, match[end]+1)
			}
			if n, _ := controlWord(tex, end); n != "end" {
				b.WriteString(`\\ `)
			}
			changed = true
			i = end
			continue
		}
		if name == "" {
			// A control symbol (\{, \\, \,) is copied whole, so that its
			// second byte is not read as a brace or a command.
			end = min(i+2, len(tex))
			b.Write(tex[i:end])
			i = end
			continue
		}
		if name == "operatorname" || strings.HasPrefix(name, "hspace") || name == "tag" {
			if end < len(tex) && tex[end] == '*' {
				name += "*"
				end++
			}
		}
		if texRefused[name] {
			return nil, false, false
		}
		if s, ok := texRename[name]; ok {
			b.WriteString(s)
			changed = true
			i = end
			continue
		}
		if name == "begin" || name == "end" {
			o := skipSpace(tex, end)
			if o >= len(tex) || tex[o] != '{' || match[o] < 0 {
				return nil, false, false
			}
			envName := string(bytes.TrimSpace(tex[o+1 : match[o]]))
			to, known := texEnvs[envName]
			if !known {
				return nil, false, false
			}
			if name == "begin" {
				envs = append(envs, env{envName, depth})
			} else if len(envs) > 0 && envs[len(envs)-1].name == envName {
				envs = envs[:len(envs)-1]
			} else if rowsEnv(envName) || len(envs) > 0 && rowsEnv(envs[len(envs)-1].name) {
				// Ended out of turn, which TeX refuses: the rows would not
				// be the ones written.
				return nil, false, false
			}
			if texGather[envName] || texEqnarray[envName] {
				columns := "c"
				if texEqnarray[envName] {
					columns = "rcl"
				}
				if name == "begin" {
					b.WriteString(`\class{mdpress-gather}{\begin{array}{` + columns + `}`)
				} else {
					b.WriteString(`\end{array}}`)
				}
				changed = true
				i = match[o] + 1
				continue
			}
			if to != "" {
				b.WriteString(`\` + name + `{` + to + `}`)
				changed = true
				i = match[o] + 1
				continue
			}
			b.Write(tex[i:end])
			i = end
			continue
		}
		if name == "text" || name == "mathop" {
			o := skipSpace(tex, end)
			grp := o < len(tex) && tex[o] == '{' && match[o] >= 0
			switch {
			case grp && name == "text":
				// Text mode: what \text holds is its letters, not commands.
				b.Write(tex[i : match[o]+1])
				i = match[o] + 1
				continue
			case grp && bytes.IndexByte(tex[o:match[o]], '\\') >= 0:
				// The converter prints \mathop's argument as written
				// (\mathop{\mathrm{argmax}} as "mathrm{argmax}"); one
				// that is not plain letters is laid out, then read as a
				// name like \operatorname*'s, its limits where an explicit
				// \limits or \nolimits after it puts them.
				next, _ := controlWord(tex, skipSpace(tex, match[o]+1))
				if next == "limits" || next == "nolimits" {
					b.WriteString(`\class{mdpress-op}`)
				} else {
					b.WriteString(`\class{mdpress-opl}`)
					setRep(match[o], `}\limits`)
				}
				changed = true
				i = o
				continue
			}
		}
		if name == "label" {
			// A label names an equation for \eqref, which prints nothing.
			if o := skipSpace(tex, end); o < len(tex) && tex[o] == '{' && match[o] >= 0 {
				changed = true
				i = match[o] + 1
				continue
			}
		}
		if w, ok := texWrap[name]; ok {
			if o, c, ok := argument(tex, end, match); ok {
				changed = true
				b.WriteString(w[0])
				if c < 0 { // one token, not a group
					b.Write(tex[o:-c])
					b.WriteString(w[1])
					i = -c
					continue
				}
				setRep(o, "")
				setRep(match[o], w[1])
				i = o
				continue
			}
		}
		if arrow, ok := texArrows[name]; ok {
			under := -1 // the optional argument's '['
			o := skipSpace(tex, end)
			if o < len(tex) && tex[o] == '[' {
				under = o
				if o = match[o]; o < 0 {
					b.Write(tex[i:end])
					i = end
					continue
				}
				o++
			}
			if o, _, ok := argument(tex, o, match); ok && tex[o] == '{' {
				changed = true
				if under >= 0 {
					setRep(under, `\underset{`)
					setRep(match[under], `}{\overset`)
					setRep(match[o], `}{`+arrow+`}}`)
				} else {
					b.WriteString(`\overset`)
					setRep(match[o], `}{`+arrow+`}`)
				}
				i = end
				continue
			}
		}
		b.Write(tex[i:end])
		i = end
	}
	if !changed {
		return tex, false, true
	}
	return b.Bytes(), true, true
}

// matchGroups returns, for each '{' of tex, the index of its '}', and for
// each '[', the index of the first ']' after it outside groups (what ends
// an optional argument in TeX), or -1 when there is none; other entries
// are unused. Control symbols (\{, \]) are neither. One pass: each '['
// waits on its group's list until a ']' or the group's end.
func matchGroups(tex []byte) []int {
	match := make([]int, len(tex))
	var open []int
	brackets := [][]int{nil} // the '[' waiting, per group depth
	for i := 0; i < len(tex); i++ {
		switch tex[i] {
		case '\\':
			i++
		case '{':
			match[i] = -1
			open = append(open, i)
			brackets = append(brackets, nil)
		case '}':
			if n := len(open); n > 0 {
				match[open[n-1]] = i
				open = open[:n-1]
				for _, j := range brackets[len(brackets)-1] {
					match[j] = -1
				}
				brackets = brackets[:len(brackets)-1]
			}
		case '[':
			match[i] = -1
			brackets[len(brackets)-1] = append(brackets[len(brackets)-1], i)
		case ']':
			d := len(brackets) - 1
			for _, j := range brackets[d] {
				match[j] = i
			}
			brackets[d] = brackets[d][:0]
		}
	}
	for _, l := range brackets {
		for _, j := range l {
			match[j] = -1
		}
	}
	return match
}

// controlWord returns the letters of the control word at tex[i] ('\')
// and the index after them, or "" for a control symbol.
func controlWord(tex []byte, i int) (string, int) {
	j := i + 1
	for j < len(tex) && (tex[j] >= 'a' && tex[j] <= 'z' || tex[j] >= 'A' && tex[j] <= 'Z') {
		j++
	}
	return string(tex[i+1 : j]), j
}

func skipSpace(tex []byte, i int) int {
	for i < len(tex) && (tex[i] == ' ' || tex[i] == '\t' || tex[i] == '\n' || tex[i] == '\r') {
		i++
	}
	return i
}

// argument finds a command's argument from i: a group, as its braces'
// indexes (o, c), or one token, as (o, -end). It reports false when there
// is none (the formula ends, or the group is not closed).
func argument(tex []byte, i int, match []int) (o, c int, ok bool) {
	o = skipSpace(tex, i)
	switch {
	case o >= len(tex) || tex[o] == '}':
		return 0, 0, false
	case tex[o] == '{':
		if match[o] < 0 {
			return 0, 0, false
		}
		return o, match[o], true
	case tex[o] == '\\':
		if name, end := controlWord(tex, o); name != "" {
			return o, -end, true
		}
		return o, -min(o+2, len(tex)), true
	}
	return o, -(o + 1), true
}

// boxStyle draws \boxed's frame and cancelStyle \cancel's strokes in
// Chromium, which lays out <menclose> as a plain row; render-fpdf draws
// neither and prints such a formula as its source.
const boxStyle = "border:0.06em solid;padding:0.12em 0.2em"

var cancelStyle = map[string]string{
	"updiagonalstrike":                    "background:linear-gradient(to top right,transparent calc(50% - 0.04em),currentColor calc(50% - 0.04em),currentColor calc(50% + 0.04em),transparent calc(50% + 0.04em))",
	"downdiagonalstrike":                  "background:linear-gradient(to bottom right,transparent calc(50% - 0.04em),currentColor calc(50% - 0.04em),currentColor calc(50% + 0.04em),transparent calc(50% + 0.04em))",
	"updiagonalstrike downdiagonalstrike": "background:linear-gradient(to top right,transparent calc(50% - 0.04em),currentColor calc(50% - 0.04em),currentColor calc(50% + 0.04em),transparent calc(50% + 0.04em)),linear-gradient(to bottom right,transparent calc(50% - 0.04em),currentColor calc(50% - 0.04em),currentColor calc(50% + 0.04em),transparent calc(50% + 0.04em))",
}

// fixMathML finishes in the converter's MathML s what rewriteTeX began:
// an operator's name (mdpress-op, from \operatorname) becomes one <mi>,
// as the converter writes \sin and \max; a box (mdpress-boxed) becomes
// <menclose notation="box">; gather's array (mdpress-gather) is set in
// display style; each <menclose> gets the style that draws it
// in Chromium; and the TeX annotation holds tex, what the author wrote.
// It reports false when s is not what the converter writes. Its output
// goes through cleanMathML like any of the converter's.
func fixMathML(s string, tex []byte) (string, bool) {
	var b strings.Builder
	b.Grow(len(s) + len(s)/8)
	z := xhtml.NewTokenizer(strings.NewReader(s))
	// closers[d] is written after the end tag of the element at depth d
	// that a box wraps.
	var closers []string
	depth := 0
	inAnnotation := false
	for {
		tt := z.Next()
		switch tt {
		case xhtml.ErrorToken:
			return b.String(), errors.Is(z.Err(), io.EOF)
		case xhtml.TextToken:
			if inAnnotation {
				continue
			}
			b.Write(z.Raw())
		case xhtml.StartTagToken:
			tok := z.Token()
			depth++
			class := attr(tok, "class")
			switch {
			case tok.Data == "annotation":
				inAnnotation = true
				b.WriteString(tok.String())
				b.WriteString(html.EscapeString(string(tex)))
				continue
			case class == "mdpress-op" || class == "mdpress-opl":
				if name, ok := opName(z, tok.Data); ok {
					depth--
					b.WriteString(`<mi lspace="0.11111em" mathvariant="normal"`)
					// mdpress-opl is \operatorname*: its limits go under it
					// in display, beside it in text, as \max's do; the
					// converter's \limits said always under.
					switch ml := attr(tok, "movablelimits"); {
					case class == "mdpress-opl":
						b.WriteString(` movablelimits="true"`)
					case ml == "true" || ml == "false":
						b.WriteString(` movablelimits="` + ml + `"`)
					}
					b.WriteString(`>` + html.EscapeString(name) + `</mi>`)
					continue
				}
				return "", false
			case class == "mdpress-boxed":
				b.WriteString(`<menclose notation="box" style="` + boxStyle + `">`)
				for len(closers) <= depth {
					closers = append(closers, "")
				}
				closers[depth] += "</menclose>"
				tok.Attr = dropAttr(tok.Attr, "class")
			case class == "mdpress-gather":
				if tok.Data != "mtable" {
					return "", false
				}
				tok.Attr = append(dropAttr(dropAttr(tok.Attr, "class"), "displaystyle"), xhtml.Attribute{Key: "displaystyle", Val: "true"})
			case tok.Data == "menclose":
				if st, ok := cancelStyle[attr(tok, "notation")]; ok {
					tok.Attr = append(dropAttr(tok.Attr, "style"), xhtml.Attribute{Key: "style", Val: st})
				}
			}
			b.WriteString(tok.String())
		case xhtml.EndTagToken:
			if depth == 0 {
				// An end tag of nothing open: \text{</math>}, which the
				// converter copies through unescaped.
				return "", false
			}
			b.Write(z.Raw())
			if string(z.Raw()) == "</annotation>" {
				inAnnotation = false
			}
			if depth < len(closers) && closers[depth] != "" {
				b.WriteString(closers[depth])
				closers[depth] = ""
			}
			depth--
		case xhtml.SelfClosingTagToken:
			b.Write(z.Raw())
		default:
			return "", false
		}
	}
}

// opName reads the rest of an operator's name written by \mathrm (its
// letters as <mi>, its spaces as <mspace>) up to the end tag of tag, and
// returns it as text; false when it holds anything else (a fraction),
// and the formula prints as its source.
func opName(z *xhtml.Tokenizer, tag string) (string, bool) {
	var name strings.Builder
	depth := 0
	for {
		switch z.Next() {
		case xhtml.ErrorToken:
			return "", false
		case xhtml.TextToken:
			if depth == 1 {
				name.WriteString(html.UnescapeString(string(z.Raw())))
			}
		case xhtml.StartTagToken:
			tok := z.Token()
			if depth > 0 || tok.Data != "mi" && tok.Data != "mo" && tok.Data != "mn" && tok.Data != "mspace" {
				return "", false
			}
			if tok.Data == "mspace" {
				name.WriteString("\u2009") // \, in arg\,min: a thin space
			}
			depth++
		case xhtml.SelfClosingTagToken:
			if depth > 0 || z.Token().Data != "mspace" {
				return "", false
			}
			name.WriteString("\u2009")
		case xhtml.EndTagToken:
			tok := z.Token()
			if depth == 0 {
				return strings.TrimSpace(name.String()), tok.Data == tag && name.Len() > 0
			}
			depth--
		default:
			return "", false
		}
	}
}

func dropAttr(as []xhtml.Attribute, key string) []xhtml.Attribute {
	out := as[:0:0]
	for _, a := range as {
		if a.Key != key {
			out = append(out, a)
		}
	}
	return out
}
