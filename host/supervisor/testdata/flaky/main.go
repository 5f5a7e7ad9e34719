// Command flaky is a parse plugin for the supervisor's tests: it reports
// unhealthy while the file named by FLAKY_MARKER exists (as a dependency
// that is down, stage.CodeUnavailable, when the file says "unavailable"),
// refuses a config block with a key "bad", and exits FLAKY_EXIT_AFTER (a
// duration) after its Configure when that is set. FLAKY_HEAP_MIB makes it
// hold that much memory from its start, for a kill that takes a while.
// FLAKY_STDOUT is a line it prints on stdout before Serve, FLAKY_PANIC the
// value it panics with before Serve, FLAKY_QUIT an error it logs before it
// exits without serving: a plugin that never handshakes.
package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"strconv"
	"time"

	sdkplugin "github.com/mdpress/mdpress/sdk/plugin"
	"github.com/mdpress/mdpress/sdk/stage"
)

type flaky struct{ marker string }

func (f *flaky) Configure(_ context.Context, req *stage.ConfigureRequest) (*stage.ConfigureResponse, error) {
	if bytes.Contains(req.Config, []byte(`"bad"`)) {
		return nil, stage.Errorf(stage.CodeInvalid, "flaky config: unknown key %q", "bad")
	}
	if d, err := time.ParseDuration(os.Getenv("FLAKY_EXIT_AFTER")); err == nil {
		// Up, configured and healthy, then gone: a plugin that dies of
		// its first moments' work.
		go func() { time.Sleep(d); os.Exit(1) }()
	}
	return &stage.ConfigureResponse{Info: stage.Info{Name: "flaky", Version: "test"}}, nil
}

func (f *flaky) Health(context.Context) error {
	if b, err := os.ReadFile(f.marker); err == nil {
		if string(b) == "unavailable" {
			return stage.Errorf(stage.CodeUnavailable, "flaky: dependency down")
		}
		return errors.New("marker present")
	}
	return nil
}

func (f *flaky) Close() error { return nil }

func (f *flaky) Parse(_ context.Context, req *stage.ParseRequest) (*stage.ParseResponse, error) {
	return &stage.ParseResponse{Document: stage.Document{Title: req.Markdown}}, nil
}

// heap is what FLAKY_HEAP_MIB asks held, written so that it is resident.
var heap [][]byte

func main() {
	if line := os.Getenv("FLAKY_STDOUT"); line != "" {
		fmt.Println(line)
	}
	if v := os.Getenv("FLAKY_PANIC"); v != "" {
		panic(v)
	}
	if v := os.Getenv("FLAKY_QUIT"); v != "" {
		sdkplugin.Logger().Error("cannot start", "err", v)
		os.Exit(1)
	}
	mib, _ := strconv.Atoi(os.Getenv("FLAKY_HEAP_MIB"))
	for range mib {
		b := make([]byte, 1<<20)
		for i := range b {
			b[i] = byte(i)
		}
		heap = append(heap, b)
	}
	sdkplugin.Serve(stage.NameParse, &flaky{marker: os.Getenv("FLAKY_MARKER")})
}
