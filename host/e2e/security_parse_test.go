package e2e

import (
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"
)

// TestSecurityParserBombs sends Markdown on which goldmark, unguarded,
// spends gigabytes or minutes. Each must come back as a quick 413 that
// says the document is too complex, with the parse plugin staying small;
// before the parser measured its input, the first took 1.6 GB, the second
// 0.9 GB, the third 10 s and the last 5 s.
func TestSecurityParserBombs(t *testing.T) {
	h := startHost(t, withArgs("--backend", "fpdf"))
	_, key := h.account("pro", 1000)
	var footnotes strings.Builder
	for i := range 20_000 {
		fmt.Fprintf(&footnotes, "x[^%d]", i)
	}
	footnotes.WriteString("\n\n")
	for i := range 20_000 {
		fmt.Fprintf(&footnotes, "[^%d]: n\n", i)
	}
	bombs := []struct{ name, markdown string }{
		{"open brackets", strings.Repeat("[", 4<<20)},
		{"table padded to a wide header", "|" + strings.Repeat("a|", 1000) + "\n|" + strings.Repeat("-|", 1000) + "\n" + strings.Repeat("x\n", 6000)},
		{"link destinations without end", strings.Repeat("[a](", 32<<10)},
		{"footnotes", footnotes.String()},
	}
	parse := h.plugin("parse-goldmark")
	for _, b := range bombs {
		t.Run(b.name, func(t *testing.T) {
			start := time.Now()
			resp, body := h.post(key, map[string]string{"markdown": b.markdown})
			took := time.Since(start)
			var e struct{ Error string }
			_ = json.Unmarshal(body, &e)
			if resp.StatusCode != http.StatusRequestEntityTooLarge || !strings.HasPrefix(e.Error, "document too complex") {
				t.Fatalf("status %d, %.200s; want 413 document too complex", resp.StatusCode, body)
			}
			if took > 5*time.Second {
				t.Errorf("took %s to refuse", took)
			}
			if peak := hwmKB(parse); peak > 300<<10 {
				t.Errorf("parse plugin peaked at %d MiB", peak>>10)
			}
		})
	}
}

// hwmKB reads a process's peak resident set size from /proc, in KiB.
func hwmKB(pid int) int64 {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			var kb int64
			_, _ = fmt.Sscanf(strings.TrimSpace(v), "%d", &kb)
			return kb
		}
	}
	return 0
}
