package disk

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"time"

	sdkplugin "github.com/mdpress/mdpress/sdk/plugin"
	"github.com/mdpress/mdpress/sdk/stage"
)

// DefaultSweepInterval is how often expired files are removed unless the
// config says otherwise.
const DefaultSweepInterval = 10 * time.Minute

// Config is the plugin's config block after defaults.
type Config struct {
	// Dir holds the hosted files; empty means <DataDir>/files.
	Dir string
	// SweepInterval is the pause between sweeps for expired files.
	SweepInterval time.Duration
}

// rawConfig is the JSON shape. Durations stay raw so that a bad one can be
// reported with its key.
type rawConfig struct {
	Dir           string          `json:"dir"`
	SweepInterval json.RawMessage `json:"sweepInterval"`
}

// parseConfig decodes raw strictly, applies defaults and validates. Errors
// are invalid-config errors naming the key.
func parseConfig(raw []byte, dataDir string) (Config, error) {
	var rc rawConfig
	if len(bytes.TrimSpace(raw)) > 0 {
		dec := json.NewDecoder(bytes.NewReader(raw))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&rc); err != nil {
			return Config{}, configError(err)
		}
		if _, err := dec.Token(); err != io.EOF {
			return Config{}, stage.Errorf(stage.CodeInvalid, "sink-disk config: trailing data after the object")
		}
	}
	c := Config{Dir: rc.Dir, SweepInterval: DefaultSweepInterval}
	if c.Dir == "" {
		if dataDir == "" {
			return c, stage.Errorf(stage.CodeInvalid, "sink-disk config: dir: empty and no data directory to default to")
		}
		c.Dir = filepath.Join(dataDir, "files")
	}
	if len(rc.SweepInterval) > 0 && string(rc.SweepInterval) != "null" {
		d, err := sdkplugin.ParseDuration(rc.SweepInterval)
		if err != nil {
			return c, stage.Wrap(stage.CodeInvalid, err, "sink-disk config: sweepInterval: want a duration such as \"10m\" or a number of seconds")
		}
		if d <= 0 {
			return c, stage.Errorf(stage.CodeInvalid, "sink-disk config: sweepInterval: must be positive")
		}
		c.SweepInterval = d
	}
	return c, nil
}

func configError(err error) error {
	var typeErr *json.UnmarshalTypeError
	if errors.As(err, &typeErr) {
		return stage.Wrap(stage.CodeInvalid, err, fmt.Sprintf("sink-disk config: %s: want %s", typeErr.Field, typeErr.Type))
	}
	// An unknown key is named in the decoder's own text.
	return stage.Wrap(stage.CodeInvalid, err, "sink-disk config: "+err.Error())
}
