package markdown

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/mdpress/mdpress/sdk/stage"
)

// tinyParts returns a parser that cuts the source at every line it can.
func tinyParts() *Parser {
	p := New(nil)
	p.parts = partSizes{first: 1, max: 1}
	return p
}

// parseParts runs ParseParts with SkipHTML and returns the parts' roots.
func parseParts(ctx context.Context, p *Parser, src string) ([]*stage.Node, *stage.ParseResponse, error) {
	var parts []*stage.Node
	res, err := p.ParseParts(ctx, &stage.ParseRequest{Markdown: src, SkipHTML: true}, func(part stage.Part) error {
		parts = append(parts, part.Root)
		return nil
	})
	return parts, res, err
}

func treeText(n *stage.Node) string {
	var b strings.Builder
	dumpNode(&b, n, 0)
	return b.String()
}

// checkParts compares ParseParts with Parse on src: the same error, or
// parts that join into Parse's tree with its title and outline. It
// returns the number of parts.
func checkParts(t *testing.T, p *Parser, src string) int {
	t.Helper()
	want, wantErr := p.Parse(t.Context(), &stage.ParseRequest{Markdown: src, SkipHTML: true})
	parts, got, err := parseParts(t.Context(), p, src)
	if wantErr != nil || err != nil {
		if wantErr == nil || err == nil || err.Error() != wantErr.Error() || stage.CodeOf(err) != stage.CodeOf(wantErr) {
			t.Fatalf("ParseParts error %v, Parse error %v", err, wantErr)
		}
		return len(parts)
	}
	root := &stage.Node{Kind: stage.KindDocument}
	for i, part := range parts {
		if part == nil || part.Kind != stage.KindDocument {
			t.Fatalf("part %d is not a document node: %+v", i, part)
		}
		root.Children = append(root.Children, part.Children...)
	}
	if w, g := treeText(want.Document.Root), treeText(root); w != g {
		t.Fatalf("joined %d parts differ from Parse's tree:\n%s\nsource %q", len(parts), diff(w, g), src)
	}
	if got.Document.Root != nil || got.Document.HTML != "" {
		t.Errorf("the response carries a tree or HTML: %+v", got.Document)
	}
	if got.Document.Title != want.Document.Title || !slices.Equal(got.Document.Outline, want.Document.Outline) {
		t.Errorf("title %q, outline %+v; Parse: %q, %+v", got.Document.Title, got.Document.Outline, want.Document.Title, want.Document.Outline)
	}
	return len(parts)
}

// tenPages has the shape of the 10-page benchmark document.
func tenPages() string {
	var sb strings.Builder
	sb.WriteString("# Quarterly report\n\n")
	for i := range 28 {
		fmt.Fprintf(&sb, "## Section %d\n\nThis paragraph describes the results of section %d in some detail, so that the page fills with ordinary prose the way a real report would. It has **bold** words, _italic_ words and a [link](https://example.com).\n\n- first point\n- second point\n- third point\n\n| metric | value |\n|---|---:|\n| revenue | %d |\n| cost | %d |\n\n", i+1, i+1, 1000+i, 500+i)
	}
	return sb.String()
}

