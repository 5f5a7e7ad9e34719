package markdown

import (
	"bytes"
	"html"
	"strings"
	"unicode/utf8"

	"gopkg.in/yaml.v3"

	"github.com/mdpress/mdpress/sdk/stage"
)

// Front matter is the YAML block that Jekyll, Hugo and most static site
// generators put at the top of a Markdown file. goldmark reads it as a
// thematic break and a setext heading, which also became the PDF's title
// and first bookmark. GitHub shows it as a table instead, keys in the
// header row and values in one row, and leaves anything that is not a
// YAML mapping as Markdown; so does mdpress.
//
// yuin/goldmark-meta was not used: its block parser takes "---" on the
// first line of whatever goldmark reads, and ParseParts gives goldmark
// every part as a document of its own; it prints nested values in Go's
// syntax (map[a:b]); and it decodes with yaml.v2, into Go values, which
// expands aliases. Here the block is cut off before any parse, decoded
// into yaml.v3's node tree, which keeps the keys' order and leaves
// aliases unexpanded, and laid out within fixed bounds.
const (
	// maxFrontMatter bounds the YAML between the two fences, in bytes; a
	// block that does not close within it stays Markdown, as invalid YAML
	// does. It bounds what yaml.v3 is given, whose parse is linear in it.
	maxFrontMatter = 64 << 10
	// maxFrontMatterText bounds the text of the table, keys and values,
	// and the nodes visited to write it: aliases repeat what they point
	// at, so that 1 KiB of anchors used in anchors ("billion laughs")
	// would otherwise write gigabytes. Past it, a cell ends in "…".
	maxFrontMatterText = 2 * maxFrontMatter
	// maxFrontMatterDepth bounds how deeply nested values are written.
	maxFrontMatterDepth = 32
	// frontMatterColumns is how many keys one table holds; more keys make
	// more tables, one under the other. GitHub's single table scrolls
	// sideways, a page cannot: at 12 columns on A4 both backends already
	// break words letter by letter, and Chromium cut columns off a table
	// of 40.
	frontMatterColumns = 6
)

// frontMatter is a document's front matter, ready to lay out: each key
// and its value as one line of plain text, in the order written.
type frontMatter struct {
	keys, values []string
	// title is the value of the "title" key when it is a string.
	title string
}

// splitFrontMatter returns the front matter that opens src and the
// Markdown after it, or nil and src when src opens with none: a line
// "---", then a YAML mapping, then a line "---" or "...", all within
// maxFrontMatter.
func splitFrontMatter(src []byte) (*frontMatter, []byte) {
	first, body := cutLine(src)
	if !isFence(first, "---") {
		return nil, src
	}
	for at := 0; at <= maxFrontMatter && at < len(body); {
		line, rest := cutLine(body[at:])
		if isFence(line, "---") || isFence(line, "...") {
			fm := parseFrontMatter(body[:at])
			if fm == nil {
				return nil, src
			}
			return fm, rest
		}
		at = len(body) - len(rest)
	}
	return nil, src
}

// cutLine returns the first line of b, without its end, and what follows
// its end.
func cutLine(b []byte) (line, rest []byte) {
	if i := bytes.IndexByte(b, '\n'); i >= 0 {
		return b[:i], b[i+1:]
	}
	return b, nil
}

// isFence reports whether line is fence, trailing spaces and a CR aside.
func isFence(line []byte, fence string) bool {
	return string(bytes.TrimRight(line, " \t\r")) == fence
}

