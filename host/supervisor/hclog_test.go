package supervisor

import (
	"bytes"
	"encoding/json"
	"log/slog"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mdpress/mdpress/sdk/stage"
)

// jsonKeys lists the top-level keys of one JSON object in order, repeats
// included, which decoding into a map would hide.
func jsonKeys(t *testing.T, line []byte) []string {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(line))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		t.Fatalf("not a JSON object: %s", line)
	}
	var keys []string
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			t.Fatalf("%v in %s", err, line)
		}
		keys = append(keys, tok.(string))
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			t.Fatalf("%v in %s", err, line)
		}
	}
	return keys
}

// TestPluginKeyOnce: the supervisor names the plugin on each of its log
// lines; go-plugin's lines about the process name it again, by the path
// of its binary, and a plugin may log a "plugin" of its own. Each line
// carries the key once, with the plugin's name.
func TestPluginKeyOnce(t *testing.T) {
	var out bytes.Buffer
	log := slog.New(slog.NewJSONHandler(&out, &slog.HandlerOptions{Level: slog.LevelDebug})).With("plugin", "flaky")
	hl := newHCLogger(log)
	// As go-plugin logs about the process, and re-emits a plugin's line.
	hl.Error("plugin process exited", "plugin", "/opt/mdpress/plugins/flaky", "id", "12", "error", "signal: killed")
	hl.Named("flaky").Info("tab recycled", "plugin", "chrome", "renders", 500, "timestamp", "2026-01-02T03:04:05.000Z")
	lines := bytes.Split(bytes.TrimSpace(out.Bytes()), []byte("\n"))
	if len(lines) != 2 {
		t.Fatalf("%d lines, want 2:\n%s", len(lines), out.Bytes())
	}
	for _, line := range lines {
		n := 0
		for _, k := range jsonKeys(t, line) {
			if k == "plugin" {
				n++
			}
		}
		var entry map[string]any
		if err := json.Unmarshal(line, &entry); err != nil {
			t.Fatal(err)
		}
		if n != 1 || entry["plugin"] != "flaky" {
			t.Errorf("%d plugin keys, plugin %v, want one, flaky: %s", n, entry["plugin"], line)
		}
	}
}

// lockedBuffer is a log destination the plugin's stderr reader and the
// test share.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) Bytes() []byte {
	b.mu.Lock()
	defer b.mu.Unlock()
	return bytes.Clone(b.buf.Bytes())
}

// TestPluginExitLoggedOnce runs a plugin and kills it: every line the
// supervisor logs, go-plugin's about the exit included, names it once.
func TestPluginExitLoggedOnce(t *testing.T) {
	dir := buildFlaky(t)
	t.Setenv("FLAKY_MARKER", filepath.Join(t.TempDir(), "never"))
	var out lockedBuffer
	sup := New(slog.New(slog.NewJSONHandler(&out, &slog.HandlerOptions{Level: slog.LevelDebug})), dir)
	if err := sup.Start(t.Context(), []Spec{{Stage: stage.NameParse, Plugin: "flaky", Config: &stage.ConfigureRequest{Config: []byte("{}")}}}); err != nil {
		t.Fatal(err)
	}
	defer sup.Stop()
	killPlugin(t, sup)
	waitFor(t, "the exit logged", func() bool { return bytes.Contains(out.Bytes(), []byte("plugin process exited")) })
	for _, line := range bytes.Split(bytes.TrimSpace(out.Bytes()), []byte("\n")) {
		n := 0
		for _, k := range jsonKeys(t, line) {
			if k == "plugin" {
				n++
			}
		}
		if n != 1 {
			t.Errorf("%d plugin keys: %s", n, line)
		}
	}
}

// TestStdioWriterLines: chunks of a plugin's stdio, cut anywhere, are
// logged as whole lines, a JSON line at its own level and any other at
// debug; a line longer than maxStdioLine is logged in pieces rather than
// held without bound.
func TestStdioWriterLines(t *testing.T) {
	var out bytes.Buffer
	w := newStdioWriter(slog.New(slog.NewTextHandler(&out, &slog.HandlerOptions{Level: slog.LevelDebug})))
	for _, chunk := range []string{"first li", "ne\nsecond line\n\nthi", `rd` + "\n" + `{"@level":"warn","@message":"json line"}` + "\n"} {
		if n, err := w.Write([]byte(chunk)); n != len(chunk) || err != nil {
			t.Fatalf("Write(%q) = %d, %v", chunk, n, err)
		}
	}
	got := out.String()
	for _, want := range []string{`level=DEBUG msg="first line"`, `level=DEBUG msg="second line"`, `level=DEBUG msg=third`, `level=WARN msg="json line"`} {
		if !bytes.Contains([]byte(got), []byte(want)) {
			t.Errorf("no %s in\n%s", want, got)
		}
	}
	if n := bytes.Count(out.Bytes(), []byte("\n")); n != 4 {
		t.Errorf("%d lines logged, want 4:\n%s", n, got)
	}
	out.Reset()
	w.Write(bytes.Repeat([]byte("x"), maxStdioLine+10))
	if out.Len() == 0 || len(w.partial) != 0 {
		t.Errorf("a %d-byte line without its end: %d bytes logged, %d held", maxStdioLine+10, out.Len(), len(w.partial))
	}
}

// TestStdioWriterIdleLine: a line whose end never comes, the last words of
// a plugin that exits, is logged once nothing more has come for a while;
// it was held, and lost with the process.
func TestStdioWriterIdleLine(t *testing.T) {
	var out lockedBuffer
	w := newStdioWriter(slog.New(slog.NewTextHandler(&out, &slog.HandlerOptions{Level: slog.LevelDebug})))
	w.Write([]byte("last words"))
	deadline := time.Now().Add(5 * stdioIdle)
	for !strings.Contains(string(out.Bytes()), `msg="last words"`) {
		if time.Now().After(deadline) {
			t.Fatalf("a line without its end not logged after %v: %q", 5*stdioIdle, out.Bytes())
		}
		time.Sleep(10 * time.Millisecond)
	}
	// A line whose end comes is one line, and nothing is left to log.
	w.Write([]byte("who"))
	w.Write([]byte("le\n"))
	time.Sleep(2 * stdioIdle)
	if got := string(out.Bytes()); strings.Count(got, "\n") != 2 || !strings.Contains(got, "msg=whole") {
		t.Errorf("logged:\n%s", got)
	}
}

// TestPluginLineAttributes: a plugin's line reaches the host's log with
// its numbers as the plugin wrote them (1000000, not 1e+06) and its
// attributes in the order of their keys, the same each time, where
// go-plugin hands them over as a map.
func TestPluginLineAttributes(t *testing.T) {
	var out bytes.Buffer
	w := &slogWriter{log: slog.New(slog.NewTextHandler(&out, nil))}
	line := `{"@level":"info","@message":"configured","maxNodes":1000000,"maxPDFBytes":52428800,"ratio":0.5,"b":"x","a":true}`
	for range 20 {
		out.Reset()
		if _, err := w.Write([]byte(line)); err != nil {
			t.Fatal(err)
		}
		if want := "msg=configured a=true b=x maxNodes=1000000 maxPDFBytes=52428800 ratio=0.5\n"; !bytes.HasSuffix(out.Bytes(), []byte(want)) {
			t.Fatalf("got %s, want it to end in %s", out.Bytes(), want)
		}
	}
}
