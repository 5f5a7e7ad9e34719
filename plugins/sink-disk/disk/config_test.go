package disk

import (
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mdpress/mdpress/sdk/stage"
)

func TestParseConfig(t *testing.T) {
	tests := []struct {
		name    string
		raw     string
		dataDir string
		want    Config
		wantErr string // substring of the client-safe message
	}{
		{name: "empty uses data dir", raw: ``, dataDir: "/data", want: Config{Dir: "/data/files", SweepInterval: 10 * time.Minute}},
		{name: "null", raw: `null`, dataDir: "/data", want: Config{Dir: "/data/files", SweepInterval: 10 * time.Minute}},
		{name: "dir wins", raw: `{"dir": "/srv/pdf"}`, dataDir: "/data", want: Config{Dir: "/srv/pdf", SweepInterval: 10 * time.Minute}},
		{name: "duration string", raw: `{"sweepInterval": "90s"}`, dataDir: "/d", want: Config{Dir: "/d/files", SweepInterval: 90 * time.Second}},
		{name: "duration seconds", raw: `{"sweepInterval": 30}`, dataDir: "/d", want: Config{Dir: "/d/files", SweepInterval: 30 * time.Second}},
		{name: "unknown key", raw: `{"dirr": "/x"}`, dataDir: "/d", wantErr: `"dirr"`},
		{name: "bad duration", raw: `{"sweepInterval": "soon"}`, dataDir: "/d", wantErr: "sweepInterval"},
		{name: "negative duration", raw: `{"sweepInterval": "-1m"}`, dataDir: "/d", wantErr: "sweepInterval"},
		{name: "zero duration", raw: `{"sweepInterval": 0}`, dataDir: "/d", wantErr: "sweepInterval"},
		{name: "wrong type", raw: `{"dir": 5}`, dataDir: "/d", wantErr: "dir"},
		{name: "no dir at all", raw: `{}`, wantErr: "dir"},
		{name: "trailing data", raw: `{} {}`, dataDir: "/d", wantErr: "trailing"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := parseConfig([]byte(tt.raw), tt.dataDir)
			if tt.wantErr != "" {
				if err == nil {
					t.Fatalf("got %+v, want an error mentioning %s", got, tt.wantErr)
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
			tt.want.Dir = filepath.FromSlash(tt.want.Dir)
			if got != tt.want {
				t.Fatalf("got %+v, want %+v", got, tt.want)
			}
		})
	}
}
