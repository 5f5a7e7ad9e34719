package e2e

import (
	"encoding/json"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// devKeyRE is the line `make run` prints for the development key.
var devKeyRE = regexp.MustCompile(`export MDPRESS_KEY=(mdp_[A-Za-z0-9_-]+)`)

// TestDevAccount is `make run`'s first start (serve --config
// configs/mdpress.yaml --dev-account): it creates a development account on
// the pro plan and prints its API key once, and the key works; a restart
// on the same data dir creates nothing and prints no key. The environment
// twins MDPRESS_DEV_ACCOUNT and MDPRESS_DEV_PLAN do the same.
func TestDevAccount(t *testing.T) {
	makeRun := withArgs("--config", filepath.Join("..", "..", "configs", "mdpress.yaml"), "--dev-account")
	h := startHost(t, fpdf(), makeRun)
	key := devKey(t, h)
	info := userInfo(t, h, key)
	if info.Subscription.PlanName != "pro" || info.Subscription.CurrentCredits != 5000 {
		t.Fatalf("development account %+v, want the pro plan with its 5000 credits", info)
	}
	if resp, body := h.post(key, map[string]string{"markdown": "# Hi"}); resp.StatusCode != 200 {
		t.Fatalf("a conversion with the printed key: %d %.200s", resp.StatusCode, body)
	}
	h.stop()

	again := startHost(t, fpdf(), makeRun, withDataDir(h.DataDir))
	// The account is made (or found) before the plugins start, so the
	// output says so by the time the host is ready.
	if m := devKeyRE.FindString(again.logs.String()); m != "" {
		t.Fatalf("a restart on the same data dir created another account and printed its key: %s", m)
	}
	if !strings.Contains(again.logs.String(), "1 account(s) exist") {
		t.Fatalf("a restart does not say the account exists:\n%s", tail(again.logs.String(), 40))
	}
	// The command it prints works as printed, from any directory: it
	// named no data dir, and the default ./data is not this host's.
	hint := regexp.MustCompile(`create another key with: bin/mdpress (.*)`).FindStringSubmatch(again.logs.String())
	if hint == nil {
		t.Fatalf("a restart prints no command for another key:\n%s", tail(again.logs.String(), 40))
	}
	keys := exec.Command("sh", "-c", filepath.Join(binDir, "mdpress")+" "+hint[1]+" --json")
	keys.Dir, keys.Env = t.TempDir(), cleanEnv()
	if out, err := keys.CombinedOutput(); err != nil || !strings.Contains(string(out), `"userId":"`+info.UserID+`"`) {
		t.Fatalf("the printed command %q: %v\n%s", hint[1], err, out)
	}
	var list []struct {
		UserID string `json:"userId"`
	}
	if err := json.Unmarshal(again.mdpress("accounts", "list", "--json"), &list); err != nil || len(list) != 1 || list[0].UserID != info.UserID {
		t.Fatalf("accounts after a restart: %+v %v, want only %s", list, err, info.UserID)
	}
	if info := userInfo(t, again, key); info.Subscription.CurrentCredits != 4999 {
		t.Fatalf("the development key after a restart: %+v, want 4999 credits", info)
	}

	twins := startHost(t, fpdf(), withEnv("MDPRESS_DEV_ACCOUNT=true", "MDPRESS_DEV_PLAN=free"))
	if info := userInfo(t, twins, devKey(t, twins)); info.Subscription.PlanName != "free" {
		t.Fatalf("MDPRESS_DEV_PLAN=free made %+v", info)
	}
	// Without either, serve creates nothing.
	plain := startHost(t, fpdf())
	if out := strings.TrimSpace(string(plain.mdpress("accounts", "list", "--json"))); out != "[]" && out != "null" {
		t.Fatalf("serve without --dev-account created accounts: %s", out)
	}
}

// devKey returns the development key h printed, checking it printed one.
func devKey(t *testing.T, h *host) string {
	t.Helper()
	logs := h.logs.String()
	m := devKeyRE.FindAllStringSubmatch(logs, -1)
	if len(m) != 1 {
		t.Fatalf("%d development keys printed, want 1:\n%s", len(m), tail(logs, 40))
	}
	if n := strings.Count(logs, m[0][1]); n != 1 {
		t.Fatalf("the development key appears %d times in the output, want once (shown once)", n)
	}
	return m[0][1]
}

type devInfo struct {
	UserID       string `json:"userId"`
	Subscription struct {
		PlanName       string `json:"planName"`
		CurrentCredits int64  `json:"currentCredits"`
	} `json:"subscription"`
}

func userInfo(t *testing.T, h *host, key string) devInfo {
	t.Helper()
	resp, body := h.do("GET", "/v1/user/info", key, nil, nil)
	var info devInfo
	if resp.StatusCode != 200 || json.Unmarshal(body, &info) != nil {
		t.Fatalf("user info with the development key: %d %s", resp.StatusCode, body)
	}
	return info
}
