package markdown

import (
	"context"
	"errors"
	"fmt"
	"math"
	"runtime"
	"runtime/debug"
	"strings"
	"testing"
	"time"

	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/text"

	"github.com/mdpress/mdpress/sdk/plugintest"
	"github.com/mdpress/mdpress/sdk/stage"
)

// fill repeats unit up to n bytes.
func fill(unit string, n int) string { return strings.Repeat(unit, n/len(unit)) }

// stair repeats, up to n bytes, lines of item each indented by one more
// step than the one before, depth lines deep, after prefix. With n 0 it
// writes the stair once.
func stair(prefix, step, item string, depth, n int) string {
	var b strings.Builder
	for {
		for d := range depth {
			b.WriteString(prefix + strings.Repeat(step, d) + item + "\n")
		}
		if b.Len() >= n {
			return b.String()
		}
	}
}

// hostile are inputs on which goldmark, unguarded, spends gigabytes or
// minutes; the comment says what each cost before measure refused it.
func hostile() map[string]string {
	var footnotes, refDefs, ticks strings.Builder
	for i := range 100_000 {
		fmt.Fprintf(&footnotes, "x[^%d]", i)
	}
	footnotes.WriteString("\n\n")
	for i := range 100_000 {
		fmt.Fprintf(&footnotes, "[^%d]: n\n", i)
	}
	for i := range 100_000 {
		fmt.Fprintf(&refDefs, "[l%d]: /u%d\n", i, i)
	}
	for i := 1; ticks.Len() < 2<<20; i++ {
		ticks.WriteString(strings.Repeat("`", i) + "a")
	}
	const mib = 1 << 20
	// Each is about twice the size the budgets admit. The figures say what
	// each cost before it was measured, at that size or the one named.
	return map[string]string{
		"table padded to a wide header":   "|" + strings.Repeat("a|", 1000) + "\n|" + strings.Repeat("-|", 1000) + "\n" + fill("x\n", 8<<10),                           // 750 MB; 100 KB exhausts memory
		"link destinations without end":   fill("[a](", 256<<10),                                                                                                       // 33 s, quadratic
		"emphasis and links":              fill("*[a*](", 256<<10),                                                                                                     // 25 s, quadratic
		"mixed emphasis":                  fill("*a_b*c_d**e_f*g**h*i_j**", 256<<10),                                                                                   // 4 s, quadratic
		"footnotes":                       footnotes.String(),                                                                                                          // 110 s
		"link reference definitions":      refDefs.String(),                                                                                                            // 17 s
		"definitions over two lines":      fill("[a]:\n", mib),                                                                                                         // 31 s, quadratic
		"backtick runs of growing length": ticks.String(),                                                                                                              // 39 s at 10 MiB
		"open brackets":                   fill("[", 2*mib),                                                                                                            // 800 MB; 4.1 GB and 23 s at 10 MiB
		"nested brackets":                 strings.Repeat("[", 100_000) + "a" + strings.Repeat("]", 100_000),                                                           // 1.2 s, quadratic; 15 s 470,000 deep
		"labels around code spans":        strings.Repeat("[", 900) + strings.Repeat("`a`", 200_000) + strings.Repeat("]", 900),                                        // 10.8 s
		"labels closed after code spans":  strings.Repeat("[", 900) + strings.Repeat("*a* ", 27_000) + strings.Repeat("`![`]", 900),                                    // 3 s: measure took the "![" for images
		"code span closers first":         strings.Repeat("[", 900) + strings.Repeat("`]`", 900) + strings.Repeat("*a* ", 27_000) + strings.Repeat("]", 900),           // 2 s: measure took their "]" for the labels
		"raw HTML closers first":          strings.Repeat("[", 900) + strings.Repeat(`<b title="]">`, 900) + strings.Repeat("*a* ", 27_000) + strings.Repeat("]", 900), // 1.7 s
		"labels around emphasis":          strings.Repeat("[", 900) + strings.Repeat("*a* ", 100_000) + strings.Repeat("]", 900),                                       // 15 s
		"emphasis chain":                  fill("*a **b ", mib),                                                                                                        // 1.4 GB and 12 s at 10 MiB
		"image openers":                   fill("![", 2*mib),                                                                                                           // 2 GB at 10 MiB
		"paragraphs":                      fill("a\n\n", 4*mib),                                                                                                        // 1.5 GB at 10 MiB
		"setext headings":                 fill("a\n=\n", 2*mib),                                                                                                       // 3.2 GB and 14 s at 10 MiB
		"list items":                      fill("- a\n", 3*mib),                                                                                                        // 1.9 GB and 11 s at 10 MiB
		"one-cell table rows":             "|a|\n|-|\n" + fill("x\n", 2*mib),                                                                                           // 3.6 GB at 10 MiB
		"nested lists on every line":      fill(strings.Repeat("- ", 64)+"x\n", 3*mib),                                                                                 // 2.6 GB at 10 MiB
		// Peak heap and time of the parse alone.
		"items nested by indentation":            stair("", "  ", "- a", 64, 7*mib),                      // 560 MB and 3.5 s at 10 MiB
		"ordered items nested by indentation":    stair("", "   ", "1. a", 43, 10*mib),                   // 540 MB and 2.1 s at 10 MiB
		"items nested by indentation in a quote": stair("> ", "  ", "- a", 63, 7*mib),                    // 520 MB and 2.4 s at 10 MiB
		"items and quotes nested by indentation": stair("", "  ", "- > a", 64, 7*mib),                    // 820 MB and 2.7 s at 10 MiB
		"blank lines in a list":                  "- a\n" + strings.Repeat("\n", 4*mib),                  // 480 MB and 3.3 s at 10 MiB
		"blank lines in nested lists":            stair("", "  ", "- a", 64, 0) + fill("\n", 64<<10),     // 1.4 GB and 4.3 s at 256 KiB
		"blank lines in quoted nested lists":     stair("> ", "  ", "- a", 63, 0) + fill(">\n", 128<<10), // 690 MB and 2.5 s at 256 KiB
	}
}