// parseFrontMatter decodes y, or returns nil when it is not a YAML
// mapping.
func parseFrontMatter(y []byte) (fm *frontMatter) {
	// yaml.v3 turns its own errors into error values but has panicked on
	// malformed input before (CVE-2022-28948); such input is no mapping,
	// and a panic here would take the plugin down with every parse it runs.
	defer func() {
		if recover() != nil {
			fm = nil
		}
	}()
	var doc yaml.Node
	if err := yaml.Unmarshal(y, &doc); err != nil {
		return nil
	}
	if doc.Kind != yaml.DocumentNode || len(doc.Content) != 1 || doc.Content[0].Kind != yaml.MappingNode {
		return nil
	}
	fm = &frontMatter{}
	w := fmWriter{left: maxFrontMatterText}
	for _, p := range pairs(doc.Content[0], &w.left, 0) {
		k, v := p.key, p.value
		fm.keys = append(fm.keys, w.cell(k))
		fm.values = append(fm.values, w.cell(v))
		if fm.title == "" && isTitle(k) {
			if v := resolve(v); v.Kind == yaml.ScalarNode && v.ShortTag() == "!!str" {
				fm.title = oneLine(v.Value)
			}
		}
	}
	return fm
}

// isTitle reports whether the key k is "title", in any case: Jekyll
// writes "title", Hugo reads "Title" as well.
func isTitle(k *yaml.Node) bool {
	k = resolve(k)
	return k.Kind == yaml.ScalarNode && strings.EqualFold(k.Value, "title")
}

// resolve follows an alias to the node it names.
func resolve(n *yaml.Node) *yaml.Node {
	if n.Kind == yaml.AliasNode && n.Alias != nil {
		return n.Alias
	}
	return n
}

// pair is a key of a YAML mapping and its value.
type pair struct{ key, value *yaml.Node }

// pairs returns the pairs of the mapping m as a YAML loader builds its
// map, Jekyll's among them: a merge key ("<<: *defaults") brings in, where
// it stands, the pairs of the mapping or mappings it names, an earlier
// mapping winning over a later and m's own keys over all; and a key set
// twice keeps its first place and takes its last value. Laid
// out as written, a merge showed as a column "<<" and a duplicate key as
// two columns. Each pair looked at costs one of *budget, so that merges
// of merges of aliases stay bounded as the writer's aliases are.
func pairs(m *yaml.Node, budget *int, depth int) []pair {
	if *budget <= 0 {
		return nil
	}
	var out []pair
	at := map[string]int{} // a scalar key's index in out
	for i := 0; i+1 < len(m.Content) && *budget > 0; i += 2 {
		*budget--
		k, v := m.Content[i], m.Content[i+1]
		rk := resolve(k)
		if rk.Kind == yaml.ScalarNode && rk.ShortTag() == "!!merge" && depth < maxFrontMatterDepth {
			for _, src := range mergeSources(resolve(v)) {
				if *budget <= 0 {
					break
				}
				for _, p := range pairs(src, budget, depth+1) {
					name, ok := keyName(p.key)
					if !ok {
						out = append(out, p)
						continue
					}
					if _, seen := at[name]; seen {
						continue
					}
					at[name] = len(out)
					out = append(out, p)
				}
			}
			continue
		}
		name, ok := keyName(k)
		if !ok {
			out = append(out, pair{k, v})
			continue
		}
		if j, seen := at[name]; seen {
			out[j].value = v
			continue
		}
		at[name] = len(out)
		out = append(out, pair{k, v})
	}
	return out
}

// mergeSources returns the mappings a merge key's value names: a mapping,
// or a list of them.
func mergeSources(v *yaml.Node) []*yaml.Node {
	switch v.Kind {
	case yaml.MappingNode:
		return []*yaml.Node{v}
	case yaml.SequenceNode:
		var srcs []*yaml.Node
		for _, c := range v.Content {
			if c := resolve(c); c.Kind == yaml.MappingNode {
				srcs = append(srcs, c)
			}
		}
		return srcs
	}
	return nil
}

// keyName returns the text of a scalar key, through an alias, and whether
// it is one; a merge key is none.
func keyName(k *yaml.Node) (string, bool) {
	k = resolve(k)
	if k.Kind != yaml.ScalarNode || k.ShortTag() == "!!merge" {
		return "", false
	}
	return k.Value, true
}

// fmWriter writes YAML values as one line of text each, out of a budget
// shared by the whole table.
type fmWriter struct {
	b    strings.Builder
	left int
	cut  bool // the current cell ran out of budget
}

