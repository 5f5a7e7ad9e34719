package chrome

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"runtime"
	"strings"
	"time"

	"github.com/mdpress/mdpress/sdk/stage"
)

// Config is the plugin's block of the host configuration.
type Config struct {
	// ChromePath is the browser binary; empty finds one.
	ChromePath string `json:"chromePath"`
	// Tabs is how many documents render at once, one reused tab each.
	Tabs int `json:"tabs"`
	// Queue is how many renders may wait for a tab before Render answers busy.
	Queue int `json:"queue"`
	// RenderTimeout bounds one render; a shorter request deadline wins.
	RenderTimeout Duration `json:"renderTimeout"`
	// RecycleAfter replaces a tab after this many renders.
	RecycleAfter int `json:"recycleAfter"`
	// MaxBrowserMemoryMB restarts the browser when its processes' resident
	// anonymous and shared memory (file pages left out) passes it, checked before and after renders (at most every
	// 2 s). Default 1536; a browser idles at ~200 MB, and hostile documents
	// have held gigabytes that would otherwise stay until the next restart.
	MaxBrowserMemoryMB int `json:"maxBrowserMemoryMB"`
	// MaxRenderMemoryMB stops the render that grew the browser past it
	// while renders run (sampled every 150 ms; 413 for that document),
	// and kills the browser if that is not enough (the renders beside it
	// are printed again, once, on a new one). It catches what grows a
	// browser by gigabytes within one render, which the checks of
	// maxBrowserMemoryMB see only afterwards.
	// Default twice maxBrowserMemoryMB: above the bound a browser is
	// restarted at, so that the renders of a browser merely grown over
	// time are not failed for it.
	MaxRenderMemoryMB int `json:"maxRenderMemoryMB"`
	// JavaScript lets documents run scripts.
	JavaScript bool `json:"javascript"`
	// NoSandbox starts Chromium without its sandbox, as it always is when
	// the plugin runs as root. The sandbox needs user namespaces, which a
	// container under its runtime's default seccomp profile (Docker's,
	// Kubernetes' RuntimeDefault) may not create: there Chromium refuses
	// to start ("No usable sandbox!") unless this is set, and the
	// container's own confinement is what holds the browser.
	NoSandbox bool `json:"noSandbox"`
	// AllowRemote lets documents load http(s) resources from public
	// addresses, fetched by the plugin.
	AllowRemote bool `json:"allowRemote"`
	// RemoteMaxBytes caps one remote resource.
	RemoteMaxBytes int64 `json:"remoteMaxBytes"`
	// RemoteTimeout bounds one remote fetch, redirects included.
	RemoteTimeout Duration `json:"remoteTimeout"`
	// MaxPages refuses documents that print to more pages (413), as
	// render-fpdf does. Chromium is asked for one page past it and no more,
	// so a document that lays out to a million pages costs its layout but
	// not the printing of them.
	MaxPages int `json:"maxPages"`
	// MaxPDFBytes refuses documents whose PDF is larger (413). The printed
	// PDF is read from the browser in chunks and dropped once past it, so
	// neither this plugin nor the host holds more. Default 100 MiB: a few
	// hundred bytes of CSS that Chromium rasterises on every page print
	// to 30 MB a page.
	MaxPDFBytes int64 `json:"maxPDFBytes"`
}

// Duration reads a Go duration string ("60s") or a number of seconds.
type Duration time.Duration

// UnmarshalJSON accepts "1m30s" or 90.
func (d *Duration) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err == nil {
		v, err := time.ParseDuration(s)
		if err != nil {
			return err
		}
		*d = Duration(v)
		return nil
	}
	var secs float64
	if err := json.Unmarshal(b, &secs); err != nil {
		return errors.New("want a duration such as \"30s\" or a number of seconds")
	}
	*d = Duration(secs * float64(time.Second))
	return nil
}

func (d Duration) MarshalJSON() ([]byte, error) { return json.Marshal(time.Duration(d).String()) }

// Defaults.
const (
	defaultQueue          = 128
	defaultRenderTimeout  = 60 * time.Second
	defaultRecycleAfter   = 500
	defaultRemoteMaxBytes = 10 << 20
	defaultRemoteTimeout  = 10 * time.Second
	defaultMaxPages       = 10000
	defaultMaxBrowserMB   = 1536
	defaultMaxPDFBytes    = 100 << 20
)