// partCases are inputs where cutting goes wrong if it goes wrong; split
// says whether the source has a line to cut at.
var partCases = []struct {
	name, src string
	split     bool
}{
	{"unclosed fence before a heading", "para\n\n```\ncode\n\n# not a heading\n\nmore\n", true},
	{"four-backtick fence holding ```", "intro\n\n````\n```\n\ninside\n```\n\nstill inside\n````\n\nafter\n", true},
	{"shorter fence does not close", "````\n```\n\nx\n\n# y\n", false},
	{"tilde fence with info", "~~~ go\nx\n\ny\n~~~\n\nz\n", true},
	{"backtick in info is no fence", "``` a`b\n\nc\n", true},
	{"fence in a list", "- a\n\n  ```\n  x\n\n  y\n  ```\n\nb\n\nc\n", true},
	{"fence in a list closed by column 0", "- a\n\n  ```\n  x\n\nout\n\n  ```\n\nend\n\n# h\n", false},
	{"fence in a quote", "> ```\n> code\n\nafter\n\n> ```\n> more\n\nend\n", true},
	{"indented fence", "   ```\nx\n\ny\n   ```\n\nz\n", true},
	{"tab before a fence", "\t```\n\nx\n\n```\n\ny\n", true},
	{"html 1 script", "<script>\nvar a;\n\nvar b;\n</script>\n\nafter\n\nmore\n", true},
	{"html 1 upper case", "<SCRIPT type=x>\nvar a;\n\nvar b;\n</Script>\n\nafter\n", true},
	{"html 1 pre", "<pre>\nx\n\ny\n</pre>\n\nz\n", true},
	{"html 1 style", "<style>\np {}\n\nh1 {}\n</style>\n\nz\n", true},
	{"html 1 textarea", "<textarea>\nx\n\ny\n</textarea>\n\nz\n", true},
	{"html 1 closed on its line", "<pre>x</pre>\n\ny\n\nz\n", true},
	{"html 2 comment", "<!--\ncomment\n\nstill\n-->\n\nafter\n", true},
	{"html 2 one line", "<!-- c -->\n\nafter\n\nmore\n", true},
	{"html 2 unclosed", "<!--\n\nnever closed\n\n# x\n", false},
	{"html 3", "<?php\necho 1;\n\necho 2;\n?>\n\nafter\n", true},
	{"html 4", "<!DOCTYPE html\n\nfoo\n>\n\nafter\n", true},
	{"html 5", "<![CDATA[\nx\n\ny\n]]>\n\nafter\n", true},
	{"html 6", "<div>\nx\n\ny\n</div>\n\nafter\n", true},
	{"html 7", "<custom-tag>\nx\n\ny\n</custom-tag>\n\nafter\n", true},
	{"html in a list", "- <!--\n\n  x\n\ny -->\n\nz\n", true},
	{"loose list", "- a\n\n- b\n\n- c\n\npara\n\n- d\n\n+ e\n\n* f\n", true},
	{"ordered lists", "1. a\n\n2. b\n\n10) c\n\n3. d\n\ntext\n\n1.5 million\n", true},
	{"empty items", "-\n\nfoo\n\n-\n\n  bar\n\n1.\n\nbaz\n", true},
	{"nested list", "- a\n  - b\n\n  - c\n\nd\n\n- e\n\n  f\n\ng\n", true},
	{"thematic breaks", "- a\n\n***\n\n* * *\n\n---\n\n- b\n\n___\n", true},
	{"reference at the end", "See [x] and [y][x].\n\npara\n\n[x]: /url 'title'\n", false},
	{"reference at the start", "[x]: /url\n\nSee [x].\n\n# H\n\nmore [x]\n", false},
	{"reference in a quote", "See [x] here.\n\npara\n\n> [x]: /url\n\nend\n", false},
	{"reference in a list", "See [x] here.\n\npara\n\n- item\n\n    [x]: /url\n\nend\n", false},
	{"escaped bracket in a reference", "See [a\\]b].\n\npara\n\n> [a\\]b]: /url\n\nend\n", false},
	{"reference over two lines", "See [a b].\n\npara\n\n> [a\n> b]: /url\n\nend\n", false},
	{"]: in code in a list", "- a\n\n  ```js\n  o = {\n    [k]: v,\n  }\n  ```\n\nb\n\nc [k]\n", true},
	{"]: that defines nothing", "const x = {[ b ]: a}\n\n\\[x]: y\n\nz [x]\n\n[a] b]: c\n", true},
	{"footnotes", "Text[^1] and[^n].\n\n[^1]: note\n\nmore\n\n[^n]: other\n    more\n\nend\n", false},
	{"footnote in a list", "Text[^1].\n\n- [^1]: note\n\nmore\n", false},
	{"footnote reference only", "Text[^1].\n\nmore\n", true},
	{"duplicate headings", "# A\n\ntext\n\n# A\n\n## A\n\nA\n=\n\n# A\n\n# A-1\n\n# a 1\n", true},
	{"setext headings", "Title\n=====\n\ntext\n---\n\n---\n\nSub\n---\n\n===\n", true},
	{"tables", "| a | b |\n|---|---|\n| 1 | 2 |\n\n| c |\n|:-:|\n| 3 |\n\ntext\n|x|\n|-|\n", true},
	{"indented code", "    code\n\n    more\n\ntext\n\n    code2\n\n  \n    code3\n", true},
	{"tabs", "\tcode\n\n\tmore\n\ntext\n\n-\ta\n\n\tb\n\nc\n", true},
	{"crlf", "# T\r\n\r\npara\r\n\r\n- a\r\n\r\n- b\r\n\r\n```\r\ncode\r\n\r\nx\r\n```\r\n\r\nend\r\n\r\n# T\r\n", true},
	{"lone cr", "a\rb\r\r# c\r\rd\n\ne\n\r\nf\n", true},
	{"blank lines of whitespace", "a\n  \nb\n\t\nc\n \r\nd\n", true},
	{"lazy continuation", "> a\nb\n\nc\n\n- d\ne\n\nf\n", true},
	{"unicode whitespace", "a\n\n\u00a0b\n\n\u3000c\n\n\u2003- d\n\n\ufeffe\n", true},
	{"control bytes", "a\x00\n\nb\n\n\x0bc\n\n\x0cd\n", true},
	{"inline html", "<span>x</span>\n\ny\n\n<a href=\"x\">\n\nz\n", true},
	{"defused", strings.Repeat(">", 70) + " deep\n\n" + strings.Repeat(" ", 140) + "wide\n\nafter\n\n" + strings.Repeat("- ", 70) + "x\n\nend\n", true},
	{"empty", "", false},
	{"blank", "\n\n\n", false},
	{"no newline at the end", "a\n\nb", true},
	{"autolinks", "www.example.com\n\nhttps://x.org\n\na@b.co\n", true},
	{"task lists", "- [ ] a\n- [x] b\n\ntext\n\n- [x] c\n", true},
	{"front matter", "---\ntitle: T\n\ntags: [a, b]\n---\n# T\n\nx\n\n# T\n", true},
	{"front matter and a reference", "---\nk: v\n---\nSee [x].\n\npara\n\n[x]: /u\n", true}, // the front matter, then one part
	{"front matter and footnotes", "---\nk: v\n...\nText[^1].\n\n[^1]: note\n", true},
	{"heading ids across parts", "# Café\n\nx\n\n# Café\n\ny\n\n# café-1\n\n# כותרת\n\nz\n\n# כותרת\n", true},
}

