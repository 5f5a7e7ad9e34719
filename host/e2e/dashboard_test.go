package e2e

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/mdpress/mdpress/host/config"
)

// TestDashboardSignup: the dashboard serves its page, sign-up creates a
// free account whose key (shown once) works, and sign-ups per address are
// bounded; with sign-up off in the config the endpoint is gone.
func TestDashboardSignup(t *testing.T) {
	h := startHost(t, fpdf(), writeConfig(t, func(c *config.Config) { c.Dashboard.SignupsPerHour = 2 }))
	resp, page := h.do("GET", "/", "", nil, nil)
	if resp.StatusCode != 200 || !strings.Contains(string(page), "Playground") {
		t.Fatalf("dashboard: %d", resp.StatusCode)
	}
	resp, body := h.do("POST", "/dashboard/signup", "", nil, nil)
	var acct struct{ UserID, APIKey string }
	if resp.StatusCode != http.StatusCreated || json.Unmarshal(body, &acct) != nil || !strings.HasPrefix(acct.APIKey, "mdp_") {
		t.Fatalf("signup: %d %s", resp.StatusCode, body)
	}
	resp, body = h.do("GET", "/v1/user/info", acct.APIKey, nil, nil)
	if resp.StatusCode != 200 || !strings.Contains(string(body), `"planName":"free"`) {
		t.Fatalf("new key: %d %s", resp.StatusCode, body)
	}
	if strings.Contains(h.logs.String(), acct.APIKey) {
		t.Fatal("the new key reached the log")
	}
	h.do("POST", "/dashboard/signup", "", nil, nil)
	if resp, body := h.do("POST", "/dashboard/signup", "", nil, nil); resp.StatusCode != 429 || resp.Header.Get("Retry-After") == "" {
		t.Fatalf("third sign-up in an hour: %d %s", resp.StatusCode, body)
	}

	off := startHost(t, fpdf(), writeConfig(t, func(c *config.Config) { c.Dashboard.Signup = false }))
	if resp, _ := off.do("POST", "/dashboard/signup", "", nil, nil); resp.StatusCode != 404 && resp.StatusCode != 405 {
		t.Fatalf("sign-up off: %d", resp.StatusCode)
	}
	// The dashboard off takes its sign-up with it, whatever signup says.
	disabled := false
	noDashboard := startHost(t, fpdf(), writeConfig(t, func(c *config.Config) { c.Dashboard.Enabled = &disabled }))
	if resp, _ := noDashboard.do("POST", "/dashboard/signup", "", nil, nil); resp.StatusCode != 404 && resp.StatusCode != 405 {
		t.Fatalf("sign-up with the dashboard off: %d", resp.StatusCode)
	}
}
