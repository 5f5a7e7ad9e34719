package e2e

import (
	"strconv"
	"strings"
	"testing"

	"github.com/mdpress/mdpress/host/config"
)

// TestAdmissionQueueFull: with one conversion at a time and one waiting,
// a burst gets 429 with Retry-After for the rest, nothing is charged for
// them, and every admitted request gets its PDF.
func TestAdmissionQueueFull(t *testing.T) {
	h := startHost(t, fpdf(), writeConfig(t, func(c *config.Config) {
		c.Server.MaxConcurrent, c.Server.Queue = 1, 1
	}))
	_, key := h.account("pro", 100)
	heavy := map[string]string{"markdown": strings.Repeat("## Heading\n\nA paragraph of text that takes some laying out.\n\n", 1500)}
	outs := burst([]*host{h}, key, 8, func(int) any { return heavy }, nil)
	got := statuses(outs)
	if got[200] < 2 || got[429] < 1 || got[200]+got[429] != 8 {
		t.Fatalf("statuses %v: want some 200 (admitted and queued) and the rest 429", got)
	}
	for _, o := range outs {
		switch o.status {
		case 429:
			if ra, err := strconv.Atoi(o.header.Get("Retry-After")); err != nil || ra < 1 {
				t.Errorf("429 without a Retry-After in seconds: %q", o.header.Get("Retry-After"))
			}
			decodeError(t, o.status, o.body)
		case 200:
			if !isPDF(o.body) {
				t.Error("200 without a PDF")
			}
		}
	}
	if bal := h.balance(key); bal != int64(100-got[200]) {
		t.Fatalf("balance %d, want %d: only delivered PDFs are charged", bal, 100-got[200])
	}
}
