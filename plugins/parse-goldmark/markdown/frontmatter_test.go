package markdown

import (
	"bytes"
	"fmt"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mdpress/mdpress/sdk/stage"
)

// jekyll is the front matter of a Jekyll or Hugo post.
const jekyll = "---\ntitle: My Post\ndate: 2024-01-02\ntags: [a, b]\n---\n# Heading\n\nBody text.\n"

// frontMatterTables returns the text of the front matter's tables, each
// as its header row and its value row, or nil when the document opens
// with none.
func frontMatterTables(root *stage.Node) [][2][]string {
	var tables [][2][]string
	for _, n := range root.Children {
		if n.Kind != stage.KindTable {
			break
		}
		var t [2][]string
		for i, row := range n.Children {
			for _, cell := range row.Children {
				t[i] = append(t[i], cell.PlainText())
			}
		}
		tables = append(tables, t)
	}
	return tables
}

// TestFrontMatter: YAML front matter at the very start of a document is a
// table, as GitHub shows it, in the HTML and in the tree alike, and its
// title, when a string, titles the document; the headings after it keep
// the ids and outline they have without it. Anything that is not a YAML
// mapping between two fences on the document's first lines stays
// Markdown, as on GitHub.
func TestFrontMatter(t *testing.T) {
	p := New(nil)
	for _, tt := range []struct {
		name, src string
		tables    [][2][]string // nil: no front matter, the source is Markdown
		title     string
	}{
		{"jekyll", jekyll, [][2][]string{{{"title", "date", "tags"}, {"My Post", "2024-01-02", "a, b"}}}, "My Post"},
		{"closed by dots", "---\ntitle: T\n...\n# H\n", [][2][]string{{{"title"}, {"T"}}}, "T"},
		{"crlf and trailing spaces", "---  \r\ntitle: T\r\nk: v\r\n---\t\r\n# H\r\n", [][2][]string{{{"title", "k"}, {"T", "v"}}}, "T"},
		{"byte order mark", "\ufeff---\ntitle: T\n---\n# H\n", [][2][]string{{{"title"}, {"T"}}}, "T"},
		{"blank lines and comments", "---\n# a comment, no heading\ntitle: T\n\nlist:\n  - a\n  - b: c\n---\n\n# H\n", [][2][]string{{{"title", "list"}, {"T", "a, {b: c}"}}}, "T"},
		{"nested values inline", "---\nm: {x: [1, {y: 2}], z: null}\nblock: |\n  two\n  lines\nempty:\n---\n# H\n",
			[][2][]string{{{"m", "block", "empty"}, {"x: [1, {y: 2}], z:", "two lines", ""}}}, "H"},
		{"no title key", "---\nauthor: A\n---\nText.\n\n# First\n", [][2][]string{{{"author"}, {"A"}}}, "First"},
		{"title not a string", "---\ntitle: 2024\n---\n# H\n", [][2][]string{{{"title"}, {"2024"}}}, "H"},
		{"title a list", "---\ntitle: [a, b]\n---\n# H\n", [][2][]string{{{"title"}, {"a, b"}}}, "H"},
		{"title in capitals", "---\nTitle: '  Hugo   post '\n---\n# H\n", [][2][]string{{{"Title"}, {"Hugo post"}}}, "Hugo post"},
		{"title through an alias", "---\nname: &n Aliased\ntitle: *n\n---\n", [][2][]string{{{"name", "title"}, {"Aliased", "Aliased"}}}, "Aliased"},
		// A title is metadata viewers and tools show raw: no escape
		// sequence, NUL or bell, as Chromium's <title> has none.
		{"title with control characters", "---\ntitle: \"a\\e[2Jb\\0c\\x07d\\x9be\"\n---\n# H\n",
			[][2][]string{{{"title"}, {"a\x1b[2Jb\x00c\x07d\u009be"}}}, "a [2Jb c d e"},
		{"heading with control characters", "# a\x1bb\x7fc\u009bd\n", nil, "a b c d"},
		{"html escaped", "---\n\"<b>k</b>\": <script>alert(1)</script> & <i>x</i>\n---\n", [][2][]string{{{"<b>k</b>"}, {"<script>alert(1)</script> & <i>x</i>"}}}, ""},
		{"thirteen keys", "---\n" + keys(13) + "---\n", [][2][]string{
			{{"k0", "k1", "k2", "k3", "k4", "k5"}, {"v0", "v1", "v2", "v3", "v4", "v5"}},
			{{"k6", "k7", "k8", "k9", "k10", "k11"}, {"v6", "v7", "v8", "v9", "v10", "v11"}},
			{{"k12"}, {"v12"}}}, ""},
		{"duplicate keys: first place, last value", "---\ntitle: Old\ndate: D\ntitle: New\n---\n", [][2][]string{{{"title", "date"}, {"New", "D"}}}, "New"},
		{"merge key", "---\ndefaults: &d {layout: post, title: Base}\npage:\n  <<: *d\n  layout: page\n<<: *d\nauthor: A\ntitle: Mine\n---\n",
			[][2][]string{{{"defaults", "page", "layout", "title", "author"}, {"layout: post, title: Base", "layout: page, title: Base", "post", "Mine", "A"}}}, "Mine"},
		{"merge of a list, the first wins", "---\na: &a {x: 1}\nb: &b {x: 2, y: 2}\n<<: [*a, *b]\n---\n",
			[][2][]string{{{"a", "b", "x", "y"}, {"x: 1", "x: 2, y: 2", "1", "2"}}}, ""},
		{"merge of no mapping", "---\n<<: text\nk: v\n---\n", [][2][]string{{{"k"}, {"v"}}}, ""},
		{"empty mapping", "---\n{}\n---\n# H\n", [][2][]string{}, "H"},
		{"not at the start", "\n---\ntitle: T\n---\n# H\n", nil, "title: T"},
		{"after text", "Intro\n---\ntitle: T\n---\n", nil, "Intro"},
		{"indented fence", " ---\ntitle: T\n---\n", nil, "title: T"},
		{"a scalar", "---\nSome text\n---\n# H\n", nil, "Some text"},
		{"a list", "---\n- a\n---\n", nil, ""},
		{"invalid yaml", "---\ntitle: [T\n---\n# H\n", nil, "title: [T"},
		{"unclosed", "---\ntitle: T\n\n# H\n", nil, "H"},
		{"too large", "---\ntitle: T\nbig: " + strings.Repeat("x", maxFrontMatter) + "\n---\n# H\n", nil, "title: T big: " + strings.Repeat("x", maxFrontMatter)},
		{"fence only", "---\n", nil, ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			res, err := p.Parse(t.Context(), &stage.ParseRequest{Markdown: tt.src})
			if err != nil {
				t.Fatal(err)
			}
			d := res.Document
			got := frontMatterTables(d.Root)
			if tt.tables == nil {
				// Markdown as before: goldmark's own tree and HTML.
				if fm, _ := splitFrontMatter([]byte(strings.TrimPrefix(tt.src, "\ufeff"))); fm != nil {
					t.Fatalf("front matter found: %+v", fm)
				}
				if d.Root.Children[0].Kind == stage.KindTable {
					t.Errorf("the document opens with a table: %q", got)
				}
			} else if !slices.EqualFunc(got, tt.tables, func(a, b [2][]string) bool {
				return slices.Equal(a[0], b[0]) && slices.Equal(a[1], b[1])
			}) {
				t.Errorf("tables %q, want %q", got, tt.tables)
			}
			if d.Title != tt.title {
				t.Errorf("title %q, want %q", d.Title, tt.title)
			}
			if tt.tables != nil {
				if n := strings.Count(d.HTML, "<table>"); n != len(tt.tables) {
					t.Errorf("%d tables in the HTML, want %d:\n%s", n, len(tt.tables), d.HTML)
				}
				if strings.Contains(d.HTML, "<hr") || strings.Contains(d.HTML, "<script") || strings.Contains(d.HTML, "<b>") {
					t.Errorf("front matter read as Markdown or HTML:\n%s", d.HTML)
				}
			}
			checkParts(t, tinyParts(), tt.src)
		})
	}
}

