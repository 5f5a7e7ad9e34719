package e2e

import (
	"bytes"
	"compress/zlib"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"hash/crc32"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"

	"github.com/mdpress/mdpress/host/config"
)

// TestRenderOverMemoryIs413: a document that needs more memory to print
// than render-chrome lets a render use reaches the client as the 413 the
// OpenAPI document and the README describe (a limit, not "try again"),
// with the limit named and nothing charged. The 413 was described as a
// body or hosted PDF too large only, so a client reading either had no
// word for this one.
func TestRenderOverMemoryIs413(t *testing.T) {
	if !chromiumAvailable() {
		t.Skip("no Chromium")
	}
	// 500 MB restarts the browser between renders and stops a render at
	// twice that: above an idle browser, below the ~4 GB the bomb takes.
	path := chromeConfig(t, map[string]any{"maxBrowserMemoryMB": 500})
	h := startHost(t, withArgs("--config", path, "--backend", "chrome"))
	a := newAPI(t, h)
	if desc := a.doc.Paths.Find("/pdf/markdown").Post.Responses.Status(413).Value.Description; desc == nil || !strings.Contains(*desc, "memory") {
		t.Error("the served document's 413 does not name the render's memory")
	}

	_, key := h.account("pro", 5)
	resp, body := a.call(t, "POST", "/v1/pdf/markdown", key, map[string]any{
		"markdown": "# Bomb\n\n<img src=\"" + nestedImageBomb() + "\">",
	}, nil)
	if resp.StatusCode != 413 {
		t.Fatalf("status %d, want 413: %s", resp.StatusCode, body)
	}
	var e struct {
		Error   string            `json:"error"`
		Message string            `json:"message"`
		Details map[string]string `json:"details"`
	}
	if err := json.Unmarshal(body, &e); err != nil {
		t.Fatal(err)
	}
	if e.Message != "PayloadTooLarge" || e.Details["limit"] != "1000 MB" || !strings.Contains(e.Error, "memory") {
		t.Errorf("body %s, want PayloadTooLarge naming the memory limit of 1000 MB", body)
	}
	_, info := a.call(t, "GET", "/v1/user/info", key, nil, nil)
	var u struct {
		Subscription struct {
			CurrentCredits int `json:"currentCredits"`
		} `json:"subscription"`
	}
	if err := json.Unmarshal(info, &u); err != nil {
		t.Fatal(err)
	}
	if u.Subscription.CurrentCredits != 5 {
		t.Errorf("credits %d after the refused render, want 5", u.Subscription.CurrentCredits)
	}
}

// chromeConfig writes the embedded default config with
// plugins.render-chrome replaced by block, and returns its path.
func chromeConfig(t *testing.T, block map[string]any) string {
	t.Helper()
	var doc map[string]any
	if err := yaml.Unmarshal(config.Default(), &doc); err != nil {
		t.Fatal(err)
	}
	doc["plugins"].(map[string]any)["render-chrome"] = block
	b, err := yaml.Marshal(doc)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "mdpress.yaml")
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// nestedImageBomb is a 20000x20000 PNG (1.6 GB decoded) inside SVG images
// nested deeper than render-chrome's scan of data: URLs reads, so that
// only the memory watchdog stops it.
func nestedImageBomb() string {
	const side = 20000
	var png bytes.Buffer
	png.WriteString("\x89PNG\r\n\x1a\n")
	chunk := func(typ string, data []byte) {
		_ = binary.Write(&png, binary.BigEndian, uint32(len(data)))
		png.WriteString(typ)
		png.Write(data)
		_ = binary.Write(&png, binary.BigEndian, crc32.ChecksumIEEE(append([]byte(typ), data...)))
	}
	ihdr := binary.BigEndian.AppendUint32(binary.BigEndian.AppendUint32(nil, side), side)
	chunk("IHDR", append(ihdr, 8, 6, 0, 0, 0)) // 8-bit RGBA
	var z bytes.Buffer
	zw := zlib.NewWriter(&z)
	_, _ = zw.Write(make([]byte, 1+4*side))
	_ = zw.Close()
	chunk("IDAT", z.Bytes())
	chunk("IEND", nil)
	uri := "data:image/png;base64," + base64.StdEncoding.EncodeToString(png.Bytes())
	for range 3 {
		svg := `<svg xmlns='http://www.w3.org/2000/svg' width='100' height='100'><image width='100' height='100' href='` + uri + `'/></svg>`
		uri = "data:image/svg+xml;base64," + base64.StdEncoding.EncodeToString([]byte(svg))
	}
	return uri
}