// TestHostileRefused expects every hostile input to be refused as too
// large before goldmark runs, with a message that says why. Some would
// also meet the tree's node limit, but only after goldmark had built
// them: the allocations tell the two apart.
func TestHostileRefused(t *testing.T) {
	p := New(nil)
	for name, src := range hostile() {
		t.Run(name, func(t *testing.T) {
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			_, err := p.Parse(t.Context(), &stage.ParseRequest{Markdown: src})
			runtime.ReadMemStats(&after)
			if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 16*uint64(len(src))+8<<20 {
				t.Errorf("allocated %d MB for %d KB of input: goldmark ran", alloc>>20, len(src)>>10)
			}
			if stage.CodeOf(err) != stage.CodeTooLarge {
				t.Fatalf("got %v, want a too-large error", err)
			}
			if msg := stage.SafeMessage(err); !strings.HasPrefix(msg, "document too complex: ") {
				t.Errorf("message %q does not say the document is too complex", msg)
			}
			// The README promises every parse limit is named in details.limit.
			var se *stage.Error
			if !errors.As(err, &se) || se.Details["limit"] == "" {
				t.Errorf("no details.limit in %#v", err)
			}
		})
	}
}

// TestRealDocumentsAdmitted repeats each corpus document to the host's
// default body limit: every one must stay within every budget.
func TestRealDocumentsAdmitted(t *testing.T) {
	for _, c := range corpus {
		t.Run(c.file, func(t *testing.T) {
			doc := readCorpus(t, c.file)
			var b strings.Builder
			for b.Len() < 10<<20 {
				b.WriteString(doc)
				b.WriteString("\n\n")
			}
			c := measure(defuse([]byte(b.String()), lineMarkers, lineIndent))
			if err := c.check(DefaultMaxNodes); err != nil {
				t.Fatalf("%v (cost %+v)", err, c)
			}
		})
	}
}