// TestFrontMatterHTML: the HTML is the table GitHub shows, written as
// goldmark writes a GFM table, and the headings after it keep their ids:
// front matter that mentions a heading's text takes no id from it.
func TestFrontMatterHTML(t *testing.T) {
	res, err := New(nil).Parse(t.Context(), &stage.ParseRequest{Markdown: "---\ntitle: Heading\n---\n# Heading\n\nBody.\n"})
	if err != nil {
		t.Fatal(err)
	}
	want := "<table>\n<thead>\n<tr>\n<th>title</th>\n</tr>\n</thead>\n<tbody>\n<tr>\n<td>Heading</td>\n</tr>\n</tbody>\n</table>\n" +
		"<h1 id=\"heading\" dir=\"auto\">Heading</h1>\n<p dir=\"auto\">Body.</p>\n"
	if res.Document.HTML != want {
		t.Errorf("HTML\n%s\nwant\n%s", res.Document.HTML, want)
	}
	if want := []stage.Heading{{Level: 1, Text: "Heading", ID: "heading"}}; !slices.Equal(res.Document.Outline, want) {
		t.Errorf("outline %+v, want %+v", res.Document.Outline, want)
	}
}

func keys(n int) string {
	var b strings.Builder
	for i := range n {
		fmt.Fprintf(&b, "k%d: v%d\n", i, i)
	}
	return b.String()
}

