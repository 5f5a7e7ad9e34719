package e2e

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/mdpress/mdpress/host/config"
)

// TestSettingPrecedence: for serve, a flag wins over its environment twin,
// which wins over the config file (DESIGN section 6), seen in the hosted
// URLs the host answers with.
func TestSettingPrecedence(t *testing.T) {
	file := writeConfig(t, func(c *config.Config) { c.Server.PublicURL = "http://file.mdpress.test" })
	env := withEnv("MDPRESS_PUBLIC_URL=http://env.mdpress.test")
	flag := withArgs("--public-url", "http://flag.mdpress.test")
	for _, tt := range []struct {
		name string
		opts []hostOpt
		want string
	}{
		{"file", []hostOpt{file}, "http://file.mdpress.test/v1/files/"},
		{"environment over file", []hostOpt{file, env}, "http://env.mdpress.test/v1/files/"},
		{"flag over environment", []hostOpt{file, env, flag}, "http://flag.mdpress.test/v1/files/"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			h := startHost(t, append([]hostOpt{fpdf()}, tt.opts...)...)
			_, key := h.account("pro", 1)
			resp, body := h.post(key, map[string]string{"markdown": "# Where", "output": "url"})
			var out struct{ URL string }
			if resp.StatusCode != 200 || json.Unmarshal(body, &out) != nil || !strings.HasPrefix(out.URL, tt.want) {
				t.Fatalf("hosted URL: %d %s, want one under %s", resp.StatusCode, body, tt.want)
			}
		})
	}
}
