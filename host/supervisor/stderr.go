package supervisor

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
)

// maxReasonBytes bounds the line a start error quotes from a plugin's
// stderr, maxLineBytes the line it reads that from (a JSON log line).
const (
	maxReasonBytes = 512
	maxLineBytes   = 8 << 10
)

// stderrTail keeps the reason a plugin gave on stderr, for a plugin that
// never completes its handshake: one that exits at once ("cannot open
// /etc/x: permission denied", a panic in main) says why there, and the
// host logged those lines at debug level only, so the operator read
// go-plugin's paragraph on architectures and permissions and no reason.
// go-plugin writes each line to it, then its end.
type stderrTail struct {
	mu    sync.Mutex
	line  []byte // the line being written, cut at maxLineBytes
	cut   bool   // line lost its end
	last  string // the last line with text
	panic string // the first line of the runtime's panic or fatal error
	done  bool   // the handshake completed: nothing more is kept
}

func (w *stderrTail) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	n := len(p)
	for len(p) > 0 && !w.done {
		i := bytes.IndexByte(p, '\n')
		if i < 0 {
			w.add(p)
			break
		}
		w.add(p[:i])
		w.end()
		p = p[i+1:]
	}
	return n, nil
}

func (w *stderrTail) add(p []byte) {
	room := maxLineBytes - len(w.line)
	if len(p) > room {
		p, w.cut = p[:room], true
	}
	w.line = append(w.line, p...)
}

func (w *stderrTail) end() {
	line, ok := logLine(w.line)
	if !ok && !(w.cut && bytes.HasPrefix(w.line, []byte(`{"@`))) {
		line = strings.TrimSpace(strings.ToValidUTF8(string(w.line), "\uFFFD"))
	}
	w.line, w.cut = w.line[:0], false
	if line == "" {
		return
	}
	if len(line) > maxReasonBytes {
		line = strings.ToValidUTF8(line[:maxReasonBytes], "") + "…"
	}
	w.last = line
	// A Go panic's first line is its reason; the stack after it ends
	// with a file and line, no reason at all.
	if w.panic == "" && (strings.HasPrefix(line, "panic: ") || strings.HasPrefix(line, "fatal error: ")) {
		w.panic = line
	}
}

// logLine reads a line of the JSON log that go-plugin's Serve and the
// SDK's Logger write: a warning or an error is its message and attributes,
// "" below that ("plugin address" at debug is no reason to stop). ok is
// false for a line that is not such JSON.
func logLine(b []byte) (line string, ok bool) {
	var entry map[string]any
	if json.Unmarshal(b, &entry) != nil {
		return "", false
	}
	msg, ok := entry["@message"].(string)
	if !ok {
		return "", false
	}
	if lvl, _ := entry["@level"].(string); lvl != "warn" && lvl != "error" {
		return "", true
	}
	keys := slices.Sorted(maps.Keys(entry))
	var sb strings.Builder
	sb.WriteString(msg)
	for _, k := range keys {
		if !strings.HasPrefix(k, "@") {
			fmt.Fprintf(&sb, " %s=%v", k, entry[k])
		}
	}
	return sb.String(), true
}

// handshaken stops keeping lines: a running plugin's log goes to the
// host's log already, and reading it here too would decode each of its
// JSON lines a second time for the process's life.
func (w *stderrTail) handshaken() {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.done, w.line, w.last, w.panic = true, nil, "", ""
}

// reason is the line of stderr that most likely says why the plugin
// stopped: a panic's first line, else the last line written.
func (w *stderrTail) reason() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	if len(w.line) > 0 {
		w.end()
	}
	if w.panic != "" {
		return w.panic
	}
	return w.last
}

// unrecognized starts go-plugin's error for a first line on stdout that is
// not a handshake; a paragraph follows on architectures, libraries and
// permissions, which fit a binary that did not run, not one that ran and
// said something else.
const unrecognized = "Unrecognized remote plugin message:"

// startError says in one line why a plugin did not complete its
// handshake when the plugin said why: on stdout, where the handshake
// goes, or on stderr. Otherwise it is go-plugin's error whole.
func startError(err error, stderr string) error {
	head, _, _ := strings.Cut(err.Error(), "\n")
	head = strings.TrimSpace(head)
	stdout, ok := strings.CutPrefix(head, unrecognized)
	stdout = strings.TrimSpace(stdout)
	switch {
	case stderr == "" && (!ok || stdout == ""):
		return fmt.Errorf("start: %w", err)
	case !ok:
		return fmt.Errorf("start: %s; its stderr said: %s", head, stderr)
	}
	msg := "start: no handshake"
	if stdout != "" {
		if len(stdout) > maxReasonBytes {
			stdout = stdout[:maxReasonBytes]
		}
		msg += fmt.Sprintf(": it wrote %q on stdout, which carries the handshake (a plugin logs to stderr)", strings.ToValidUTF8(stdout, "\uFFFD"))
	}
	if stderr != "" {
		msg += "; its stderr said: " + stderr
	}
	return errors.New(msg)
}