// TestNestedListsAdmitted: lists nested a few levels deep by indentation,
// loose and tight, with paragraphs, code and quotes inside, parse; and
// repeated to 4 MiB, a large manual made of nothing else, they stay
// within the budget.
func TestNestedListsAdmitted(t *testing.T) {
	const doc = "1. Install the tool\n\n" +
		"   Run the installer and follow the prompts:\n\n" +
		"   ```sh\n   ./install.sh --prefix /usr/local\n   ```\n\n" +
		"   - Linux\n" +
		"     - Debian and Ubuntu: use the `.deb` package\n" +
		"       - on older releases, enable the backports first\n" +
		"         - see the notes for 18.04, which\n" +
		"           go on over a second line\n" +
		"     - Fedora: use the `.rpm`\n" +
		"   - macOS: use *Homebrew*\n\n" +
		"2. Configure it\n" +
		"   > Note: the config file is YAML.\n" +
		"   > - keys are camelCase\n" +
		"   >   - nested keys are indented\n\n" +
		"   1. open `config.yaml`\n" +
		"      1. set `port`\n" +
		"         - the default is 8080\n\n" +
		"           A port below 1024 needs root.\n\n" +
		"      2. set `workers`\n\n"
	res, err := New(nil).Parse(t.Context(), &stage.ParseRequest{Markdown: doc})
	if err != nil {
		t.Fatal(err)
	}
	if d := depthOf(res.Document.Root); d < 10 {
		t.Fatalf("tree depth %d: the lists did not nest", d)
	}
	c := measure([]byte(strings.Repeat(doc, (4<<20)/len(doc))))
	if err := c.check(DefaultMaxNodes); err != nil {
		t.Fatalf("%v (cost %+v)", err, c)
	}
}

// TestNestingEstimated: goldmark walks the open list levels again on
// every line, blank lines included. For inputs made of nesting, it must
// allocate no more per estimated node than the weights assume: about 250
// bytes (lines of plain text take 234), 320 with slack.
func TestNestingEstimated(t *testing.T) {
	shapes := map[string]string{
		"items nested by indentation":            stair("", "  ", "- a", 64, 128<<10),
		"ordered items nested by indentation":    stair("", "   ", "1. a", 43, 128<<10),
		"footnotes nested by indentation":        stair("", "    ", "[^a]: a", 32, 128<<10),
		"items nested by tabs":                   stair("", "\t", "- a", 32, 128<<10),
		"items nested by indentation in a quote": stair("> ", "  ", "- a", 63, 128<<10),
		"items and quotes nested by indentation": stair("", "  ", "- > a", 64, 128<<10),
		"lines deep in nested items":             stair("", "  ", "- a", 64, 0) + fill(strings.Repeat("  ", 64)+"a\n", 128<<10),
		"blank lines in a list":                  "- a\n" + fill("\n", 128<<10),
		"blank lines in nested lists":            stair("", "  ", "- a", 64, 0) + fill("\n", 4<<10),
		"blank lines after lazy lines":           stair("", "  ", "- a", 64, 0) + fill("a\n", 2<<10) + fill("\n", 4<<10),
		"blank lines in nested footnotes":        stair("", "    ", "[^a]: a", 32, 0) + fill("\n", 8<<10),
		"blank lines in quoted nested lists":     stair("> ", "  ", "- a", 63, 0) + fill(">\n", 8<<10),
		// Only a thematic break may be indented past lineIndent.
		"blank lines in lists past lineIndent": strings.Repeat("123456789. ", 64) + "a\n\n" + strings.Repeat(" ", 250) + "***\n" + fill("\n", 16<<10),
	}
	p := New(nil)
	for name, src := range shapes {
		t.Run(name, func(t *testing.T) {
			b := defuse([]byte(src), lineMarkers, lineIndent)
			est := measure(b).nodes
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			doc := p.md.Parser().Parse(text.NewReader(b))
			runtime.ReadMemStats(&after)
			runtime.KeepAlive(doc)
			if alloc := int64(after.TotalAlloc - before.TotalAlloc); alloc > 320*est {
				t.Errorf("goldmark allocated %d MB, %d bytes for each of the %d nodes estimated", alloc>>20, alloc/est, est)
			}
		})
	}
}

func TestColumns(t *testing.T) {
	var s columns
	for _, c := range []int{1, 63, 64, 127, lineIndent} {
		s.add(c)
	}
	for c, want := range map[int]int{-1: 0, 0: 0, 1: 1, 62: 1, 63: 2, 64: 3, 126: 3, 127: 4, lineIndent: 5, 1000: 5} {
		if got := s.upTo(c); got != want {
			t.Errorf("upTo(%d) = %d, want %d", c, got, want)
		}
	}
	s.keepUpTo(64)
	if got := s.upTo(lineIndent); got != 3 {
		t.Errorf("after keepUpTo(64), %d columns, want 3", got)
	}
}

