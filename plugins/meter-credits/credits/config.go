package credits

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"time"

	"github.com/mdpress/mdpress/core/accounts"
	sdkplugin "github.com/mdpress/mdpress/sdk/plugin"
	"github.com/mdpress/mdpress/sdk/stage"
)

// DefaultReleaseInterval is how often reservations left open by a dead host
// are looked for.
const DefaultReleaseInterval = time.Minute

// Config is the plugin's block after defaults.
type Config struct {
	// ReservationTTL is how long a reservation may stay open before it is
	// refunded; it must outlast the slowest render, and be the same on every
	// replica sharing a store (each sweeps by its own, and Reserve tells
	// the host its own as the reservation's hold).
	ReservationTTL time.Duration
	// ReleaseInterval is the pause between sweeps for expired reservations.
	ReleaseInterval time.Duration
}

// rawConfig is the JSON shape. Durations stay raw so that a bad one can be
// reported with its key.
type rawConfig struct {
	ReservationTTL  json.RawMessage `json:"reservationTTL"`
	ReleaseInterval json.RawMessage `json:"releaseInterval"`
}

// parseConfig decodes raw strictly, applies defaults and validates. Errors
// are CodeInvalid and name the key.
func parseConfig(raw []byte) (Config, error) {
	c := Config{ReservationTTL: accounts.DefaultReservationTTL, ReleaseInterval: DefaultReleaseInterval}
	var rc rawConfig
	if raw = bytes.TrimSpace(raw); len(raw) > 0 && string(raw) != "null" {
		dec := json.NewDecoder(bytes.NewReader(raw))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&rc); err != nil {
			return c, stage.Wrap(stage.CodeInvalid, err, "meter-credits config: "+err.Error())
		}
		if _, err := dec.Token(); err != io.EOF {
			return c, stage.Errorf(stage.CodeInvalid, "meter-credits config: trailing data after the object")
		}
	}
	for _, f := range []struct {
		key string
		raw json.RawMessage
		dst *time.Duration
	}{
		{"reservationTTL", rc.ReservationTTL, &c.ReservationTTL},
		{"releaseInterval", rc.ReleaseInterval, &c.ReleaseInterval},
	} {
		if len(f.raw) == 0 || string(f.raw) == "null" {
			continue
		}
		d, err := sdkplugin.ParseDuration(f.raw)
		if err != nil {
			return c, stage.Wrap(stage.CodeInvalid, err,
				fmt.Sprintf("meter-credits config: %s: want a duration such as \"10m\" or a number of seconds", f.key))
		}
		if d <= 0 {
			return c, stage.Errorf(stage.CodeInvalid, "meter-credits config: %s: must be positive", f.key)
		}
		*f.dst = d
	}
	return c, nil
}
