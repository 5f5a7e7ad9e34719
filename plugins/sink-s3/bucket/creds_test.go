package bucket

import (
	"context"
	"encoding/json"
	"maps"
	"net"
	"net/http"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/mdpress/mdpress/sdk/plugintest/s3test"
	"github.com/mdpress/mdpress/sdk/stage"
)

// countingClient counts the requests the S3 client sends.
type countingClient struct{ n atomic.Int64 }

func (c *countingClient) Do(req *http.Request) (*http.Response, error) {
	c.n.Add(1)
	return http.DefaultClient.Do(req)
}

func TestCredentials(t *testing.T) {
	base := s3Config(t, nil)
	configure(t, base) // creates the bucket
	key, secret := base["accessKeyID"].(string), base["secretAccessKey"].(string)
	envOf := func(vars map[string]string) Option {
		return WithGetenv(func(k string) string { return vars[k] })
	}
	tests := []struct {
		name    string
		cfgKey  string
		cfgSec  string
		env     map[string]string
		healthy bool
	}{
		{"config keys", key, secret, nil, true},
		{"environment keys", "", "", map[string]string{"AWS_ACCESS_KEY_ID": key, "AWS_SECRET_ACCESS_KEY": secret}, true},
		{"environment wins over config", "wrong", "wrong", map[string]string{"AWS_ACCESS_KEY_ID": key, "AWS_SECRET_ACCESS_KEY": secret}, true},
		{"wrong keys fail health", "wrong", "wrong", nil, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := map[string]any{}
			for k, v := range base {
				cfg[k] = v
			}
			cfg["createBucket"] = false
			cfg["accessKeyID"], cfg["secretAccessKey"] = tt.cfgKey, tt.cfgSec
			s := configure(t, cfg, envOf(tt.env))
			err := s.Health(context.Background())
			if tt.healthy && err != nil {
				t.Fatalf("health: %v", err)
			}
			if !tt.healthy && stage.CodeOf(err) != stage.CodeUnavailable {
				t.Fatalf("health with wrong keys: %v, want unavailable", err)
			}
		})
	}
}

// TestHealthSaysWhatToChange: a bucket that does not answer fails
// health, and its message, the line `mdpress serve` exits with, names the
// bucket and the endpoint and says what to change: "bucket unavailable"
// alone left the operator to dig the cause out of the plugin's log.
func TestHealthSaysWhatToChange(t *testing.T) {
	base := s3Config(t, nil)
	configure(t, base) // creates the bucket
	tests := []struct {
		name string
		cfg  map[string]any
		want []string
	}{
		{"missing bucket", map[string]any{"bucket": s3test.Bucket(t) + "-missing"},
			[]string{"-missing", base["endpoint"].(string), "does not exist", "createBucket: true"}},
		{"wrong keys", map[string]any{"accessKeyID": "wrong", "secretAccessKey": "wrong"},
			[]string{base["bucket"].(string), "refused the keys of plugins.sink-s3.accessKeyID"}},
		{"no keys anywhere", map[string]any{"accessKeyID": "", "secretAccessKey": ""},
			[]string{base["bucket"].(string), "set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY"}},
	}
	// The SDK's default chain reads the process's environment and files:
	// with nothing there, and no instance role to ask, it finds no keys.
	t.Setenv("AWS_ACCESS_KEY_ID", "")
	t.Setenv("AWS_SECRET_ACCESS_KEY", "")
	t.Setenv("AWS_PROFILE", "")
	t.Setenv("AWS_SHARED_CREDENTIALS_FILE", filepath.Join(t.TempDir(), "none"))
	t.Setenv("AWS_CONFIG_FILE", filepath.Join(t.TempDir(), "none"))
	t.Setenv("AWS_EC2_METADATA_DISABLED", "true")
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := maps.Clone(base)
			cfg["createBucket"] = false
			maps.Copy(cfg, tt.cfg)
			err := configure(t, cfg).Health(context.Background())
			wantCode(t, err, stage.CodeUnavailable)
			msg := stage.SafeMessage(err)
			for _, w := range tt.want {
				if !strings.Contains(msg, w) {
					t.Errorf("health message %q: want %q in it", msg, w)
				}
			}
		})
	}
}

// TestCreateBucketSaysWhy: with createBucket, a bucket that cannot be made
// stops Configure saying why and what to change, as health does without
// createBucket: keys the server refuses, an endpoint that does not answer,
// or else the server's reason. Keys refused and a closed port gave the
// SDK's error alone, naming neither the keys' source nor the endpoint
// setting.
func TestCreateBucketSaysWhy(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := "http://" + l.Addr().String()
	l.Close()
	tests := []struct {
		name  string
		extra map[string]any
		want  []string
	}{
		{"wrong keys", map[string]any{"accessKeyID": "wrong", "secretAccessKey": "wrong"},
			[]string{"refused the keys of plugins.sink-s3.accessKeyID and secretAccessKey: check them"}},
		{"endpoint not answering", map[string]any{"endpoint": closed},
			[]string{closed, "connection refused", "check plugins.sink-s3.endpoint"}},
		{"wrong region", map[string]any{"region": "eu-west-1"},
			[]string{"sink-s3: cannot create bucket", "CreateBucket", "StatusCode: 400"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := s3Config(t, tt.extra)
			raw, err := json.Marshal(cfg)
			if err != nil {
				t.Fatal(err)
			}
			s := New(testLogger(t), WithGetenv(noEnv))
			defer s.Close()
			_, err = s.Configure(context.Background(), &stage.ConfigureRequest{Config: raw})
			wantCode(t, err, stage.CodeUnavailable)
			msg := stage.SafeMessage(err)
			for _, w := range append([]string{cfg["bucket"].(string), cfg["endpoint"].(string)}, tt.want...) {
				if !strings.Contains(msg, w) {
					t.Errorf("configure message %q: want %q in it", msg, w)
				}
			}
		})
	}
}
