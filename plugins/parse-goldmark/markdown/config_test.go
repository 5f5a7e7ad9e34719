package markdown

import (
	"errors"
	"strings"
	"testing"

	"github.com/mdpress/mdpress/sdk/stage"
)

func TestParseConfig(t *testing.T) {
	tests := []struct {
		name    string
		raw     string
		want    Config
		wantErr string // a part of the message; "" for success
	}{
		{name: "empty", raw: "", want: DefaultConfig()},
		{name: "null", raw: "null", want: DefaultConfig()},
		{name: "empty object", raw: "{}", want: DefaultConfig()},
		{name: "depth", raw: `{"maxDepth": 32}`, want: Config{MaxDepth: 32, MaxNodes: DefaultMaxNodes}},
		{name: "both", raw: `{"maxDepth": 100, "maxNodes": 5000}`, want: Config{MaxDepth: 100, MaxNodes: 5000}},
		{name: "unknown key", raw: `{"maxDepht": 32}`, wantErr: `unknown key "maxDepht"`},
		{name: "wrong type", raw: `{"maxDepth": "deep"}`, wantErr: "key maxDepth must be a int"},
		{name: "depth too small", raw: `{"maxDepth": 4}`, wantErr: "maxDepth must be between 16 and 1000"},
		{name: "depth too large", raw: `{"maxDepth": 100000}`, wantErr: "maxDepth must be between"},
		{name: "nodes too small", raw: `{"maxNodes": 10}`, wantErr: "maxNodes must be between"},
		{name: "not an object", raw: `[1]`, wantErr: "must be a JSON object"},
		{name: "broken JSON", raw: `{"maxDepth":`, wantErr: "invalid JSON"},
		{name: "trailing data", raw: `{} {}`, wantErr: "trailing data"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseConfig([]byte(tt.raw))
			if tt.wantErr == "" {
				if err != nil {
					t.Fatalf("ParseConfig(%q): %v", tt.raw, err)
				}
				if got != tt.want {
					t.Fatalf("ParseConfig(%q) = %+v, want %+v", tt.raw, got, tt.want)
				}
				return
			}
			var se *stage.Error
			if !errors.As(err, &se) || se.Code != stage.CodeInvalid {
				t.Fatalf("ParseConfig(%q) error = %v, want a CodeInvalid *stage.Error", tt.raw, err)
			}
			if !strings.Contains(se.Message, tt.wantErr) {
				t.Fatalf("ParseConfig(%q) message = %q, want it to contain %q", tt.raw, se.Message, tt.wantErr)
			}
		})
	}
}

func TestConfigureLifecycle(t *testing.T) {
	p := New(nil)
	if _, err := p.Configure(t.Context(), &stage.ConfigureRequest{Config: []byte(`{"bogus": 1}`)}); err == nil {
		t.Fatal("Configure accepted an unknown key")
	}
	if err := p.Close(); err != nil {
		t.Fatalf("Close after a failed Configure: %v", err)
	}
	res, err := p.Configure(t.Context(), &stage.ConfigureRequest{Config: []byte(`{"maxDepth": 20}`)})
	if err != nil {
		t.Fatal(err)
	}
	if res.Info.Name != Name || res.Info.Version == "" {
		t.Fatalf("Info = %+v", res.Info)
	}
	if got := p.cfg.Load().MaxDepth; got != 20 {
		t.Fatalf("maxDepth after Configure = %d, want 20", got)
	}
	if err := p.Health(t.Context()); err != nil {
		t.Fatal(err)
	}
	for range 2 {
		if err := p.Close(); err != nil {
			t.Fatalf("Close: %v", err)
		}
	}
}
