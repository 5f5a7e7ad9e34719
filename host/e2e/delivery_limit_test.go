package e2e

import (
	"encoding/json"
	"io/fs"
	"net/http"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// TestDeliveryHostedLimit: a PDF over the hosted-file limit is refused
// with 413 before anything is stored or charged, and the same document
// still converts with output=binary, which the limit does not bind.
func TestDeliveryHostedLimit(t *testing.T) {
	const limit = 60000
	doc := corpus(t, "medium.md")
	h := startHost(t, withArgs("--backend", "fpdf"), withEnv("MDPRESS_MAX_HOSTED_BYTES="+strconv.Itoa(limit)))
	_, key := h.account("free", 5)

	resp, body := h.post(key, map[string]string{"markdown": doc, "output": "url"})
	if resp.StatusCode != http.StatusRequestEntityTooLarge {
		t.Fatalf("output=url over the limit: %d %s, want 413", resp.StatusCode, body)
	}
	var e struct {
		Error string `json:"error"`
		Size  string `json:"size"`
	}
	if err := json.Unmarshal(body, &e); err != nil || e.Error == "" {
		t.Fatalf("413 body %s: want the error body", body)
	}
	if c := deliveryCredits(t, h, key); c != 5 {
		t.Errorf("balance %d after a refused output=url, want 5 (nothing charged)", c)
	}
	if files := storedFiles(t, h.DataDir); len(files) != 0 {
		t.Errorf("a refused output=url left files in the sink: %v", files)
	}

	resp, pdf := h.post(key, map[string]string{"markdown": doc, "output": "binary"})
	if resp.StatusCode != http.StatusOK || len(pdf) <= limit {
		t.Fatalf("output=binary: %d, %d bytes; want 200 and a PDF over %d bytes", resp.StatusCode, len(pdf), limit)
	}
	if c := deliveryCredits(t, h, key); c != 4 {
		t.Errorf("balance %d after one binary conversion, want 4", c)
	}

	// size names the file's size and the limit in the same units, e.g.
	// "137.9 kB (limit 60.0 kB)"; the binary PDF is the same document.
	m := regexp.MustCompile(`^([\d.]+) kB \(limit 60\.0 kB\)$`).FindStringSubmatch(e.Size)
	if m == nil {
		t.Fatalf("size %q: want \"<size> kB (limit 60.0 kB)\"", e.Size)
	}
	if kb, _ := strconv.ParseFloat(m[1], 64); kb*1000 < float64(len(pdf))*0.95 || kb*1000 > float64(len(pdf))*1.05 {
		t.Errorf("size %q, but the document's PDF is %d bytes", e.Size, len(pdf))
	}
}

// deliveryCredits returns the account's balance from /v1/user/info.
func deliveryCredits(t *testing.T, h *host, key string) int64 {
	t.Helper()
	resp, body := h.do("GET", "/v1/user/info", key, nil, nil)
	var info struct {
		Subscription struct {
			CurrentCredits *int64 `json:"currentCredits"`
		} `json:"subscription"`
	}
	if resp.StatusCode != http.StatusOK || json.Unmarshal(body, &info) != nil || info.Subscription.CurrentCredits == nil {
		t.Fatalf("user info: %d %s", resp.StatusCode, body)
	}
	return *info.Subscription.CurrentCredits
}

// storedFiles lists what sink-disk holds under the data dir.
func storedFiles(t *testing.T, dataDir string) []string {
	t.Helper()
	var out []string
	err := filepath.WalkDir(filepath.Join(dataDir, "files"), func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() && (strings.HasSuffix(p, ".pdf") || strings.HasSuffix(p, ".json")) {
			out = append(out, p)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}
