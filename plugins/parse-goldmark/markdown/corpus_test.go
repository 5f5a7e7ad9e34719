package markdown

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"

	"github.com/mdpress/mdpress/sdk/stage"
)

// corpus lists the real-world files in testdata/corpus (see SOURCES.md
// there) with the title a reader sees and the headings counted by hand.
var corpus = []struct {
	file     string
	title    string
	headings int
}{
	{"small.md", "errors", 6},
	{"medium.md", "goldmark", 35},
	{"large.md", "Airbnb JavaScript Style Guide() {", 42},
}

func readCorpus(tb testing.TB, file string) string {
	tb.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "corpus", file))
	if err != nil {
		tb.Fatal(err)
	}
	return string(b)
}

func TestCorpus(t *testing.T) {
	p := New(nil)
	for _, c := range corpus {
		t.Run(c.file, func(t *testing.T) {
			src := readCorpus(t, c.file)
			res, err := p.Parse(t.Context(), &stage.ParseRequest{Markdown: src})
			if err != nil {
				t.Fatal(err)
			}
			doc := res.Document
			if doc.Title != c.title {
				t.Errorf("title = %q, want %q", doc.Title, c.title)
			}
			if n := countHeadings(src); len(doc.Outline) != n || n != c.headings {
				t.Errorf("outline has %d headings, the source %d, want %d", len(doc.Outline), n, c.headings)
			}
			for _, h := range doc.Outline {
				if h.Level < 1 || h.Level > 6 || h.Text == "" || h.ID == "" {
					t.Errorf("bad outline entry %+v", h)
				}
				if !strings.Contains(doc.HTML, `<h`+string(rune('0'+h.Level))+` id="`+h.ID+`"`) {
					t.Errorf("no <h%d id=%q> in the HTML", h.Level, h.ID)
				}
			}
			if err := checkShape(doc.Root); err != nil {
				t.Error(err)
			}
			if miss := missingInOrder(sourceWords(src), contentWords(doc.Root)); miss != "" {
				t.Errorf("source word missing from the tree: %s", miss)
			}
		})
	}
}

// TestConcurrentParse parses the corpus from several goroutines at once
// (run with -race) and expects the same result every time.
func TestConcurrentParse(t *testing.T) {
	p := New(nil)
	want := map[string]string{}
	for _, c := range corpus {
		res, err := p.Parse(t.Context(), &stage.ParseRequest{Markdown: readCorpus(t, c.file)})
		if err != nil {
			t.Fatal(err)
		}
		want[c.file] = dump(res.Document)
	}
	var wg sync.WaitGroup
	for i := range 6 {
		c := corpus[i%len(corpus)]
		src := readCorpus(t, c.file)
		wg.Go(func() {
			res, err := p.Parse(t.Context(), &stage.ParseRequest{Markdown: src})
			if err != nil {
				t.Error(err)
				return
			}
			if dump(res.Document) != want[c.file] {
				t.Errorf("%s: concurrent parse differs", c.file)
			}
		})
	}
	wg.Wait()
}

// Markup that carries words a reader never sees: link reference
// definitions and labels, footnote labels, character references, list
// markers and task boxes.
var (
	refDefinition = regexp.MustCompile(`(?m)^ {0,3}\[[^\]\n]+\]:[ \t]*\S+.*$`)
	refLabel      = regexp.MustCompile(`\]\[[^\]\n]*\]`)
	footnoteLabel = regexp.MustCompile(`\[\^[^\]\n]+\]:?`)
	charReference = regexp.MustCompile(`&#?[A-Za-z0-9]+;`)
	listMarkers   = regexp.MustCompile(`(?m)^(?:[ \t]*>)*[ \t]*(?:(?:[-*+]|\d{1,9}[.)])[ \t]+)+(?:\[[ xX]\][ \t]+)?`)
)

// sourceWords are the words of the Markdown source minus its markup.
func sourceWords(src string) []string {
	src = refDefinition.ReplaceAllString(src, "")
	src = refLabel.ReplaceAllString(src, "]")
	src = footnoteLabel.ReplaceAllString(src, " ")
	src = charReference.ReplaceAllString(src, " ")
	src = listMarkers.ReplaceAllString(src, " ")
	return words(src)
}

var (
	atxHeading    = regexp.MustCompile(`^ {0,3}#{1,6}(?:[ \t]|$)`)
	setextLine    = regexp.MustCompile(`^ {0,3}(?:=+|-+)[ \t]*$`)
	fenceOpen     = regexp.MustCompile("^ {0,3}(`{3,}|~{3,})")
	paragraphLine = regexp.MustCompile(`^ {0,3}[^ \t>*+\-#|<]`)
)

// countHeadings counts ATX and setext headings outside fenced code with a
// line scanner that shares no code with the parser: enough for the
// corpus, not a Markdown parser.
func countHeadings(src string) int {
	n := 0
	fence := ""
	prevText := false
	for line := range strings.SplitSeq(src, "\n") {
		line = strings.TrimRight(line, "\r")
		if fence != "" {
			if strings.HasPrefix(strings.TrimLeft(line, " "), fence) {
				fence = ""
			}
			continue
		}
		if m := fenceOpen.FindStringSubmatch(line); m != nil {
			fence, prevText = m[1], false
			continue
		}
		switch {
		case atxHeading.MatchString(line):
			n++
			prevText = false
		case prevText && setextLine.MatchString(line):
			n++
			prevText = false
		default:
			prevText = paragraphLine.MatchString(line)
		}
	}
	return n
}

// TestWordCheckCatchesLoss makes sure the corpus word check is not
// vacuous: dropping one paragraph of the tree must be reported.
func TestWordCheckCatchesLoss(t *testing.T) {
	src := readCorpus(t, "small.md")
	res, err := New(nil).Parse(t.Context(), &stage.ParseRequest{Markdown: src})
	if err != nil {
		t.Fatal(err)
	}
	root := res.Document.Root
	want := sourceWords(src)
	if len(want) < 300 {
		t.Fatalf("only %d source words in small.md", len(want))
	}
	for i, c := range root.Children {
		if c.Kind == stage.KindParagraph && strings.Contains(c.PlainText(), "simple error handling") {
			root.Children = append(root.Children[:i:i], root.Children[i+1:]...)
			break
		}
	}
	if miss := missingInOrder(want, contentWords(root)); !strings.HasPrefix(miss, `"Package"`) {
		t.Fatalf("dropped paragraph not reported, got %q", miss)
	}
}