// TestEstimateErrsHigh compares the node estimate with the AST goldmark
// really builds, for each kind of content alone: the estimate must never
// be lower, or a document could grow past the budget unseen.
func TestEstimateErrsHigh(t *testing.T) {
	shapes := map[string]string{
		"paragraph lines":    fill("word word\n", 64<<10),
		"paragraphs":         fill("a\n\n", 64<<10),
		"headings":           fill("# a\n", 64<<10),
		"setext":             fill("a\n=\n", 64<<10),
		"list items":         fill("- a\n", 64<<10),
		"task items":         fill("- [ ] a\n", 64<<10),
		"ordered items":      fill("1. a\n", 64<<10),
		"quotes":             fill(">>>> a\n", 64<<10),
		"nested lists":       fill(strings.Repeat("- ", 64)+"x\n", 64<<10),
		"emphasis":           fill("*a **b ", 64<<10),
		"links":              fill("[a](b) ", 64<<10),
		"images in links":    fill("[![a](b)](c) ", 64<<10),
		"brackets":           fill("[", 64<<10),
		"raw html":           fill("a <span> ", 64<<10),
		"entities":           fill("&amp;", 64<<10),
		"escapes":            fill("\\*", 64<<10),
		"code spans":         fill("`a` ", 64<<10),
		"autolinks":          fill("<http://a> www.b.com ", 64<<10),
		"table":              "| a | b | c |\n|---|---|---|\n" + fill("| x | *y* | z |\n", 64<<10),
		"padded table":       "|" + strings.Repeat("a|", 100) + "\n|" + strings.Repeat("-|", 100) + "\n" + fill("x\n", 4<<10),
		"footnote refs":      "[^a]: n\n\n" + fill("x[^a]", 64<<10),
		"footnote defs":      fill("x[^a]\n\n[^a]: n\n\n", 64<<10),
		"link refs":          "[a]: /u\n\n" + fill("[a] ", 64<<10),
		"html comment lines": fill("a <!--a\n", 64<<10),
	}
	for _, c := range corpus {
		shapes["corpus "+c.file] = readCorpus(t, c.file)
	}
	p := New(nil)
	for name, src := range shapes {
		t.Run(name, func(t *testing.T) {
			b := defuse([]byte(src), lineMarkers, lineIndent)
			doc := p.md.Parser().Parse(text.NewReader(b))
			nodes := int64(0)
			_ = ast.Walk(doc, func(_ ast.Node, entering bool) (ast.WalkStatus, error) {
				if entering {
					nodes++
				}
				return ast.WalkContinue, nil
			})
			if est := measure(b).nodes; est < nodes {
				t.Errorf("estimate %d nodes, goldmark built %d", est, nodes)
			}
		})
	}
}

// TestLinkScanReach checks the destination scan model against goldmark's
// rule: from after "](" to the next space or the ")" that closes more
// than it opened, escapes skipped.
func TestLinkScanReach(t *testing.T) {
	tests := []struct {
		line string
		want int64
	}{
		{"[a](bc)", 2},
		{"[a](bc)[d](ef)", 4},
		{"[a](b c)", 1},
		{"[a](b(c)d)e", 5},
		{`[a](b\)c)`, 4},
		{"[a](bcd", 3},
		{"[a]( b)", 0},
		{"[a](b[c](d)e)", 8 + 1},
	}
	for _, tt := range tests {
		t.Run(tt.line, func(t *testing.T) {
			if got := measure([]byte(tt.line)).linkScans; got != tt.want {
				t.Fatalf("reach %d, want %d", got, tt.want)
			}
		})
	}
}

// TestMeasureSmall: the scan that guards goldmark must not itself grow
// with the input's hostility.
func TestMeasureSmall(t *testing.T) {
	for name, src := range map[string]string{
		"open link destinations": strings.Repeat("](", 5<<20),
		"backtick runs":          strings.Repeat("a`", 5<<20),
		"open brackets":          strings.Repeat("[", 10<<20),
	} {
		t.Run(name, func(t *testing.T) {
			b := []byte(src)
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			c := measure(b)
			runtime.ReadMemStats(&after)
			if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 4<<20 {
				t.Errorf("measure allocated %d MB", alloc>>20)
			}
			if c.check(DefaultMaxNodes) == nil {
				t.Error("not refused")
			}
		})
	}
}