// ParseConfig decodes raw strictly, applies defaults and validates. Errors
// are stage.CodeInvalid and name the key.
func ParseConfig(raw []byte) (Config, error) {
	var c Config
	if len(bytes.TrimSpace(raw)) > 0 && string(bytes.TrimSpace(raw)) != "null" {
		dec := json.NewDecoder(bytes.NewReader(raw))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&c); err != nil {
			return Config{}, configError(raw, err)
		}
		if _, err := dec.Token(); err != io.EOF {
			return Config{}, stage.Errorf(stage.CodeInvalid, "render-chrome config: trailing data after the object")
		}
	}
	if c.Tabs == 0 {
		c.Tabs = runtime.NumCPU()
	}
	if c.Queue == 0 {
		c.Queue = defaultQueue
	}
	if c.MaxBrowserMemoryMB == 0 {
		c.MaxBrowserMemoryMB = defaultMaxBrowserMB
	}
	if c.MaxRenderMemoryMB == 0 {
		c.MaxRenderMemoryMB = 2 * c.MaxBrowserMemoryMB
	}
	if c.RenderTimeout == 0 {
		c.RenderTimeout = Duration(defaultRenderTimeout)
	}
	if c.RecycleAfter == 0 {
		c.RecycleAfter = defaultRecycleAfter
	}
	if c.RemoteMaxBytes == 0 {
		c.RemoteMaxBytes = defaultRemoteMaxBytes
	}
	if c.RemoteTimeout == 0 {
		c.RemoteTimeout = Duration(defaultRemoteTimeout)
	}
	if c.MaxPages == 0 {
		c.MaxPages = defaultMaxPages
	}
	if c.MaxPDFBytes == 0 {
		c.MaxPDFBytes = defaultMaxPDFBytes
	}
	checks := []struct {
		bad bool
		key string
		why string
	}{
		{c.Tabs < 1 || c.Tabs > 64, "tabs", "must be between 1 and 64"},
		{c.Queue < 1, "queue", "must be at least 1"},
		{c.RenderTimeout < 0, "renderTimeout", "must be positive"},
		{c.RecycleAfter < 1, "recycleAfter", "must be at least 1"},
		{c.MaxBrowserMemoryMB < 0, "maxBrowserMemoryMB", "must not be negative"},
		{c.MaxRenderMemoryMB < 0, "maxRenderMemoryMB", "must not be negative"},
		{c.RemoteMaxBytes < 1, "remoteMaxBytes", "must be positive"},
		{c.RemoteTimeout < 0, "remoteTimeout", "must be positive"},
		{c.MaxPages < 1, "maxPages", "must be at least 1"},
		{c.MaxPDFBytes < 1, "maxPDFBytes", "must be positive"},
	}
	for _, ch := range checks {
		if ch.bad {
			return Config{}, stage.Errorf(stage.CodeInvalid, "render-chrome config: %s %s", ch.key, ch.why)
		}
	}
	return c, nil
}

// configError turns a decoding error into one that names the key.
func configError(raw []byte, err error) error {
	var typeErr *json.UnmarshalTypeError
	switch {
	case errors.As(err, &typeErr) && typeErr.Field == "":
		return stage.Errorf(stage.CodeInvalid, "render-chrome config: want an object")
	case errors.As(err, &typeErr):
		return stage.Errorf(stage.CodeInvalid, "render-chrome config: %s has the wrong type, want %s", typeErr.Field, typeErr.Type)
	case strings.HasPrefix(err.Error(), "json: unknown field "):
		return stage.Errorf(stage.CodeInvalid, "render-chrome config: unknown key %s", strings.TrimPrefix(err.Error(), "json: unknown field "))
	}
	// A Duration's own error does not know its key; find the key here.
	var fields map[string]json.RawMessage
	if json.Unmarshal(raw, &fields) == nil {
		for _, key := range []string{"renderTimeout", "remoteTimeout"} {
			var d Duration
			if v, ok := fields[key]; ok && d.UnmarshalJSON(v) != nil {
				return stage.Errorf(stage.CodeInvalid, "render-chrome config: %s must be a duration such as \"30s\"", key)
			}
		}
	}
	return &stage.Error{Code: stage.CodeInvalid, Message: "render-chrome config: " + err.Error(), Err: err}
}
