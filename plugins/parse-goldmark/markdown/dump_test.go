package markdown

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/mdpress/mdpress/sdk/stage"
)

// dump writes a parse result in the compact form of the golden files: the
// title, the outline, the tree (one node a line, indented by depth, attrs
// sorted, texts quoted) and the HTML.
func dump(doc stage.Document) string {
	var b strings.Builder
	fmt.Fprintf(&b, "title: %q\noutline:\n", doc.Title)
	for _, h := range doc.Outline {
		fmt.Fprintf(&b, "  h%d #%s %q\n", h.Level, h.ID, h.Text)
	}
	b.WriteString("tree:\n")
	dumpNode(&b, doc.Root, 0)
	b.WriteString("html:\n")
	b.WriteString(doc.HTML)
	return b.String()
}

func dumpNode(b *strings.Builder, n *stage.Node, depth int) {
	b.WriteString(strings.Repeat("  ", depth))
	b.WriteString(string(n.Kind))
	keys := make([]string, 0, len(n.Attrs))
	for k := range n.Attrs {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		fmt.Fprintf(b, " %s=%s", k, strconv.Quote(n.Attrs[k]))
	}
	if n.Text != "" {
		b.WriteString(" ")
		b.WriteString(strconv.Quote(n.Text))
	}
	b.WriteByte('\n')
	for _, c := range n.Children {
		dumpNode(b, c, depth+1)
	}
}