// TestReusedDefinitionsBounded: a link reference definition is copied into
// every link that uses it, in the tree and in the HTML. One long
// definition used often (1 MB of Markdown reaching 300 MB of tree and
// 300 MB of HTML, 1.3 GB of heap) is refused once the output passes its
// budget, in either form, having allocated little more than that.
func TestReusedDefinitionsBounded(t *testing.T) {
	src := "[a]: /" + strings.Repeat("u", 1<<20) + "\n\n" + strings.Repeat("[a] ", 300) + "\n"
	p := New(nil)
	for _, skipHTML := range []bool{true, false} {
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		_, err := p.Parse(t.Context(), &stage.ParseRequest{Markdown: src, SkipHTML: skipHTML})
		runtime.ReadMemStats(&after)
		if stage.CodeOf(err) != stage.CodeTooLarge || !strings.Contains(stage.SafeMessage(err), "expanded") {
			t.Fatalf("skipHTML=%v: %v, want too large once expanded", skipHTML, err)
		}
		if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 200<<20 {
			t.Errorf("skipHTML=%v: allocated %d MB before refusing", skipHTML, alloc>>20)
		}
	}
	// The same definition used a few times, as documents do, is fine.
	if _, err := p.Parse(t.Context(), &stage.ParseRequest{Markdown: "[a]: /" + strings.Repeat("u", 1<<20) + "\n\n[a] [a] [a]\n"}); err != nil {
		t.Fatal(err)
	}
	// Small elements that each print much more HTML than their source
	// meet the same budget without a link in sight; the refusal must not
	// send their writer looking for one.
	_, err := p.Parse(t.Context(), &stage.ParseRequest{Markdown: strings.Repeat("- [ ] a\n", 220_000)})
	msg := stage.SafeMessage(err)
	if stage.CodeOf(err) != stage.CodeTooLarge || !strings.Contains(msg, "MiB of text and HTML") || strings.HasPrefix(msg, "document too large once expanded: links") {
		t.Fatalf("task items: %v, want the output budget named without blaming links", err)
	}
}

// TestNestedImageAltBounded: an image's alt text is its content as plain
// text, so images nested in alt text copied it once per level (10 MiB
// nested 60 deep: 640 MB of tree). Alt text is bounded.
func TestNestedImageAltBounded(t *testing.T) {
	src := strings.Repeat("![", 20) + strings.Repeat("a", 200<<10) + strings.Repeat("](b)", 20)
	resp, err := New(nil).Parse(t.Context(), &stage.ParseRequest{Markdown: src, SkipHTML: true})
	if err != nil {
		t.Fatal(err)
	}
	var walk func(n *stage.Node)
	images := 0
	walk = func(n *stage.Node) {
		if n.Kind == stage.KindImage {
			images++
			if len(n.Attrs["alt"]) > maxAlt {
				t.Fatalf("alt of %d bytes", len(n.Attrs["alt"]))
			}
		}
		for _, c := range n.Children {
			walk(c)
		}
	}
	walk(resp.Document.Root)
	if images == 0 {
		t.Fatal("no image in the tree")
	}
}

// TestBreakTail: the line from a bullet on is a thematic break by
// breakTails exactly when isThematicBreak says so.
func TestBreakTail(t *testing.T) {
	for _, line := range []string{
		"- a", "- - -", "- - - x", "* * *", "* - *", "- * * *", "-  -\t-\r", "- -", "- - -x",
		"- * - * -", "* * * - -", "- ---", "- - - - - ---_", "-\t-\t-\t", "+ - - -", "- + - - -",
	} {
		var b breakTails
		for i := range len(line) {
			if c := line[i]; c != '-' && c != '*' {
				continue
			}
			if got, want := b.from([]byte(line), i), isThematicBreak([]byte(line[i:])); got != want {
				t.Errorf("%q from %d: %v, want %v", line, i, got, want)
			}
		}
	}
}

// TestMeasureLinear: the pre-scan reads a line a bounded number of times
// however many bullets open it: 64 bullets before a long run of marks
// cost about as much as plain text of the same size (64 times as much
// when each bullet read the rest of the line again).
func TestMeasureLinear(t *testing.T) {
	const n = 4 << 20
	timed := func(src []byte) time.Duration {
		best := time.Duration(math.MaxInt64)
		for range 3 {
			start := time.Now()
			measure(src)
			best = min(best, time.Since(start))
		}
		return best
	}
	plain := timed([]byte(strings.Repeat("a", n)))
	for _, bullet := range []string{"- ", "* "} {
		src := []byte(strings.Repeat(bullet, 64) + strings.Repeat(bullet[:1], n) + "x")
		if d := timed(src); d > 8*plain+5*time.Millisecond {
			t.Errorf("%q bullets: measure took %v, plain text %v", bullet, d, plain)
		}
	}
}

