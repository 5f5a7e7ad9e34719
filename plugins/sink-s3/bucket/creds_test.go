package bucket

import (
	"context"
	"net/http"
	"sync/atomic"
	"testing"

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

func TestHealthMissingBucket(t *testing.T) {
	s := configure(t, s3Config(t, map[string]any{"createBucket": false}))
	if err := s.Health(context.Background()); stage.CodeOf(err) != stage.CodeUnavailable {
		t.Fatalf("health of a missing bucket: %v", err)
	}
}
