// Command rogue is a third-party plugin that answers wrongly, for the e2e
// tests of what the host does with a broken plugin. It serves the stage its
// binary is named for (render-rogue, sink-rogue, auth-rogue); ROGUE_MODE
// says how it fails.
package main

import (
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	sdkplugin "github.com/mdpress/mdpress/sdk/plugin"
	"github.com/mdpress/mdpress/sdk/stage"
)

type rogue struct{ mode string }

func (r *rogue) Configure(context.Context, *stage.ConfigureRequest) (*stage.ConfigureResponse, error) {
	return &stage.ConfigureResponse{Info: stage.Info{Name: filepath.Base(os.Args[0]), Version: "test"}}, nil
}
func (r *rogue) Health(context.Context) error { return nil }
func (r *rogue) Close() error                 { return nil }

func (r *rogue) Render(_ context.Context, req *stage.RenderRequest) (*stage.RenderResponse, error) {
	switch r.mode {
	case "panic":
		// A bug one document trips: "Boom" panics, "Slow" is in flight
		// meanwhile, anything else renders.
		switch {
		case strings.Contains(req.HTML, "Boom"):
			panic("rogue: a bug tripped")
		case strings.Contains(req.HTML, "Slow"):
			time.Sleep(2 * time.Second)
		}
		return &stage.RenderResponse{PDF: []byte("%PDF-1.4\n%%EOF\n"), Pages: 1}, nil
	case "empty":
		return &stage.RenderResponse{}, nil
	case "long-error":
		return nil, stage.Errorf(stage.CodeInvalid, "%s", strings.Repeat("Z", 1<<20))
	}
	return &stage.RenderResponse{PDF: []byte("this is not a pdf"), Pages: 1}, nil
}

func (r *rogue) Authenticate(context.Context, *stage.AuthenticateRequest) (*stage.AuthenticateResponse, error) {
	return nil, errors.New("rogue: the key store is gone")
}

// slashID is the id of a sink that puts its directory layout in its ids.
const slashID = "usr/2026/11/0123456789abcdef0123456789abcdef"

func (r *rogue) Store(context.Context, *stage.StoreRequest) (*stage.StoreResponse, error) {
	return &stage.StoreResponse{ID: slashID, ExpiresAt: time.Now().Add(7 * 24 * time.Hour)}, nil
}

func (r *rogue) Open(_ context.Context, req *stage.OpenRequest) (*stage.OpenResponse, error) {
	if req.ID != slashID {
		return nil, stage.Errorf(stage.CodeNotFound, "no such file")
	}
	return &stage.OpenResponse{Size: 9, Filename: "a.pdf", ETag: `"a"`, Body: io.NopCloser(strings.NewReader("%PDF-1.4\n"))}, nil
}

func main() {
	name := filepath.Base(os.Args[0])
	sdkplugin.Serve(strings.SplitN(name, "-", 2)[0], &rogue{mode: os.Getenv("ROGUE_MODE")})
}
