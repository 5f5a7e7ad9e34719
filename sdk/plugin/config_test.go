package plugin

import (
	"encoding/json"
	"testing"
	"time"
)

func TestParseDuration(t *testing.T) {
	for _, tt := range []struct {
		in   string
		want time.Duration
		ok   bool
	}{
		{`"10m"`, 10 * time.Minute, true},
		{`"1h30m"`, 90 * time.Minute, true},
		{`90`, 90 * time.Second, true},
		{`0.5`, 500 * time.Millisecond, true},
		{` "2s" `, 2 * time.Second, true},
		{`"ten minutes"`, 0, false},
		{`true`, 0, false},
		{``, 0, false},
	} {
		got, err := ParseDuration(json.RawMessage(tt.in))
		if (err == nil) != tt.ok || got != tt.want {
			t.Errorf("ParseDuration(%s) = %v, %v", tt.in, got, err)
		}
	}
}