func TestParsePartsEquivalence(t *testing.T) {
	p := tinyParts()
	for _, c := range partCases {
		t.Run(c.name, func(t *testing.T) {
			n := checkParts(t, p, c.src)
			if c.split != (n > 1) {
				t.Errorf("%d parts, want a cut: %v", n, c.split)
			}
		})
	}
}

// partCorpus returns the documents ParseParts must cut: the corpus, the
// golden inputs and the 10-page shape.
func partCorpus(t *testing.T) map[string]string {
	docs := map[string]string{"ten-pages": tenPages()}
	for _, c := range corpus {
		docs["corpus/"+c.file] = readCorpus(t, c.file)
	}
	golden, _ := filepath.Glob("testdata/*.md")
	for _, f := range golden {
		docs[f] = readFile(t, f)
	}
	return docs
}

func TestParsePartsCorpus(t *testing.T) {
	for name, src := range partCorpus(t) {
		t.Run(name, func(t *testing.T) {
			n := checkParts(t, New(nil), src)
			tiny := checkParts(t, tinyParts(), src)
			t.Logf("%d bytes: %d parts, %d cut at every line", len(src), n, tiny)
			// The golden inputs are short or define references.
			if !strings.HasPrefix(name, "testdata/") && n < 2 {
				t.Errorf("%d parts, want more than one", n)
			}
		})
	}
}

// TestPartSizes checks that parts grow from small to the cap.
func TestPartSizes(t *testing.T) {
	ten := tenPages()
	doc := readCorpus(t, "medium.md")
	big := strings.Repeat(doc+"\n\n", (1<<20)/(len(doc)+2))
	for _, c := range []struct {
		name     string
		src      string
		min, max int
	}{
		// 512 + 1 + 2 + 4 + 8 KiB cover 15 KB; each cut lands a little on.
		{"ten pages", ten, 4, 6},
		// Six parts to reach 64 KiB, then one per 64 KiB.
		{"1 MiB", big, 6 + len(big)/maxPart - 2, 6 + len(big)/maxPart + 2},
	} {
		parts, _, err := parseParts(t.Context(), New(nil), c.src)
		if err != nil {
			t.Fatal(err)
		}
		if len(parts) < c.min || len(parts) > c.max {
			t.Errorf("%s (%d bytes): %d parts, want %d to %d", c.name, len(c.src), len(parts), c.min, c.max)
		}
		// The first part is the title and a section's start.
		if first := len(parts[0].PlainText()); first > 2*firstPart {
			t.Errorf("%s: first part has %d bytes of text", c.name, first)
		}
	}
}

