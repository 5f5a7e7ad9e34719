package chrome

import (
	"os"
	"reflect"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/mdpress/mdpress/sdk/stage"
)

func TestParseConfigDefaults(t *testing.T) {
	for _, raw := range []string{"", "null", "{}"} {
		c, err := ParseConfig([]byte(raw))
		if err != nil {
			t.Fatalf("ParseConfig(%q): %v", raw, err)
		}
		if c.Tabs != runtime.NumCPU() || c.Queue != 128 || time.Duration(c.RenderTimeout) != 60*time.Second ||
			c.RecycleAfter != 500 || c.JavaScript || c.AllowRemote || c.RemoteMaxBytes != 10<<20 ||
			time.Duration(c.RemoteTimeout) != 10*time.Second || c.MaxPages != 10000 || c.MaxBrowserMemoryMB != 1536 || c.MaxRenderMemoryMB != 3072 ||
			c.MaxPDFBytes != 100<<20 {
			t.Fatalf("ParseConfig(%q) = %+v", raw, c)
		}
	}
}

func TestParseConfigValues(t *testing.T) {
	c, err := ParseConfig([]byte(`{"chromePath":"/x/chromium","tabs":3,"queue":5,"renderTimeout":"2m",
		"recycleAfter":7,"maxBrowserMemoryMB":900,"javascript":true,"allowRemote":true,
		"remoteMaxBytes":1000,"remoteTimeout":3,"maxPages":40,"maxPDFBytes":5000}`))
	if err != nil {
		t.Fatal(err)
	}
	want := Config{ChromePath: "/x/chromium", Tabs: 3, Queue: 5, RenderTimeout: Duration(2 * time.Minute),
		RecycleAfter: 7, MaxBrowserMemoryMB: 900, MaxRenderMemoryMB: 1800, JavaScript: true, AllowRemote: true,
		RemoteMaxBytes: 1000, RemoteTimeout: Duration(3 * time.Second), MaxPages: 40, MaxPDFBytes: 5000}
	if c != want {
		t.Fatalf("got %+v\nwant %+v", c, want)
	}
}

func TestParseConfigErrors(t *testing.T) {
	tests := []struct {
		raw, key string
	}{
		{`{"tab":2}`, "tab"},
		{`{"tabs":"two"}`, "tabs"},
		{`{"tabs":-1}`, "tabs"},
		{`{"tabs":1000}`, "tabs"},
		{`{"queue":-3}`, "queue"},
		{`{"renderTimeout":"soon"}`, "renderTimeout"},
		{`{"remoteTimeout":true}`, "remoteTimeout"},
		{`{"maxPages":-1}`, "maxPages"},
		{`{"renderTimeout":"-1s"}`, "renderTimeout"},
		{`{"recycleAfter":-1}`, "recycleAfter"},
		{`{"maxBrowserMemoryMB":-1}`, "maxBrowserMemoryMB"},
		{`{"maxRenderMemoryMB":-1}`, "maxRenderMemoryMB"},
		{`{"remoteMaxBytes":-5}`, "remoteMaxBytes"},
		{`{"maxPDFBytes":-1}`, "maxPDFBytes"},
		{`{"javascript":"yes"}`, "javascript"},
		{`[1]`, "object"},
		{`{} {}`, "trailing"},
	}
	for _, tt := range tests {
		t.Run(tt.raw, func(t *testing.T) {
			_, err := ParseConfig([]byte(tt.raw))
			if stage.CodeOf(err) != stage.CodeInvalid {
				t.Fatalf("got %v, want CodeInvalid", err)
			}
			if msg := stage.SafeMessage(err); !strings.Contains(msg, tt.key) {
				t.Fatalf("message %q does not name %q", msg, tt.key)
			}
		})
	}
}

// TestReadmeListsEverySetting: the README's settings table is where an
// operator finds a key; a key added to Config must be added there.
func TestReadmeListsEverySetting(t *testing.T) {
	readme, err := os.ReadFile("../README.md")
	if err != nil {
		t.Skipf("README not beside the package: %v", err)
	}
	for f := range reflect.TypeFor[Config]().Fields() {
		key := strings.Split(f.Tag.Get("json"), ",")[0]
		if !strings.Contains(string(readme), "| `"+key+"` |") {
			t.Errorf("plugins/render-chrome/README.md: no row for the setting %s", key)
		}
	}
}
