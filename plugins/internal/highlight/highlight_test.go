package highlight

import (
	"strings"
	"testing"
	"time"

	"github.com/mdpress/mdpress/plugins/internal/threadcpu"
)

func classes(spans []Span) map[string]string {
	out := map[string]string{}
	for _, s := range spans {
		if t := strings.TrimSpace(s.Text); t != "" {
			out[t] = s.Class
		}
	}
	return out
}

func TestSpansClasses(t *testing.T) {
	cases := []struct {
		lang, code string
		want       map[string]string
	}{
		{"go", "// note\nfunc main() {\n\ts := \"hi\" + 42\n}\n", map[string]string{
			"// note": Comment, "func": Keyword, "main": Entity, `"hi"`: String, "42": Constant,
		}},
		{"Python", "def f(x):\n    return None  # done\n", map[string]string{"def": Keyword, "f": Entity, "None": Constant, "# done": Comment}},
		{"json", `{"a": true, "b": "c"}`, map[string]string{`"a"`: Tag, "true": Constant, `"c"`: String}},
		{"diff", "--- a/x\n+++ b/x\n@@ -1 +1 @@\n-old\n+new\n", map[string]string{"-old": Deleted, "+new": Inserted, "@@ -1 +1 @@": Heading}},
		{"html", `<a href="x">t</a>`, map[string]string{"a": Tag, "href": Constant, `"x"`: String}},
	}
	for _, c := range cases {
		spans := NewBudget().Spans(c.lang, c.code)
		if spans == nil {
			t.Errorf("%s: plain", c.lang)
			continue
		}
		if j := join(spans); j != c.code {
			t.Errorf("%s: the spans join to %q, not the code", c.lang, j)
		}
		got := classes(spans)
		for text, class := range c.want {
			if got[text] != class {
				t.Errorf("%s: %q is %q, want %q (spans %q)", c.lang, text, got[text], class, spans)
			}
		}
	}
}

// TestSpansPlain: what is not highlighted is nil, and the caller prints
// the text as it is.
func TestSpansPlain(t *testing.T) {
	for _, c := range []struct{ lang, code string }{
		{"", "func main() {}\n"},
		{"nosuchlanguage", "func main() {}\n"},
		{"text", "func main() {}\n"},
		{strings.Repeat("g", 100), "func main() {}\n"},
		{"go", strings.Repeat("x := 1\n", MaxBlockBytes/7+1)},
	} {
		if spans := NewBudget().Spans(c.lang, c.code); spans != nil {
			t.Errorf("lang %.20q, %d bytes: highlighted, want plain", c.lang, len(c.code))
		}
	}
}

// TestSpansKeepText: carriage returns, tabs, a missing final newline and
// characters beyond ASCII come back as they were.
func TestSpansKeepText(t *testing.T) {
	for _, code := range []string{"a := 1\r\nb := 2\r\n", "\tx := \"é漢🎉\"", "\n\n", "x"} {
		spans := NewBudget().Spans("go", code)
		if spans != nil && join(spans) != code {
			t.Errorf("%q came back as %q", code, join(spans))
		}
	}
}

func TestBudgetBytes(t *testing.T) {
	b := NewBudget()
	// A diff of long lines lexes in well under the time budget.
	line := "+" + strings.Repeat("x", 1000) + "\n"
	block := strings.Repeat(line, MaxBlockBytes/len(line))
	n := 0
	for b.Spans("go", block) != nil {
		n++
	}
	if !b.Spent() || n != MaxDocumentBytes/len(block) {
		t.Errorf("%d blocks of %d bytes highlighted, spent %v; want %d", n, len(block), b.Spent(), MaxDocumentBytes/len(block))
	}
}

// TestBudgetTime: chroma's YAML lexer takes time quadratic in a run of
// "[" (about 0.5 s for 2 KiB, 10 s for 8 KiB, minutes for 64 KiB). Each
// block stops at its allowance and is plain, and the document stops at
// its budget: every block after is plain. The times are the CPU the
// lexing thread used, which the budget counts: on the wall, a block
// lexed on a loaded machine took 50 s for its 7.4 s of CPU.
func TestBudgetTime(t *testing.T) {
	b := NewBudget()
	hostile := strings.Repeat("[", MaxBlockBytes)
	allowance := slowdown * (blockTime + MaxBlockBytes/1024*blockTimePerKiB)
	// Spans holds its goroutine to this thread too, and lexes there.
	now, release := threadcpu.Clock()
	defer release()
	start := now()
	blocks := 0
	for !b.Spent() && now()-start < 10*slowdown*MaxDocumentTime {
		t0 := now()
		if spans := b.Spans("yaml", hostile); spans != nil {
			t.Fatal("the hostile block was highlighted")
		}
		// One regular expression's match is bounded at matchTimeout
		// only: a token can overrun the allowance.
		if took := now() - t0; took > allowance+matchTimeout {
			t.Errorf("a hostile block took %v, its allowance %v", took, allowance)
		}
		blocks++
	}
	took := now() - start
	t.Logf("%d hostile blocks spent the budget in %v of CPU", blocks, took)
	if !b.Spent() || took > slowdown*MaxDocumentTime+time.Second {
		t.Errorf("%d hostile blocks took %v, spent %v", blocks, took, b.Spent())
	}
	if spans := b.Spans("go", "x := 1\n"); spans != nil {
		t.Error("a block after the budget was spent was highlighted")
	}
}

func join(spans []Span) string {
	var s strings.Builder
	for _, sp := range spans {
		s.WriteString(sp.Text)
	}
	return s.String()
}