// TestParsesBoundedByCores: with every place to parse taken (by parses of
// requests given up, which goldmark cannot stop), a request waits, and one
// given up while waiting leaves without parsing; a place given back is
// taken at once.
func TestParsesBoundedByCores(t *testing.T) {
	p := New(nil)
	for range cap(p.running) {
		p.running <- struct{}{}
	}
	ctx, cancel := context.WithTimeout(t.Context(), 50*time.Millisecond)
	defer cancel()
	_, err := p.Parse(ctx, &stage.ParseRequest{Markdown: "# waits"})
	if stage.CodeOf(err) != stage.CodeTimeout {
		t.Fatalf("parse with every place taken: %v, want a timeout", err)
	}
	_, err = p.ParseParts(ctx, &stage.ParseRequest{Markdown: "# waits", SkipHTML: true}, func(stage.Part) error { return nil })
	if stage.CodeOf(err) != stage.CodeTimeout {
		t.Fatalf("parse in parts with every place taken: %v, want a timeout", err)
	}
	<-p.running
	if _, err := p.Parse(t.Context(), &stage.ParseRequest{Markdown: "# parses"}); err != nil {
		t.Fatal(err)
	}
	if len(p.running) != cap(p.running)-1 {
		t.Errorf("%d places taken after the parse, want %d: the parse kept its place", len(p.running), cap(p.running)-1)
	}
}

// TestParseHeapBounded: each kind of content, at the most of it the
// budget admits up to the host's body limit, peaks under maxParseHeap
// when parsed whole with its HTML, the heaviest way. Links and autolinks
// past the tree's node limit were refused only once goldmark had spent
// 560 MB on them.
func TestParseHeapBounded(t *testing.T) {
	shapes := map[string]func(n int) string{
		"links":       func(n int) string { return fill("[a](b) ", n) },
		"autolinks":   func(n int) string { return fill("<http://a> www.b.com ", n) },
		"headings":    func(n int) string { return fill("# a\n", n) },
		"code spans":  func(n int) string { return fill("`a` ", n) },
		"table rows":  func(n int) string { return "|a|\n|-|\n" + fill("x\n", n) },
		"task items":  func(n int) string { return fill("- [ ] a\n", n) },
		"nested list": func(n int) string { return fill(strings.Repeat("- ", 64)+"x\n", n) },
	}
	admitted := func(src string) bool {
		return measure(defuse([]byte(src), lineMarkers, lineIndent)).check(DefaultMaxNodes) == nil
	}
	// The sampled heap counts garbage not yet collected or swept, up to
	// GOGC percent of what is held: on a loaded machine the collector
	// lags and the default pace read 502 MiB for what peaks at 380. A
	// tight pace keeps the reading within 10% of what the parse holds,
	// which is what the bound is about.
	defer debug.SetGCPercent(debug.SetGCPercent(10))
	p := New(nil)
	for name, shape := range shapes {
		t.Run(name, func(t *testing.T) {
			// The largest size admitted, to within 2%.
			lo, hi := 1<<10, 10<<20
			if admitted(shape(hi)) {
				lo = hi
			}
			for hi-lo > hi/50 {
				if m := (lo + hi) / 2; admitted(shape(m)) {
					lo = m
				} else {
					hi = m
				}
			}
			src := shape(lo)
			runtime.GC()
			var ms runtime.MemStats
			runtime.ReadMemStats(&ms)
			peak := 0
			stop := plugintest.SamplePeakHeap(&peak)
			_, err := p.Parse(t.Context(), &stage.ParseRequest{Markdown: src})
			stop()
			peak -= int(ms.HeapAlloc)
			t.Logf("%d KB: peak heap %d MiB: %v", len(src)>>10, peak>>20, err)
			if peak > maxParseHeap {
				t.Errorf("peak heap %d MiB, want under %d MiB", peak>>20, maxParseHeap>>20)
			}
		})
	}
}
