// Package markdown is the parse stage built on goldmark: GitHub Flavored
// Markdown (tables, strikethrough, task lists, autolinks) plus footnotes,
// with automatic heading ids (GitHub's: "Café crème" is #café-crème, see
// slugs) and raw HTML kept as written. One parse yields
// both the HTML body fragment and the backend-neutral stage.Node tree, so
// the two never disagree.
//
// YAML front matter at the very start of a document is shown as GitHub
// shows it, as a table of its keys over their values, and its title
// titles the document (see frontmatter.go). It is cut off before
// anything else reads the source, so no limit below, no part and no
// heading id sees it.
//
// Raw HTML is part of the product: it passes through untouched here, and
// the render stage is what keeps it safe.
//
// As GitHub renders Markdown, the HTML's paragraphs, headings and lists
// carry dir="auto", so that a block whose first strong character is Hebrew
// or Arabic reads right to left and is right-aligned, and quotes carry it
// too, so that their bar is beside their text. Paragraphs and headings
// directly inside a list item or quote follow their container instead
// (dir.go says why). The tree carries no direction: render-fpdf applies
// the same rules to it.
//
// Hostile input is bounded in four places. Before parsing, lines that open
// more than 64 block containers (">", "-", "1.", "[^note]:") or are indented
// deeper than 128 columns are defused, because goldmark's block
// parser costs grow with the square of the nesting. Then one linear scan
// estimates what goldmark would build and spend, and refuses as too
// complex a document whose AST would pass twice maxNodes (goldmark holds
// 200 bytes to 2 KB a node, so 10 MiB of "[" took 4 GB; and it walks the
// open lists again on every line, however deep indentation nested them)
// or that would drive one of goldmark's quadratic paths past a fixed
// budget (emphasis delimiters, code spans, link destinations, footnotes,
// link reference definitions, nested link labels), or whose parse it
// estimates would hold more than 448 MiB of heap (goldmark's AST, the tree
// and the HTML, by what each kind of content costs), because goldmark
// cannot be interrupted; and at most one parse per core runs at once, so
// the parses of requests given up do not pile up.
// While building the tree, content nested beyond maxDepth is flattened
// into its nearest allowed ancestor, keeping every text. A tree of more
// than maxNodes nodes is refused as too large.
//
// ParseParts hands the tree over in parts for a renderer that lays out the
// first while the rest is parsed. goldmark builds a whole tree at once, so
// the source is cut into pieces parsed one after the other: after a blank
// line, at a line in column 0 that no open block can take in, which leaves
// out list markers and the inside of fenced code and raw HTML blocks of
// types 1 to 5 (a piece that goldmark still ends inside one is parsed
// again, longer). The pieces share the heading ids and the limits above,
// and joined they are the tree Parse builds. The first is about 512 bytes,
// each next twice the last up to 64 KiB. Link reference definitions and
// footnotes reach across the whole document: footnotes, or a line that
// looks like a definition, make the document one part, and a "]:" that
// may close a definition's label holds the parts until its piece is
// parsed, starting again as one part if it defines one. With the HTML
// wanted, the tree comes in one part.
//
// Config block (JSON, every key optional):
//
//	{"maxDepth": 64, "maxNodes": 1000000}
//
// maxDepth is the deepest level of the tree (16..1000); maxNodes the most
// nodes a tree may hold (1000..50000000).
package markdown