// cell returns the text of n: a scalar as written, with its whitespace
// collapsed, as a table cell collapses it; a null as nothing; a sequence
// as "a, b" and a mapping as "k: v, k2: v2", nested ones in YAML's flow
// brackets, GitHub's nested tables having no place in a cell of the tree.
func (w *fmWriter) cell(n *yaml.Node) string {
	w.b.Reset()
	w.cut = false
	w.value(n, 0)
	if w.cut {
		w.b.WriteString("…")
	}
	return w.b.String()
}

func (w *fmWriter) value(n *yaml.Node, depth int) {
	if w.left--; w.left <= 0 || depth > maxFrontMatterDepth {
		w.cut = true
		return
	}
	open, sep, end := "", ", ", ""
	switch n.Kind {
	case yaml.AliasNode:
		if n.Alias != nil {
			w.value(n.Alias, depth+1)
		}
		return
	case yaml.ScalarNode:
		if n.ShortTag() != "!!null" {
			w.write(strings.Join(strings.Fields(n.Value), " "))
		}
		return
	case yaml.SequenceNode:
		if depth > 0 {
			open, end = "[", "]"
		}
		w.write(open)
		for i, c := range n.Content {
			if i > 0 {
				w.write(sep)
			}
			w.value(c, depth+1)
		}
	case yaml.MappingNode:
		if depth > 0 {
			open, end = "{", "}"
		}
		w.write(open)
		for i, p := range pairs(n, &w.left, depth) {
			if i > 0 {
				w.write(sep)
			}
			w.value(p.key, depth+1)
			w.write(":")
			if v := resolve(p.value); v.Kind != yaml.ScalarNode || v.ShortTag() != "!!null" {
				w.write(" ")
				w.value(v, depth+1)
			}
		}
	}
	w.write(end)
}

// write appends s, or as much of it as the budget holds.
func (w *fmWriter) write(s string) {
	if w.cut {
		return
	}
	if len(s) > w.left {
		n := max(w.left, 0)
		for n > 0 && !utf8.RuneStart(s[n]) {
			n--
		}
		s = s[:n]
		w.cut = true
	}
	w.b.WriteString(s)
	w.left -= len(s)
}

// tables calls table for each group of at most frontMatterColumns keys.
func (fm *frontMatter) tables(table func(keys, values []string)) {
	for at := 0; at < len(fm.keys); at += frontMatterColumns {
		end := min(at+frontMatterColumns, len(fm.keys))
		table(fm.keys[at:end], fm.values[at:end])
	}
}

// writeHTML writes the front matter as goldmark writes a GFM table, its
// text escaped: front matter is data, never Markdown or HTML.
func (fm *frontMatter) writeHTML(b *bytes.Buffer) {
	row := func(cell string, texts []string) {
		b.WriteString("<tr>\n")
		for _, t := range texts {
			b.WriteString("<" + cell + ">")
			b.WriteString(html.EscapeString(t))
			b.WriteString("</" + cell + ">\n")
		}
		b.WriteString("</tr>\n")
	}
	fm.tables(func(keys, values []string) {
		b.WriteString("<table>\n<thead>\n")
		row("th", keys)
		b.WriteString("</thead>\n<tbody>\n")
		row("td", values)
		b.WriteString("</tbody>\n</table>\n")
	})
}

// frontMatter adds the front matter's tables to root, under the tree's
// limits.
func (c *converter) frontMatter(root *stage.Node, fm *frontMatter) error {
	row := func(t *stage.Node, kind stage.Kind, texts []string) {
		r := c.add(t, &stage.Node{Kind: kind})
		for _, s := range texts {
			if !c.step() {
				return
			}
			c.text(c.add(r, &stage.Node{Kind: stage.KindTableCell}), s)
		}
	}
	fm.tables(func(keys, values []string) {
		if c.err != nil {
			return
		}
		t := c.add(root, &stage.Node{Kind: stage.KindTable})
		row(t, stage.KindTableHead, keys)
		row(t, stage.KindTableRow, values)
	})
	c.flush()
	return c.err
}