// TestParsePartsParsesAgain ends a part inside a fence that the splitter
// takes for closed: the part is parsed again, longer, and the heading ids
// it took the first time are given back.
func TestParsePartsParsesAgain(t *testing.T) {
	src := "# A\n\ntext\n\n# A\n\n- a\n\n  ```\n  x\n\nout\n\n  ```\n\n# A\n\n```\n\n# A\n\ntail\n"
	p := tinyParts()
	if n := checkParts(t, p, src); n < 2 {
		t.Errorf("%d parts", n)
	}
	s := p.newStream(t.Context(), []byte(src), DefaultConfig(), func(stage.Part) error { return nil }, planDefinitions([]byte(src)), newMathBudget(context.Background()))
	if err := s.run(); err != nil {
		t.Fatal(err)
	}
	if s.retries == 0 {
		t.Error("no part was parsed again")
	}
}

// TestParsePartsHoldsForDefinitions: a "]:" that may define a reference
// holds the parts until it is parsed, then lets them go.
func TestParsePartsHoldsForDefinitions(t *testing.T) {
	var emitted []int // parts parsed when each part was emitted
	src := "intro [k]\n\nmore\n\n- a\n\n  ```\n    [k]: v\n  ```\n\nb\n\nc\n"
	p := tinyParts()
	var s *partStream
	s = p.newStream(t.Context(), []byte(src), DefaultConfig(), func(stage.Part) error {
		emitted = append(emitted, s.parts)
		return nil
	}, planDefinitions([]byte(src)), newMathBudget(context.Background()))
	if s.holdTo < 0 {
		t.Fatal("the \"]:\" in the list item is not held for")
	}
	if err := s.run(); err != nil {
		t.Fatal(err)
	}
	if len(emitted) < 3 {
		t.Fatalf("%d parts", len(emitted))
	}
	checkParts(t, p, src)
}

func TestPlanDefinitions(t *testing.T) {
	for _, c := range []struct {
		src         string
		whole, hold bool
	}{
		{"no brackets", false, false},
		{"[x]: /u", true, false},
		{"   [x]: /u", true, false},
		{"    [x]: /u", false, true},
		{"> [x]: /u", false, true},
		{"- 1. > [x]: /u", false, true},
		{"[x\ny]: /u", false, true},
		{"[x\n\ny]: /u", false, false},
		{"[^1]: note", true, false},
		{"> [^1]: note", true, false},
		{"a [x]: /u", false, false},
		{"\\[x]: /u", false, false},
		{"[x\\]: /u", false, false},
		{"\\\\[x]: /u", false, false},
		{"[x\\\\]: /u", true, false},
		{"[a]b]: /u", false, false},
		{"[a\\]b]: /u", true, false},
		{"> [a\\]b]: /u", false, true},
		{"[a[b]: /u", false, false},
		{"const x = {[ b ]: a}", false, false},
		{"\t[x]: /u", false, true},
	} {
		plan := planDefinitions([]byte(c.src))
		if plan.whole != c.whole || (plan.holdTo >= 0) != c.hold {
			t.Errorf("%q: %+v, want whole %v, hold %v", c.src, plan, c.whole, c.hold)
		}
	}
}

func TestParsePartsRefusedEmitsNothing(t *testing.T) {
	p := New(nil)
	if _, err := p.Configure(t.Context(), &stage.ConfigureRequest{Config: []byte(`{"maxNodes": 1000}`)}); err != nil {
		t.Fatal(err)
	}
	src := strings.Repeat("para\n\n", 2000)
	parts, _, err := parseParts(t.Context(), p, src)
	_, want := p.Parse(t.Context(), &stage.ParseRequest{Markdown: src, SkipHTML: true})
	if err == nil || want == nil || err.Error() != want.Error() || stage.CodeOf(err) != stage.CodeTooLarge {
		t.Fatalf("err = %v, Parse's %v", err, want)
	}
	if len(parts) != 0 {
		t.Fatalf("a refused document emitted %d parts", len(parts))
	}
	// Past the budget's estimate, the tree's own limit holds across parts.
	src = strings.Repeat("para\n\n", 600)
	parts, _, err = parseParts(t.Context(), p, src)
	_, want = p.Parse(t.Context(), &stage.ParseRequest{Markdown: src, SkipHTML: true})
	if err == nil || want == nil || err.Error() != want.Error() {
		t.Fatalf("err = %v, Parse's %v", err, want)
	}
	if len(parts) < 2 {
		t.Fatalf("%d parts before the limit", len(parts))
	}
	// Crossed while parts are held for a "]:" further on: the same error.
	src += "- a\n\n  ```\n    [k]: v\n  ```\n"
	if planDefinitions([]byte(src)).holdTo < 0 {
		t.Fatal("no hold")
	}
	parts, _, err = parseParts(t.Context(), p, src)
	_, want = p.Parse(t.Context(), &stage.ParseRequest{Markdown: src, SkipHTML: true})
	if err == nil || want == nil || err.Error() != want.Error() || len(parts) != 0 {
		t.Fatalf("err = %v after %d parts, Parse's %v", err, len(parts), want)
	}
}

