// Package highlight sorts the tokens of a fenced code block into the
// classes of stage.CodePalette, for style-themes (spans in the HTML that
// render-chrome prints) and render-fpdf (coloured runs), so that both
// backends colour a block alike.
//
// It lexes with chroma, whose lexers run regular expressions on a
// backtracking engine: on hostile input some take time quadratic in the
// block's length or worse (YAML's on a line of "[", Java's on a line of
// "/", JSON's on "/": seconds for 8 KiB). A Budget bounds what one
// document may spend, in bytes and in time, and a block past it is plain.
package highlight

import (
	"strings"
	"sync"
	"time"

	"github.com/alecthomas/chroma/v2"

	"github.com/mdpress/mdpress/plugins/internal/threadcpu"
	"github.com/mdpress/mdpress/sdk/stage"
)

// Classes are the names of the palette's colours; the HTML's spans carry
// them as "hl-<class>".
const (
	Plain    = ""
	Comment  = "comment"
	Keyword  = "keyword"
	String   = "string"
	Constant = "constant"
	Entity   = "entity"
	Tag      = "tag"
	Variable = "variable"
	Inserted = "inserted"
	Deleted  = "deleted"
	Heading  = "heading"
)

// Classes lists every class but Plain, in the palette's order.
var Classes = []string{Comment, Keyword, String, Constant, Entity, Tag, Variable, Inserted, Deleted, Heading}

// Colour is the palette's colour of a class; empty for Plain and for a
// class the palette leaves out.
func Colour(p stage.CodePalette, class string) string {
	switch class {
	case Comment:
		return p.Comment
	case Keyword:
		return p.Keyword
	case String:
		return p.String
	case Constant:
		return p.Constant
	case Entity:
		return p.Entity
	case Tag:
		return p.Tag
	case Variable:
		return p.Variable
	case Inserted:
		return p.Inserted
	case Deleted:
		return p.Deleted
	case Heading:
		return p.Heading
	}
	return ""
}

// Limits of one document's highlighting. Past any of them the rest of its
// blocks are plain, as a block of an unknown language is.
const (
	// MaxBlockBytes: a longer block is plain.
	MaxBlockBytes = 64 << 10
	// MaxDocumentBytes: the blocks highlighted in one document, in all.
	MaxDocumentBytes = 256 << 10
	// MaxDocumentTime is the time one document's lexing may take, and a
	// block gets at most blockTime plus blockTimePerKiB for each KiB of
	// it: CPU time of the lexing thread where it can be read (see
	// threadcpu), so that a loaded machine does not cut blocks short.
	// Code lexes at 0.4-1.9 ms a KiB (on a shared machine at load 5),
	// and a lexer's first use in a process compiles its expressions (1-3
	// ms, 16 under the race detector), so a block's allowance is 5-25
	// times its usual cost, and the whole of MaxDocumentBytes fits the
	// document's: an ordinary document never meets them, under the race
	// detector's slowdown too, and its PDF does not depend on the
	// machine's load. A hostile block stops at its first token past the
	// allowance and is plain.
	MaxDocumentTime = time.Second
	blockTime       = 100 * time.Millisecond
	blockTimePerKiB = 10 * time.Millisecond
	// maxLangBytes: a longer info string names no language chroma has.
	maxLangBytes = 40
)

// Span is a run of a block's text in one class.
type Span struct {
	Class string
	Text  string
}

// Budget is what is left of one document's limits. It is not safe for
// concurrent use: one goroutine at a time lexes a document's blocks.
type Budget struct {
	bytes int
	// time is what lexing may still take: only the time spent in Spans
	// counts, not the time between, while the document's parts arrive
	// or its layout runs.
	time  time.Duration
	spent bool
}

// NewBudget returns a document's budget.
func NewBudget() *Budget {
	return &Budget{bytes: MaxDocumentBytes, time: MaxDocumentTime * slowdown}
}

// Spent reports whether the budget ran out: the document's remaining
// blocks are plain.
func (b *Budget) Spent() bool { return b.spent }

