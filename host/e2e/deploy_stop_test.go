package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/mdpress/mdpress/host/config"
)

// stopBound is how long `mdpress serve` may take to exit after SIGTERM
// beyond server.shutdownTimeout: the handlers of the requests it then cuts
// get 15 s to refund and return (cmd/mdpress/serve.go), and each plugin
// 5 s to go (the supervisor's killGrace).
const stopBound = 15*time.Second + 5*time.Second

// TestDeployStopGrace: the orchestrators in deploy/ wait for a drain
// before they SIGKILL the host. Compose waits 10 s unless told otherwise,
// so `docker compose stop` killed hosts configured to drain for 60 s
// mid-conversion: clients got reset connections instead of their PDF or
// a 503, and the credits stayed reserved until the meter's sweeper.
func TestDeployStopGrace(t *testing.T) {
	shutdownTimeout := func(path string) time.Duration {
		t.Helper()
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		c, err := config.Parse(b)
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		return c.Server.ShutdownTimeout
	}

	t.Run("compose", func(t *testing.T) {
		b, err := os.ReadFile(filepath.Join(deployDir, "compose.yaml"))
		if err != nil {
			t.Fatal(err)
		}
		var compose struct {
			Services map[string]struct {
				Command         any      `yaml:"command"` // a list, or a string (minio's)
				Volumes         []string `yaml:"volumes"`
				StopGracePeriod string   `yaml:"stop_grace_period"`
			} `yaml:"services"`
		}
		if err := yaml.Unmarshal(b, &compose); err != nil {
			t.Fatal(err)
		}
		hosts := 0
		for name, s := range compose.Services {
			if cmd, _ := s.Command.([]any); len(cmd) == 0 || cmd[0] != "serve" {
				continue
			}
			hosts++
			conf := ""
			for _, v := range s.Volumes {
				if src, _, ok := strings.Cut(v, ":"); ok && strings.HasSuffix(src, ".yaml") {
					conf = filepath.Join(deployDir, src)
				}
			}
			if conf == "" {
				t.Fatalf("%s: no config file mounted (volumes %v)", name, s.Volumes)
			}
			grace := 10 * time.Second // compose's default
			if s.StopGracePeriod != "" {
				if grace, err = time.ParseDuration(s.StopGracePeriod); err != nil {
					t.Fatalf("%s: stop_grace_period: %v", name, err)
				}
			}
			if need := shutdownTimeout(conf) + stopBound; grace < need {
				t.Errorf("%s: stop_grace_period %v, want at least %v (shutdownTimeout of %s and %v)", name, grace, need, filepath.Base(conf), stopBound)
			}
		}
		if hosts == 0 {
			t.Fatal("no mdpress service in compose.yaml")
		}
	})

	t.Run("kubernetes", func(t *testing.T) {
		f, err := os.Open(filepath.Join(deployDir, "kubernetes", "mdpress.yaml"))
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		dec := yaml.NewDecoder(f)
		for {
			var doc struct {
				Kind string `yaml:"kind"`
				Spec struct {
					Template struct {
						Spec struct {
							Grace      int `yaml:"terminationGracePeriodSeconds"`
							Containers []struct {
								Lifecycle struct {
									PreStop struct {
										Exec struct {
											Command []string `yaml:"command"`
										} `yaml:"exec"`
									} `yaml:"preStop"`
								} `yaml:"lifecycle"`
							} `yaml:"containers"`
						} `yaml:"spec"`
					} `yaml:"template"`
				} `yaml:"spec"`
			}
			if err := dec.Decode(&doc); err != nil {
				t.Fatalf("no Deployment in mdpress.yaml: %v", err)
			}
			if doc.Kind != "Deployment" {
				continue
			}
			pod := doc.Spec.Template.Spec
			var preStop time.Duration
			if cmd := pod.Containers[0].Lifecycle.PreStop.Exec.Command; len(cmd) == 2 && cmd[0] == "sleep" {
				if preStop, err = time.ParseDuration(cmd[1] + "s"); err != nil {
					t.Fatal(err)
				}
			}
			// The image runs configs/production.yaml (deploy/Dockerfile).
			need := preStop + shutdownTimeout(filepath.Join("..", "..", "configs", "production.yaml")) + stopBound
			if grace := time.Duration(pod.Grace) * time.Second; grace < need {
				t.Errorf("terminationGracePeriodSeconds %v, want at least %v", grace, need)
			}
			return
		}
	})
}
