package plugin

import (
	"bytes"
	"encoding/json"
	"errors"
	"strconv"
	"time"
)

// ParseDuration reads a duration from a plugin's config block: a Go
// duration string ("10m", "1h30m") or a number of seconds, the two shapes an
// operator is likely to write in the host's YAML.
func ParseDuration(raw json.RawMessage) (time.Duration, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 {
		return 0, errors.New("empty duration")
	}
	if raw[0] == '"' {
		var s string
		if err := json.Unmarshal(raw, &s); err != nil {
			return 0, err
		}
		return time.ParseDuration(s)
	}
	secs, err := strconv.ParseFloat(string(raw), 64)
	if err != nil {
		return 0, errors.New("not a duration string or a number of seconds")
	}
	return time.Duration(secs * float64(time.Second)), nil
}
