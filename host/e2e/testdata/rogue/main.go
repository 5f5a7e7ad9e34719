// Command rogue is a third-party plugin that answers wrongly, for the e2e
// tests of what the host does with a broken plugin. It serves the stage its
// binary is named for (render-rogue, sink-rogue, auth-rogue); ROGUE_MODE
// says how it fails, ROGUE_METRICS (a comma-separated list) what its
// Metrics call answers.
package main

import (
	"context"
	"errors"
	"fmt"
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
	case "stdio":
		// What a plugin's own prints, or a library's, write once Serve
		// has begun: go-plugin has pointed os.Stderr and os.Stdout at
		// pipes by then. One line is cut in two writes.
		fmt.Fprint(os.Stderr, "rogue: a line on stderr, ")
		fmt.Fprintln(os.Stderr, "written in two parts")
		fmt.Fprintln(os.Stdout, "rogue: a line on stdout")
		return &stage.RenderResponse{PDF: []byte("%PDF-1.4\n%%EOF\n"), Pages: 1}, nil
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

// WriteMetrics answers with one good family, rogue_<stage>_up, plus what
// each ROGUE_METRICS mode adds; "render:huge" is a mode of render-rogue
// only.
func (r *rogue) WriteMetrics(w io.Writer) error {
	st := strings.SplitN(filepath.Base(os.Args[0]), "-", 2)[0]
	fmt.Fprintf(w, "# HELP rogue_%s_up A family that is fine.\n# TYPE rogue_%s_up gauge\nrogue_%s_up 1\n", st, st, st)
	for _, mode := range strings.Split(os.Getenv("ROGUE_METRICS"), ",") {
		if only, m, ok := strings.Cut(mode, ":"); ok {
			if only != st {
				continue
			}
			mode = m
		}
		switch mode {
		case "garbage":
			fmt.Fprint(w, "this is { not the text format\n")
		case "host-name":
			// The host's own family, with a value that would lie.
			fmt.Fprint(w, "# TYPE mdpress_http_requests_total counter\nmdpress_http_requests_total{code=\"200\",route=\"/v1/pdf/markdown\"} 1e+09\n")
		case "host-series":
			// A family of its own whose series is one of the host
			// histogram's.
			fmt.Fprint(w, "# TYPE mdpress_pdf_pages_count gauge\nmdpress_pdf_pages_count 1e+09\n")
		case "shared":
			// The same family in every rogue plugin, typed by stage.
			typ := map[string]string{"render": "counter", "sink": "gauge"}[st]
			fmt.Fprintf(w, "# TYPE rogue_shared %s\nrogue_shared{stage=%q} 1\n", typ, st)
		case "same-series":
			// The same series in every rogue plugin.
			fmt.Fprint(w, "# TYPE rogue_same gauge\nrogue_same 1\n")
		case "dotted-name":
			// A UTF-8 name that a scraper without UTF-8 support reads
			// escaped as the host's family.
			fmt.Fprint(w, "# TYPE \"mdpress.http.requests.total\" counter\n{\"mdpress.http.requests.total\",code=\"200\",route=\"/v1/pdf/markdown\"} 1e+09\n")
		case "bad-utf8":
			fmt.Fprint(w, "# HELP rogue_utf8 bad \xff help\n# TYPE rogue_utf8 gauge\nrogue_utf8 1\n")
		case "huge":
			// A label per document, say: a million series, ~60 MB.
			fmt.Fprint(w, "# TYPE rogue_huge gauge\n")
			for i := range 1_000_000 {
				fmt.Fprintf(w, "rogue_huge{doc=\"%040d\"} 1\n", i)
			}
		case "slow":
			time.Sleep(5 * time.Second)
		case "hang":
			select {}
		}
	}
	return nil
}

func main() {
	name := filepath.Base(os.Args[0])
	sdkplugin.Serve(strings.SplitN(name, "-", 2)[0], &rogue{mode: os.Getenv("ROGUE_MODE")})
}