// TestFrontMatterHostile: front matter built to cost is bounded in time,
// memory and output: aliases of aliases ("billion laughs", 10^12 "lol"s
// once expanded), an alias of itself, 9,000 levels of nesting, a
// thousand aliases of a 60 KiB string, and as many keys as 64 KiB holds.
func TestFrontMatterHostile(t *testing.T) {
	laughs := "a: &a [lol, lol, lol, lol, lol, lol, lol, lol, lol, lol]\n"
	for i, prev := 1, "a"; i < 12; i++ {
		name := string(rune('a' + i))
		laughs += name + ": &" + name + " [" + strings.Repeat("*"+prev+", ", 9) + "*" + prev + "]\n"
		prev = name
	}
	var many strings.Builder
	for i := 0; many.Len() < maxFrontMatter-16; i++ {
		fmt.Fprintf(&many, "k%d: v\n", i)
	}
	for _, tt := range []struct{ name, yaml string }{
		{"billion laughs", laughs},
		{"alias of itself", "a: &a [*a, *a]\nb: &b {k: *b}\n"},
		{"deep flow", "k: " + strings.Repeat("[", 9000) + strings.Repeat("]", 9000) + "\n"},
		{"deep mapping", "k: " + strings.Repeat("{a: ", 9000) + "1" + strings.Repeat("}", 9000) + "\n"},
		{"deep block", deepBlock()},
		{"big alias", "a: &a " + strings.Repeat("x", 60000) + "\nb: [" + strings.Repeat("*a, ", 1000) + "*a]\n"},
		{"many keys", many.String()},
		{"merge laughs", mergeLaughs()},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if len(tt.yaml) > maxFrontMatter {
				t.Fatalf("%d bytes: larger than front matter may be", len(tt.yaml))
			}
			src := "---\n" + tt.yaml + "---\n# After\n"
			runtime.GC()
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			start := time.Now()
			res, err := New(nil).Parse(t.Context(), &stage.ParseRequest{Markdown: src})
			took := time.Since(start)
			runtime.ReadMemStats(&after)
			if err != nil {
				t.Fatal(err)
			}
			tables := frontMatterTables(res.Document.Root)
			if len(tables) == 0 {
				t.Fatal("no front matter table")
			}
			text, cells := 0, 0
			for _, tb := range tables {
				for _, row := range tb {
					for _, cell := range row {
						text, cells = text+len(cell), cells+1
					}
				}
			}
			// Measured: 2-15 ms and at most 9 MiB each; a loaded machine
			// gets ten times the time.
			if alloc := after.TotalAlloc - before.TotalAlloc; took > 2*time.Second || alloc > 64<<20 {
				t.Errorf("took %v and %d MiB", took, alloc>>20)
			}
			// Each cell may end in "…" past the budget.
			if text > maxFrontMatterText+cells*len("…") || len(res.Document.HTML) > 8*maxFrontMatterText {
				t.Errorf("%d bytes of table text, %d of HTML", text, len(res.Document.HTML))
			}
			if want := []stage.Heading{{Level: 1, Text: "After", ID: "after"}}; !slices.Equal(res.Document.Outline, want) {
				t.Errorf("outline %+v, want %+v", res.Document.Outline, want)
			}
		})
	}
}

