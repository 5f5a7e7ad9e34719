package plugin

import (
	"context"
	"testing"

	"github.com/mdpress/mdpress/sdk/stage"
)

// langStages answers each call with the lang it was sent.
type langStages struct{ fakeStages }

func (l *langStages) Style(_ context.Context, req *stage.StyleRequest) (*stage.StyleResponse, error) {
	return &stage.StyleResponse{HTML: req.Lang}, nil
}

func (l *langStages) Render(_ context.Context, req *stage.RenderRequest) (*stage.RenderResponse, error) {
	return &stage.RenderResponse{PDF: []byte(req.Lang)}, nil
}

// The document's language crosses every call that carries it: style,
// render, and render in parts.
func TestLangCrosses(t *testing.T) {
	impl := &langStages{}
	styler, renderer := connect(t, stage.NameStyle, impl), connect(t, stage.NameRender, impl)
	ctx := context.Background()
	styled, err := styler.Style(ctx, &stage.StyleRequest{Lang: "pt-BR"})
	if err != nil {
		t.Fatal(err)
	}
	if styled.HTML != "pt-BR" {
		t.Errorf("style: lang %q, want pt-BR", styled.HTML)
	}
	rendered, err := renderer.Render(ctx, &stage.RenderRequest{Lang: "zh-Hans"})
	if err != nil {
		t.Fatal(err)
	}
	if string(rendered.PDF) != "zh-Hans" {
		t.Errorf("render: lang %q, want zh-Hans", rendered.PDF)
	}
	parts := &sliceParts{parts: []stage.Part{{Root: &stage.Node{Kind: stage.KindDocument}}}}
	rendered, err = renderer.RenderParts(ctx, &stage.RenderRequest{Lang: "fr"}, parts)
	if err != nil {
		t.Fatal(err)
	}
	if string(rendered.PDF) != "fr" {
		t.Errorf("render in parts: lang %q, want fr", rendered.PDF)
	}
}
