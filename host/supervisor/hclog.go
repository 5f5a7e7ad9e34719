package supervisor

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"slices"
	"sync"
	"time"

	"github.com/hashicorp/go-hclog"
)

// newHCLogger gives go-plugin a logger whose output lands in the host's
// slog logger at the plugin's own level. go-plugin re-emits each plugin
// stderr line through it, so plugin logs keep their levels and attributes,
// but for "plugin": log names the plugin already, and slog would write the
// key twice. go-plugin's own lines about the process give the binary's
// path under it, which the name and the plugin directory say.
func newHCLogger(log *slog.Logger) hclog.Logger {
	return hclog.New(&hclog.LoggerOptions{
		Name:       "plugin",
		Level:      hclog.Debug,
		JSONFormat: true,
		Output:     &slogWriter{log: log},
	})
}

type slogWriter struct{ log *slog.Logger }

func (w *slogWriter) Write(p []byte) (int, error) {
	for _, line := range bytes.Split(bytes.TrimSpace(p), []byte("\n")) {
		// Numbers as written: as float64, a text log showed a plugin's
		// maxNodes=1000000 as 1e+06 and its byte bounds as 5.24288e+07.
		var entry map[string]any
		dec := json.NewDecoder(bytes.NewReader(line))
		dec.UseNumber()
		if err := dec.Decode(&entry); err != nil {
			w.log.Debug(string(line))
			continue
		}
		msg, _ := entry["@message"].(string)
		lvl, _ := entry["@level"].(string)
		// In the order of their keys: go-plugin hands a line's attributes
		// over as a map, and the same line came out in another order each
		// time, which neither a reader nor a grep follows.
		keys := make([]string, 0, len(entry))
		for k := range entry {
			switch k {
			case "@message", "@level", "@timestamp", "@module", "timestamp", "@caller", "plugin":
				continue
			}
			keys = append(keys, k)
		}
		slices.Sort(keys)
		attrs := make([]any, 0, 2*len(keys))
		for _, k := range keys {
			attrs = append(attrs, k, entry[k])
		}
		w.log.Log(context.Background(), level(lvl), msg, attrs...)
	}
	return len(p), nil
}

func level(s string) slog.Level {
	switch s {
	case "trace", "debug":
		return slog.LevelDebug
	case "warn":
		return slog.LevelWarn
	case "error":
		return slog.LevelError
	default:
		return slog.LevelInfo
	}
}

var _ io.Writer = (*slogWriter)(nil)

// maxStdioLine bounds the part of a line a stdioWriter holds while it waits
// for the line's end; past it, what it holds is logged as a line.
const maxStdioLine = 64 << 10

// stdioWriter logs what a plugin writes to os.Stdout or os.Stderr once
// Serve has begun: go-plugin's Serve points them at pipes whose bytes it
// streams to the host in chunks, and the host dropped them, so a plugin's
// fmt.Fprintln(os.Stderr, ...) or a library writing there was lost even at
// debug level, while a line written before Serve was logged. Chunks are
// cut anywhere: it logs whole lines, as slogWriter reads them (a JSON
// line at its own level, any other at debug).
//
// A line without its end ("50%" before a carriage return, the last words
// of a plugin that exits) is logged once nothing more has come for
// stdioIdle: go-plugin says nothing when a plugin's stream ends, and the
// line was lost with the process.
type stdioWriter struct {
	mu      sync.Mutex
	out     *slogWriter
	partial []byte
	idle    *time.Timer // armed while partial holds a line's start
}

// stdioIdle is how long a line's start waits for its end.
const stdioIdle = time.Second

func newStdioWriter(log *slog.Logger) *stdioWriter { return &stdioWriter{out: &slogWriter{log: log}} }

func (w *stdioWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	n := len(p)
	for len(p) > 0 {
		i := bytes.IndexByte(p, '\n')
		if i < 0 {
			w.partial = append(w.partial, p...)
			if len(w.partial) >= maxStdioLine {
				w.flush()
			}
			break
		}
		w.partial = append(w.partial, p[:i]...)
		w.flush()
		p = p[i+1:]
	}
	switch {
	case len(w.partial) == 0:
		if w.idle != nil {
			w.idle.Stop()
		}
	case w.idle == nil:
		w.idle = time.AfterFunc(stdioIdle, w.flushIdle)
	default:
		w.idle.Reset(stdioIdle)
	}
	return n, nil
}

func (w *stdioWriter) flushIdle() {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.flush()
}

func (w *stdioWriter) flush() {
	if len(bytes.TrimSpace(w.partial)) > 0 {
		_, _ = w.out.Write(w.partial)
	}
	w.partial = w.partial[:0]
}
