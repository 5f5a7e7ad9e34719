package plugin

import (
	"time"

	"google.golang.org/protobuf/types/known/timestamppb"

	"github.com/mdpress/mdpress/sdk/internal/pb"
	"github.com/mdpress/mdpress/sdk/stage"
)

func pageToPB(p stage.PageSize) *pb.PageSize {
	return &pb.PageSize{Name: p.Name, WidthPt: p.WidthPt, HeightPt: p.HeightPt}
}

func pageFromPB(p *pb.PageSize) stage.PageSize {
	return stage.PageSize{Name: p.GetName(), WidthPt: p.GetWidthPt(), HeightPt: p.GetHeightPt()}
}

func planToPB(p stage.Plan) *pb.Plan {
	return &pb.Plan{Name: p.Name, MonthlyCredits: p.MonthlyCredits, Watermark: p.Watermark,
		RetentionDays: p.RetentionDays, RateLimitPerMin: p.RateLimitPerMin}
}

func planFromPB(p *pb.Plan) stage.Plan {
	return stage.Plan{Name: p.GetName(), MonthlyCredits: p.GetMonthlyCredits(), Watermark: p.GetWatermark(),
		RetentionDays: p.GetRetentionDays(), RateLimitPerMin: p.GetRateLimitPerMin()}
}

func nodeToPB(n *stage.Node) *pb.Node {
	if n == nil {
		return nil
	}
	out := &pb.Node{Kind: string(n.Kind), Text: n.Text, Attrs: n.Attrs}
	if len(n.Children) > 0 {
		out.Children = make([]*pb.Node, len(n.Children))
		for i, c := range n.Children {
			out.Children[i] = nodeToPB(c)
		}
	}
	return out
}

func nodeFromPB(n *pb.Node) *stage.Node {
	if n == nil {
		return nil
	}
	out := &stage.Node{Kind: stage.Kind(n.Kind), Text: n.Text, Attrs: n.Attrs}
	if len(n.Children) > 0 {
		out.Children = make([]*stage.Node, len(n.Children))
		for i, c := range n.Children {
			out.Children[i] = nodeFromPB(c)
		}
	}
	return out
}

func docToPB(d stage.Document) *pb.Document {
	out := &pb.Document{Html: d.HTML, Root: nodeToPB(d.Root), Title: d.Title}
	for _, h := range d.Outline {
		out.Outline = append(out.Outline, &pb.Heading{Level: int32(h.Level), Text: h.Text, Id: h.ID})
	}
	return out
}

func docFromPB(d *pb.Document) stage.Document {
	out := stage.Document{HTML: d.GetHtml(), Root: nodeFromPB(d.GetRoot()), Title: d.GetTitle()}
	for _, h := range d.GetOutline() {
		out.Outline = append(out.Outline, stage.Heading{Level: int(h.Level), Text: h.Text, ID: h.Id})
	}
	return out
}

func tokensToPB(t stage.Tokens) *pb.Tokens {
	return &pb.Tokens{
		Theme: t.Theme, BodyFont: t.BodyFont, HeadingFont: t.HeadingFont, MonoFont: t.MonoFont,
		FontSize: t.FontSize, LineHeight: t.LineHeight, HeadingSizes: t.HeadingSizes[:],
		TextColor: t.TextColor, HeadingColor: t.HeadingColor, LinkColor: t.LinkColor,
		MutedColor: t.MutedColor, RuleColor: t.RuleColor, CodeBackground: t.CodeBackground,
		CodeColor: t.CodeColor, QuoteBar: t.QuoteBar, TableHeaderFill: t.TableHeaderFill,
		AccentColor: t.AccentColor, Margins: t.Margins[:], ParagraphSpacing: t.ParagraphSpacing,
		HeadingRule: t.HeadingRule,
	}
}

func tokensFromPB(t *pb.Tokens) stage.Tokens {
	out := stage.Tokens{
		Theme: t.GetTheme(), BodyFont: t.GetBodyFont(), HeadingFont: t.GetHeadingFont(), MonoFont: t.GetMonoFont(),
		FontSize: t.GetFontSize(), LineHeight: t.GetLineHeight(),
		TextColor: t.GetTextColor(), HeadingColor: t.GetHeadingColor(), LinkColor: t.GetLinkColor(),
		MutedColor: t.GetMutedColor(), RuleColor: t.GetRuleColor(), CodeBackground: t.GetCodeBackground(),
		CodeColor: t.GetCodeColor(), QuoteBar: t.GetQuoteBar(), TableHeaderFill: t.GetTableHeaderFill(),
		AccentColor: t.GetAccentColor(), ParagraphSpacing: t.GetParagraphSpacing(), HeadingRule: t.GetHeadingRule(),
	}
	copy(out.HeadingSizes[:], t.GetHeadingSizes())
	copy(out.Margins[:], t.GetMargins())
	return out
}

func timeToPB(t time.Time) *timestamppb.Timestamp {
	if t.IsZero() {
		return nil
	}
	return timestamppb.New(t)
}

func timeFromPB(t *timestamppb.Timestamp) time.Time {
	if t == nil {
		return time.Time{}
	}
	return t.AsTime()
}
