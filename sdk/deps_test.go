package sdk_test

import (
	"os"
	"os/exec"
	"strings"
	"testing"
)

// TestDependencies keeps the SDK light for plugin authors: its direct
// requirements are the plugin transport and nothing heavier.
func TestDependencies(t *testing.T) {
	cmd := exec.Command("go", "list", "-m", "-f", "{{if not .Indirect}}{{.Path}}{{end}}", "all")
	cmd.Env = append(os.Environ(), "GOWORK=off")
	out, err := cmd.Output()
	if err != nil {
		t.Skipf("go list unavailable: %v", err)
	}
	allowed := map[string]bool{
		"github.com/mdpress/mdpress/sdk":            true,
		"github.com/hashicorp/go-plugin":            true,
		"github.com/hashicorp/go-hclog":             true, // go-plugin's logger type, in its ClientConfig
		"google.golang.org/grpc":                    true,
		"google.golang.org/protobuf":                true,
		"google.golang.org/genproto/googleapis/rpc": true,
	}
	for _, m := range strings.Fields(string(out)) {
		if !allowed[m] {
			t.Errorf("sdk requires %s directly; the SDK must stay light", m)
		}
	}
}