// mergeLaughs is billion laughs through merge keys: ten levels, each a
// mapping merging a hundred aliases of the one before, the first of a
// hundred keys, and the top level merging the last.
func mergeLaughs() string {
	var b strings.Builder
	b.WriteString("l0: &l0 {")
	for i := range 100 {
		fmt.Fprintf(&b, "k%d: x, ", i)
	}
	b.WriteString("z: x}\n")
	for l := 1; l < 10; l++ {
		fmt.Fprintf(&b, "l%d: &l%d {<<: [%s*l%d]}\n", l, l, strings.Repeat(fmt.Sprintf("*l%d, ", l-1), 99), l-1)
	}
	b.WriteString("<<: [*l9, *l9]\n")
	return b.String()
}

// deepBlock nests block mappings as deep as 64 KiB of indentation allows.
func deepBlock() string {
	var b strings.Builder
	for i := 0; b.Len()+i+4 < maxFrontMatter-16; i++ {
		b.WriteString(strings.Repeat(" ", i) + "a:\n")
	}
	return b.String()
}

// tag matches the tags writeHTML writes.
var tag = regexp.MustCompile(`</?(table|thead|tbody|tr|th|td)>`)

func FuzzFrontMatter(f *testing.F) {
	for _, s := range []string{
		"title: My Post\ndate: 2024-01-02\ntags: [a, b]",
		"a: &a [x, *a]", "k: {a: [1, {b: 2}]}", "<b>: <i>", "- a", "x", "a: [", "a: |\n  b\n\n  c",
		"title: T\n...\nb: c", "k: v\n---\n# H",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, y string) {
		src := "---\n" + y + "\n---\n# H\n\ntext\n"
		fm, rest := splitFrontMatter([]byte(src))
		if fm == nil {
			if string(rest) != src {
				t.Fatal("no front matter, yet the source changed")
			}
		} else {
			if !strings.HasSuffix(src, string(rest)) {
				t.Fatalf("the rest %q is not the end of the source", rest)
			}
			var b strings.Builder
			for i := range fm.keys {
				b.WriteString(fm.keys[i] + fm.values[i])
			}
			if b.Len() > maxFrontMatterText+len(fm.keys)*2*len("…") {
				t.Fatalf("%d bytes of text", b.Len())
			}
		}
		res, err := New(nil).Parse(t.Context(), &stage.ParseRequest{Markdown: src})
		if err != nil {
			return
		}
		if fm != nil {
			var head bytes.Buffer
			fm.writeHTML(&head)
			if !strings.HasPrefix(res.Document.HTML, head.String()) {
				t.Fatalf("the HTML does not open with the front matter's tables:\n%s", res.Document.HTML)
			}
			if strings.ContainsAny(tag.ReplaceAllString(head.String(), ""), "<>") {
				t.Fatalf("unescaped markup in the tables:\n%s", head.String())
			}
		}
		checkParts(t, tinyParts(), src)
	})
}
