package plugin

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"testing"
)

func TestLoggerFollowsHostLevel(t *testing.T) {
	t.Setenv(LogLevelEnv, "WARN")
	if Logger().Enabled(context.Background(), slog.LevelInfo) {
		t.Fatal("a plugin of a host at warn must not encode info lines")
	}
	t.Setenv(LogLevelEnv, "")
	if !Logger().Enabled(context.Background(), slog.LevelDebug) {
		t.Fatal("outside a host a plugin logs everything")
	}
}

func TestLoggerWritesHCLogShape(t *testing.T) {
	var buf bytes.Buffer
	NewLogger(&buf, slog.LevelDebug).Warn("tab recycled", "renders", 500)
	var line map[string]any
	if err := json.Unmarshal(buf.Bytes(), &line); err != nil {
		t.Fatal(err)
	}
	if line["@level"] != "warn" || line["@message"] != "tab recycled" || line["@timestamp"] == nil || line["renders"] != float64(500) {
		t.Fatalf("line %v", line)
	}
}
