package e2e

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/mdpress/mdpress/host/internal/pdfcheck"
)

// TestRecentKeyIsStillChecked: a key that converted a moment ago has its
// next document parsed while the key is checked again (convertEarly), but
// the check still decides: a key revoked in between is refused and charged
// nothing, and a plan changed in between is the plan the PDF is made for.
func TestRecentKeyIsStillChecked(t *testing.T) {
	pdfcheck.Require(t)
	h := startHost(t, fpdf())
	user, _ := h.account("free", 10)
	var k struct{ APIKey, KeyID string }
	if err := json.Unmarshal(h.mdpress("accounts", "keys", "create", user, "--json"), &k); err != nil || k.APIKey == "" {
		t.Fatalf("keys create: %v", err)
	}
	doc := func(i int) map[string]string {
		return map[string]string{"markdown": fmt.Sprintf("# Request %d\n\nSome text.\n", i)}
	}
	marked := func(pdf []byte) bool {
		t.Helper()
		pages := rawPageText(t, pdf)
		return strings.Contains(strings.Join(strings.Fields(strings.Join(pages, " ")), ""), "mdpressfreeplan")
	}
	convert := func(i int, wantMark bool) {
		t.Helper()
		resp, pdf := h.post(k.APIKey, doc(i))
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("request %d: %d %.200s", i, resp.StatusCode, pdf)
		}
		if words := strings.Fields(pdfcheck.Text(t, pdf)); len(words) < 2 || words[1] != fmt.Sprint(i) {
			t.Fatalf("request %d got a PDF reading %q", i, words)
		}
		if got := marked(pdf); got != wantMark {
			t.Fatalf("request %d: watermark %v, want %v", i, got, wantMark)
		}
	}

	convert(1, true)
	convert(2, true) // the key is recent now
	h.mdpress("accounts", "set-plan", user, "pro")
	convert(3, false)
	h.mdpress("accounts", "set-plan", user, "free")
	convert(4, true)

	var sibling struct{ APIKey string }
	if err := json.Unmarshal(h.mdpress("accounts", "keys", "create", user, "--json"), &sibling); err != nil || sibling.APIKey == "" {
		t.Fatalf("keys create: %v", err)
	}
	before := h.balance(sibling.APIKey)
	h.mdpress("accounts", "keys", "revoke", k.KeyID)
	for i := 5; i < 7; i++ {
		resp, body := h.post(k.APIKey, doc(i))
		if resp.StatusCode != http.StatusUnauthorized || !strings.Contains(string(body), "Authorization header") {
			t.Fatalf("revoked key, request %d: %d %.200s", i, resp.StatusCode, body)
		}
	}
	if after := h.balance(sibling.APIKey); after != before {
		t.Fatalf("refused requests moved the balance from %d to %d", before, after)
	}
	// A parse abandoned for the refused key is not a stage failure.
	resp, err := http.Get(h.URL + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	m, _ := io.ReadAll(resp.Body)
	for _, line := range strings.Split(string(m), "\n") {
		if strings.HasPrefix(line, "mdpress_stage_duration_seconds_count") && strings.Contains(line, `stage="parse"`) && !strings.Contains(line, `outcome="ok"`) {
			t.Fatalf("an abandoned parse was counted as a failure: %s", line)
		}
	}
}
