package bucket

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/mdpress/mdpress/core/fileid"
	"github.com/mdpress/mdpress/sdk/stage"
)

func TestParseConfig(t *testing.T) {
	defaults := Config{Region: "us-east-1", Bucket: "pdfs", Delivery: DeliveryPresign, PartSize: 8 << 20, SweepInterval: time.Hour}
	with := func(f func(*Config)) Config {
		c := defaults
		f(&c)
		return c
	}
	tests := []struct {
		name    string
		raw     string
		want    Config
		wantErr string // substring of the client-safe message
	}{
		{name: "minimal", raw: `{"bucket": "pdfs"}`, want: defaults},
		{name: "everything", raw: `{"endpoint": "http://127.0.0.1:9000", "region": "eu-west-3", "bucket": "pdfs",
			"prefix": "/hosted", "usePathStyle": true, "accessKeyID": "k", "secretAccessKey": "s", "createBucket": true,
			"delivery": "proxy", "partSizeMB": 16, "sweepInterval": "1h"}`,
			want: Config{Endpoint: "http://127.0.0.1:9000", Region: "eu-west-3", Bucket: "pdfs", Prefix: "hosted/",
				UsePathStyle: true, AccessKeyID: "k", SecretAccessKey: "s", CreateBucket: true, Delivery: DeliveryProxy,
				PartSize: 16 << 20, SweepInterval: time.Hour}},
		{name: "prefix keeps its slash", raw: `{"bucket": "pdfs", "prefix": "a/b/"}`, want: with(func(c *Config) { c.Prefix = "a/b/" })},
		{name: "sweep seconds", raw: `{"bucket": "pdfs", "sweepInterval": 600}`, want: with(func(c *Config) { c.SweepInterval = 10 * time.Minute })},
		{name: "sweep off", raw: `{"bucket": "pdfs", "sweepInterval": 0}`, want: with(func(c *Config) { c.SweepInterval = 0 })},
		{name: "no bucket", raw: `{}`, wantErr: "bucket"},
		{name: "bad bucket", raw: `{"bucket": "My_Bucket"}`, wantErr: "bucket"},
		{name: "unknown key", raw: `{"bucket": "pdfs", "bukket": "x"}`, wantErr: `"bukket"`},
		{name: "wrong type", raw: `{"bucket": "pdfs", "usePathStyle": "yes"}`, wantErr: "usePathStyle"},
		{name: "bad endpoint", raw: `{"bucket": "pdfs", "endpoint": "127.0.0.1:9000"}`, wantErr: "endpoint"},
		{name: "bad delivery", raw: `{"bucket": "pdfs", "delivery": "email"}`, wantErr: "delivery"},
		{name: "part too small", raw: `{"bucket": "pdfs", "partSizeMB": 4}`, wantErr: "partSizeMB"},
		{name: "part too large", raw: `{"bucket": "pdfs", "partSizeMB": 6000}`, wantErr: "partSizeMB"},
		{name: "key without secret", raw: `{"bucket": "pdfs", "accessKeyID": "k"}`, wantErr: "secretAccessKey"},
		{name: "bad sweep", raw: `{"bucket": "pdfs", "sweepInterval": "often"}`, wantErr: "sweepInterval"},
		{name: "negative sweep", raw: `{"bucket": "pdfs", "sweepInterval": "-1m"}`, wantErr: "sweepInterval"},
		{name: "dot-dot prefix", raw: `{"bucket": "pdfs", "prefix": "a/../b"}`, wantErr: "prefix"},
		{name: "trailing data", raw: `{"bucket": "pdfs"} x`, wantErr: "trailing"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := parseConfig([]byte(tt.raw))
			if tt.wantErr != "" {
				if err == nil {
					t.Fatalf("got %+v, want an error naming %s", got, tt.wantErr)
				}
				wantCode(t, err, stage.CodeInvalid)
				if msg := stage.SafeMessage(err); !strings.Contains(msg, tt.wantErr) {
					t.Fatalf("message %q does not name %s", msg, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got != tt.want {
				t.Fatalf("got  %+v\nwant %+v", got, tt.want)
			}
		})
	}
}

func TestLifecycle(t *testing.T) {
	s := New(testLogger(t))
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if err := s.Health(context.Background()); stage.CodeOf(err) != stage.CodeUnavailable {
		t.Fatalf("health before configure: %v", err)
	}
	if _, err := s.Configure(context.Background(), &stage.ConfigureRequest{Config: []byte(`{"bucket": "x"}`)}); err == nil {
		t.Fatal("bad config accepted")
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Store(context.Background(), &stage.StoreRequest{PDF: []byte("x"), TTL: time.Hour}); stage.CodeOf(err) != stage.CodeUnavailable {
		t.Fatalf("store before configure: %v", err)
	}
	if _, err := s.Open(context.Background(), &stage.OpenRequest{ID: fileid.New(), Length: -1}); stage.CodeOf(err) != stage.CodeUnavailable {
		t.Fatalf("open before configure: %v", err)
	}
}

func TestStoreRejects(t *testing.T) {
	s := configured(t, nil)
	for name, req := range map[string]*stage.StoreRequest{
		"empty pdf": {Owner: "u", TTL: time.Hour},
		"zero ttl":  {Owner: "u", PDF: []byte("%PDF"), TTL: 0},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := s.Store(context.Background(), req)
			wantCode(t, err, stage.CodeInvalid)
		})
	}
}
