package e2e

import (
	"net/http"
	"strconv"
	"strings"
	"testing"

	"github.com/mdpress/mdpress/host/config"
)

// TestRateLimitPerPlan: a plan allowing 3 requests a minute lets a key make
// 3 quick conversions and refuses the 4th with 429 and Retry-After, without
// charging it; another account's key is not held back.
func TestRateLimitPerPlan(t *testing.T) {
	cfg := writeConfig(t, func(c *config.Config) {
		c.Plans = append(c.Plans, config.Plan{Name: "metered", MonthlyCredits: 100, RateLimitPerMin: 3})
	})
	h := startHost(t, fpdf(), cfg)
	_, key := h.account("metered", 10)
	_, other := h.account("metered", 10)
	doc := map[string]string{"markdown": "# Limited"}

	for i := range 3 {
		if resp, body := h.post(key, doc); resp.StatusCode != http.StatusOK {
			t.Fatalf("request %d of 3: %d %.200s", i+1, resp.StatusCode, body)
		}
	}
	resp, body := h.post(key, doc)
	if resp.StatusCode != http.StatusTooManyRequests {
		t.Fatalf("4th request: %d, want 429", resp.StatusCode)
	}
	retry, err := strconv.Atoi(resp.Header.Get("Retry-After"))
	// 3 a minute refills one request every 20 s.
	if err != nil || retry <= 0 || retry > 20 {
		t.Fatalf("Retry-After %q: want whole seconds in 1..20", resp.Header.Get("Retry-After"))
	}
	if e := decodeError(t, resp.StatusCode, body); e.Message != "RateLimited" || !strings.Contains(e.Error, "rate limit") {
		t.Fatalf("429 body %s", body)
	}
	if b := h.balance(key); b != 7 {
		t.Fatalf("balance %d, want 7: the refused request must not be charged", b)
	}
	if resp, body := h.post(other, doc); resp.StatusCode != http.StatusOK {
		t.Fatalf("another account's key: %d %.200s", resp.StatusCode, body)
	}
}