// Spans splits code, a fenced block's text, into spans whose texts join
// to code exactly. It returns nil, for plain text, when lang names no
// lexer (it never guesses from the text: chroma's guesses are slow and
// often wrong), when the block or the document is past its limits, or
// when the lexer fails.
func (b *Budget) Spans(lang, code string) (spans []Span) {
	if b == nil || b.spent || code == "" || len(code) > MaxBlockBytes {
		return nil
	}
	if len(code) > b.bytes {
		b.spent = true
		return nil
	}
	// The lookup is timed too: a name chroma does not know costs a match
	// against every lexer's file patterns.
	now, release := threadcpu.Clock()
	start := now()
	allowance := min(b.time, slowdown*(blockTime+time.Duration(len(code))*blockTimePerKiB/1024))
	// The CPU clock is a system call to read, the wall clock is not, and
	// the thread cannot have run longer than the wall clock ran: the CPU
	// clock is read only once the wall clock says the allowance may be
	// spent, and the wall deadline moves on by what is left of it.
	wallDeadline := time.Now().Add(allowance)
	spent := func() bool {
		t := time.Now()
		if t.Before(wallDeadline) {
			return false
		}
		used := now() - start
		wallDeadline = t.Add(allowance - used)
		return used >= allowance
	}
	defer func() {
		// A lexer's mutators panic on states the author did not foresee;
		// hostile text finds them.
		if recover() != nil {
			spans = nil
		}
		if b.time -= now() - start; b.time <= 0 {
			b.spent = true
		}
		release()
	}()
	lexer := lookup(lang)
	if lexer == nil {
		return nil
	}
	b.bytes -= len(code)
	it, err := lexer.Tokenise(&chroma.TokeniseOptions{State: "root"}, code)
	if err != nil {
		return nil
	}
	pos := 0
	for tok := it(); tok != chroma.EOF; tok = it() {
		if spent() {
			return nil
		}
		// A lexer may add or drop text (a final newline, a carriage
		// return): the page must show the block's text as it is.
		end := pos + len(tok.Value)
		if end > len(code) || code[pos:end] != tok.Value {
			return nil
		}
		// Spans are cut from code rather than concatenated: a run of
		// one-character tokens of one class would copy quadratically.
		class := classOf(tok.Type)
		if k := len(spans) - 1; k >= 0 && spans[k].Class == class {
			spans[k].Text = code[end-len(spans[k].Text)-len(tok.Value) : end]
		} else {
			spans = append(spans, Span{Class: class, Text: code[pos:end]})
		}
		pos = end
	}
	if pos != len(code) {
		return nil
	}
	return spans
}

// lexerCache keeps the lookups of the names documents used: a miss costs
// chroma a match of the name against every lexer's file patterns. Names
// are bounded in length and the cache in entries.
var lexerCache = struct {
	sync.Mutex
	m map[string]chroma.Lexer
}{m: map[string]chroma.Lexer{}}

const maxCached = 512

func lookup(lang string) chroma.Lexer {
	if lang == "" || len(lang) > maxLangBytes {
		return nil
	}
	lang = strings.ToLower(lang)
	lexerCache.Lock()
	l, ok := lexerCache.m[lang]
	lexerCache.Unlock()
	if ok {
		return l
	}
	l = lexerOf(lang)
	if l != nil && l.Config().Name == "plaintext" {
		l = nil
	}
	lexerCache.Lock()
	if len(lexerCache.m) < maxCached {
		lexerCache.m[lang] = l
	}
	lexerCache.Unlock()
	return l
}

// classOf sorts a chroma token type into a palette class, the way
// GitHub's highlighting groups them: the constants' colour for numbers,
// built-ins and attribute names too.
func classOf(t chroma.TokenType) string {
	switch t {
	case chroma.KeywordConstant, chroma.NameConstant, chroma.NameBuiltin, chroma.NameBuiltinPseudo,
		chroma.NameAttribute, chroma.NameLabel, chroma.LiteralStringEscape, chroma.NameProperty:
		return Constant
	case chroma.KeywordType:
		return Keyword
	case chroma.NameFunction, chroma.NameFunctionMagic, chroma.NameClass, chroma.NameDecorator,
		chroma.NameException, chroma.NameNamespace, chroma.NameEntity:
		return Entity
	case chroma.NameTag:
		return Tag
	case chroma.NameVariable, chroma.NameVariableClass, chroma.NameVariableGlobal,
		chroma.NameVariableInstance, chroma.NameVariableMagic:
		return Variable
	case chroma.GenericInserted:
		return Inserted
	case chroma.GenericDeleted:
		return Deleted
	case chroma.GenericHeading, chroma.GenericSubheading:
		return Heading
	case chroma.CommentPreproc, chroma.CommentPreprocFile:
		return Keyword
	}
	switch t.Category() {
	case chroma.Comment:
		return Comment
	case chroma.Keyword:
		return Keyword
	}
	switch t.SubCategory() {
	case chroma.LiteralString:
		return String
	case chroma.LiteralNumber:
		return Constant
	}
	return Plain
}