func TestParsePartsEmitError(t *testing.T) {
	stop := errors.New("stop")
	calls := 0
	_, err := New(nil).ParseParts(t.Context(), &stage.ParseRequest{Markdown: tenPages(), SkipHTML: true}, func(stage.Part) error {
		if calls++; calls == 2 {
			return stop
		}
		return nil
	})
	if err != stop {
		t.Fatalf("err = %v, want the emit error as is", err)
	}
	if calls != 2 {
		t.Fatalf("emit called %d times, want 2", calls)
	}
	// With the HTML too.
	calls = 0
	_, err = New(nil).ParseParts(t.Context(), &stage.ParseRequest{Markdown: tenPages()}, func(stage.Part) error {
		calls++
		return stop
	})
	if err != stop || calls != 1 {
		t.Fatalf("err = %v after %d calls", err, calls)
	}
}

func TestParsePartsContext(t *testing.T) {
	cancelled, cancel := context.WithCancel(t.Context())
	cancel()
	parts, _, err := parseParts(cancelled, New(nil), tenPages())
	if stage.CodeOf(err) != stage.CodeTimeout || !errors.Is(err, context.Canceled) || len(parts) != 0 {
		t.Fatalf("cancelled before: %d parts, err %v", len(parts), err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	calls := 0
	_, err = New(nil).ParseParts(ctx, &stage.ParseRequest{Markdown: tenPages(), SkipHTML: true}, func(stage.Part) error {
		calls++
		cancel()
		return nil
	})
	if stage.CodeOf(err) != stage.CodeTimeout || !errors.Is(err, context.Canceled) || calls != 1 {
		t.Fatalf("cancelled in the first emit: %d parts, err %v", calls, err)
	}
}

// TestParsePartsWithHTML: with the HTML wanted, the tree comes whole and
// the response has the HTML of Parse.
func TestParsePartsWithHTML(t *testing.T) {
	p := New(nil)
	src := tenPages()
	var parts []*stage.Node
	res, err := p.ParseParts(t.Context(), &stage.ParseRequest{Markdown: src}, func(part stage.Part) error {
		parts = append(parts, part.Root)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	want, err := p.Parse(t.Context(), &stage.ParseRequest{Markdown: src})
	if err != nil {
		t.Fatal(err)
	}
	if len(parts) != 1 || treeText(parts[0]) != treeText(want.Document.Root) || res.Document.Root != nil {
		t.Fatalf("%d parts", len(parts))
	}
	res.Document.Root = want.Document.Root
	if dump(res.Document) != dump(want.Document) || res.Document.HTML == "" {
		t.Fatal("the response differs from Parse's")
	}
}

func FuzzParseParts(f *testing.F) {
	for _, c := range partCases {
		f.Add(c.src, uint16(1))
	}
	f.Add(tenPages(), uint16(600))
	for _, c := range corpus {
		doc := readCorpus(f, c.file)
		f.Add(doc[:min(len(doc), 3000)], uint16(64))
	}
	f.Fuzz(func(t *testing.T, src string, size uint16) {
		q := New(nil)
		q.parts = partSizes{first: max(1, int(size)), max: max(1, int(size))}
		checkParts(t, q, src)
	})
}

// partLines are the lines TestParsePartsRandom builds documents from: the
// openers, closers and continuations of every kind of block.
var partLines = []string{
	"", "", "", "  ", "\t", "\r", "para", "para *em", "em* text", "# Head", "# Head", "## Head", "Head", "===", "---", "***", "* * *",
	"```", "```go", "````", "~~~", "  ```", "    ```", "\t```", "- ```", "> ```", "``` a`b",
	"- a", "- b", "  - c", "    - d", "+ e", "* f", "-", "1. g", "2) h", "10. i", "  x", "    code", "\tcode", "      deep",
	"> q", ">", "> > q", "> - q", "- > q",
	"<!--", "-->", "<!-- c -->", "<script>", "</script>", "<pre>", "</pre>", "<?x", "?>", "<!DOCTYPE x", ">", "<![CDATA[", "]]>",
	"<div>", "</div>", "<custom-tag>", "<span>x</span>",
	"| a | b |", "|---|---|", "| 1 | 2 |",
	"[x]", "[y] and [z]", "const o = {[k]: v}", "[^1]", "text[^1]", "    more note", "\\[x]: /u",
	"- [ ] task", "- [x] done", "www.example.com", "\u00a0nbsp",
	"$$", "  $$", "$$x$$", "$$ a", "b $$", "$x$ and $5", "```math", "- $$", "> $$",
	"title: T", "k: [a, b]", "...",
}

// defLines define references, or may: a third of the documents get them.
var defLines = []string{"[x]: /u", "  [y]: /v 'title'", "    [x]: /w", "> [z]: /z", "  [k]: v,", "[^1]: note", "- [x]: /l"}

// TestParsePartsRandom compares ParseParts with Parse on documents of
// random lines from partLines, cut at every line and at a few bytes.
func TestParsePartsRandom(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	n := 3000
	if testing.Short() {
		n = 300
	}
	tiny, some := tinyParts(), New(nil)
	some.parts = partSizes{first: 16, max: 64}
	split, plain := 0, 0
	for i := range n {
		lines := partLines
		if i%3 == 0 {
			lines = append(slices.Clip(partLines), defLines...)
		} else {
			plain++
		}
		var b strings.Builder
		for range 1 + rng.IntN(40) {
			if rng.IntN(4) > 0 { // a blank line a quarter of the time
				b.WriteString(lines[rng.IntN(len(lines))])
			}
			if rng.IntN(20) == 0 {
				b.WriteString("\r")
			}
			b.WriteString("\n")
		}
		src := b.String()
		if checkParts(t, tiny, src) > 1 {
			split++
		}
		checkParts(t, some, src)
	}
	if split < plain/2 {
		t.Errorf("only %d of %d documents were cut", split, n)
	}
}

// TestConcurrentParseParts parses in parts from several goroutines at
// once (run with -race) and expects Parse's tree every time.
func TestConcurrentParseParts(t *testing.T) {
	p := New(nil)
	want := map[string]string{}
	for _, c := range corpus {
		res, err := p.Parse(t.Context(), &stage.ParseRequest{Markdown: readCorpus(t, c.file), SkipHTML: true})
		if err != nil {
			t.Fatal(err)
		}
		want[c.file] = treeText(res.Document.Root)
	}
	var wg sync.WaitGroup
	for i := range 6 {
		c := corpus[i%len(corpus)]
		src := readCorpus(t, c.file)
		wg.Go(func() {
			parts, _, err := parseParts(t.Context(), p, src)
			if err != nil {
				t.Error(err)
				return
			}
			root := &stage.Node{Kind: stage.KindDocument}
			for _, part := range parts {
				root.Children = append(root.Children, part.Children...)
			}
			if treeText(root) != want[c.file] {
				t.Errorf("%s: concurrent parse in parts differs", c.file)
			}
		})
	}
	wg.Wait()
}

// TestParsePartsRetriesCapped: input that makes piece after piece end
// inside a block is parsed again at most maxRetries times, then its rest
// as one piece, and still gives Parse's tree.
func TestParsePartsRetriesCapped(t *testing.T) {
	unit := "# A\n\ntext\n\n- a\n\n  ```\n  x\n\nout\n\n  ```\n\n"
	src := strings.Repeat(unit, 200)
	p := tinyParts()
	checkParts(t, p, src)
	s := p.newStream(t.Context(), []byte(src), DefaultConfig(), func(stage.Part) error { return nil }, planDefinitions([]byte(src)), newMathBudget(context.Background()))
	if err := s.run(); err != nil {
		t.Fatal(err)
	}
	if s.retries != maxRetries || s.parts < 2 {
		t.Fatalf("%d parses again, %d parts; want %d and a split before the cap", s.retries, s.parts, maxRetries)
	}
}
