package highlight

import (
	"slices"
	"sync"

	"github.com/alecthomas/chroma/v2"
	"github.com/alecthomas/chroma/v2/lexers"
)

// matchTimeout bounds one regular expression's match, on the wall clock:
// regexp2 can bound a match by nothing else, and a hostile block would
// otherwise backtrack in one match for hours, out of reach of the budget,
// which is checked between tokens. chroma bounds each match at 250 ms, and
// a match cut short is no error: the lexer tries its next rule, so a
// keyword stalled mid-match (the thread descheduled, or waiting for a P,
// or regexp2's clock goroutine waiting for one and then jumping ahead)
// came out plain on a loaded machine, and the same document printed
// differently from one render to the next. A match of ordinary code takes
// microseconds of CPU; at the whole document's budget, a stall that long
// inside one is past what a loaded machine gives, while a hostile match
// still costs a document at most that once more.
const matchTimeout = MaxDocumentTime * slowdown

// registry holds a copy of each of chroma's regular expression lexers whose
// matches are bounded at matchTimeout, built once per process. Lexers that
// embed another by name (HTML's scripts and styles) find the copies here
// too. The few that are written in Go (Markdown, HTTP, the template
// languages, the Lisps) keep chroma's bound.
var registry = sync.OnceValue(func() *chroma.LexerRegistry {
	reg := chroma.NewLexerRegistry()
	for _, l := range lexers.GlobalLexerRegistry.Lexers {
		if rl, ok := l.(*chroma.RegexLexer); ok {
			reg.Register(withMatchTimeout(rl))
		}
	}
	return reg
})

// withMatchTimeout returns a copy of l whose matches time out after
// matchTimeout. chroma offers no setting for it: a first rule, run once as
// the copy compiles, sets it on every compiled expression and removes
// itself. l's rules are read (and l compiled) only when the copy is first
// used.
func withMatchTimeout(l *chroma.RegexLexer) *chroma.RegexLexer {
	return chroma.MustNewLexer(l.Config(), func() chroma.Rules {
		rules, err := l.Rules()
		if err != nil {
			// The copy fails to compile as l does: the block is plain.
			return chroma.Rules{}
		}
		rules = rules.Clone()
		rules["root"] = append([]chroma.Rule{{Mutator: setTimeouts{}}}, rules["root"]...)
		return rules
	})
}

// setTimeouts is the rule withMatchTimeout adds.
type setTimeouts struct{}

func (setTimeouts) MutateLexer(rules chroma.CompiledRules, state string, rule int) error {
	for _, rs := range rules {
		for _, r := range rs {
			if r.Regexp != nil {
				r.Regexp.MatchTimeout = matchTimeout
			}
		}
	}
	rules[state] = slices.Delete(rules[state], rule, rule+1)
	return nil
}

// Mutate is never called: the rule is gone before the copy lexes.
func (setTimeouts) Mutate(*chroma.LexerState) error { return nil }

var _ chroma.LexerMutator = setTimeouts{}

// lexerOf returns the copy of chroma's lexer for lang, nil if there is none.
func lexerOf(lang string) chroma.Lexer {
	if l := registry().Get(lang); l != nil {
		return l
	}
	// chroma's few lexers that are not regular expression lexers
	// (templates that delegate to two others) are used as they are.
	return lexers.Get(lang)
}
