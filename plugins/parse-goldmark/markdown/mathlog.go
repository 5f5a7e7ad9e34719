package markdown

import (
	"context"
	"log"
	"log/slog"
	"strings"
	"sync/atomic"
	_ "unsafe" // go:linkname, for treeblood's logger
)

// The converter (treeblood) writes notes on the formulas it is given
// ("Potentially unmatched closing delimeter", then the formula and a caret
// under it on lines of their own) to a logger of its own on the process's stderr, which
// it makes at init and offers no way to change. The host took each of
// those lines for a log line of the plugin: unstructured, a formula split
// over several, a date in each. Its recovered panics it prints to stdout,
// which go-plugin hands to a host that asks and this one does not: they
// were lost. Its logger now writes through the plugin's, one bounded
// debug line a note, and a formula it fails on is logged by toMathML.
//
//go:linkname treebloodLogger github.com/wyatt915/treeblood.logger
var treebloodLogger *log.Logger

// mathLog is the logger of the last Parser made (see New): the converter's
// logger is one for the process.
var mathLog atomic.Pointer[slog.Logger]

// maxNoteBytes bounds a converter note in the log: it quotes the formula.
const maxNoteBytes = 200

// noteWriter turns each line the converter's logger writes into a debug
// line of mathLog.
type noteWriter struct{}

func (noteWriter) Write(p []byte) (int, error) {
	if l := mathLog.Load(); l != nil {
		// The line quoting the formula under a caret, once on one line,
		// no longer points at anything.
		if note := boundNote(string(p)); note != "" && !strings.HasSuffix(note, "HERE^") {
			l.Debug("math converter note", "note", note)
		}
	}
	return len(p), nil
}

// boundNote is s on one line, white space collapsed, cut at maxNoteBytes.
func boundNote(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) > maxNoteBytes {
		s = strings.ToValidUTF8(s[:maxNoteBytes], "") + "…"
	}
	return s
}

// useMathLog sends the converter's notes to log.
func useMathLog(log *slog.Logger) {
	mathLog.Store(log)
	treebloodLogger.SetFlags(0)
	treebloodLogger.SetPrefix("")
	treebloodLogger.SetOutput(noteWriter{})
}

// converterFailed logs a formula the converter failed on, which it
// reports with this error after recovering from a panic.
func converterFailed(ctx context.Context, err error, tex []byte) {
	if !strings.Contains(err.Error(), "unexpected error") {
		return
	}
	if l := mathLog.Load(); l != nil {
		// Without the formula: it is the user's document, and Info is
		// kept where debug lines are not.
		l.InfoContext(ctx, "math converter failed on a formula, printed as its source", "texBytes", len(tex))
	}
}
