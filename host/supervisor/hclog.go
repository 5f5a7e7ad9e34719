package supervisor

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"

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
		var entry map[string]any
		if err := json.Unmarshal(line, &entry); err != nil {
			w.log.Debug(string(line))
			continue
		}
		msg, _ := entry["@message"].(string)
		lvl, _ := entry["@level"].(string)
		attrs := make([]any, 0, 2*len(entry))
		for k, v := range entry {
			switch k {
			case "@message", "@level", "@timestamp", "@module", "timestamp", "@caller", "plugin":
				continue
			}
			attrs = append(attrs, k, v)
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
