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

// docToPB encodes the document's tree from Root, or passes on Encoded when
// only that is set.
func docToPB(d stage.Document) (*pb.Document, error) {
	tree := d.Encoded
	if d.Root != nil {
		var err error
		if tree, err = encodeTree(d.Root); err != nil {
			return nil, err
		}
	}
	out := &pb.Document{Html: d.HTML, Tree: tree, Title: d.Title}
	for _, h := range d.Outline {
		out.Outline = append(out.Outline, &pb.Heading{Level: int32(h.Level), Text: h.Text, Id: h.ID})
	}
	return out, nil
}

// docFromPB decodes the tree into Root, or with relay keeps it encoded.
func docFromPB(d *pb.Document, relay bool) (stage.Document, error) {
	out := stage.Document{HTML: d.GetHtml(), Title: d.GetTitle()}
	if relay {
		out.Encoded = d.GetTree()
	} else {
		var err error
		if out.Root, err = decodeTree(d.GetTree()); err != nil {
			return stage.Document{}, err
		}
	}
	for _, h := range d.GetOutline() {
		out.Outline = append(out.Outline, stage.Heading{Level: int(h.Level), Text: h.Text, ID: h.Id})
	}
	return out, nil
}

func tokensToPB(t stage.Tokens) *pb.Tokens {
	out := &pb.Tokens{
		Theme: t.Theme, BodyFont: t.BodyFont, HeadingFont: t.HeadingFont, MonoFont: t.MonoFont,
		FontSize: t.FontSize, LineHeight: t.LineHeight, HeadingSizes: t.HeadingSizes[:],
		TextColor: t.TextColor, HeadingColor: t.HeadingColor, LinkColor: t.LinkColor,
		MutedColor: t.MutedColor, RuleColor: t.RuleColor, CodeBackground: t.CodeBackground,
		CodeColor: t.CodeColor, QuoteBar: t.QuoteBar, TableHeaderFill: t.TableHeaderFill,
		AccentColor: t.AccentColor, Margins: t.Margins[:], ParagraphSpacing: t.ParagraphSpacing,
		HeadingRule: t.HeadingRule, CodePalette: paletteToPB(t.CodePalette),
		AlertColors: alertsToPB(t.AlertColors),
		CodeIndent:  t.CodeIndent, CodeRule: t.CodeRule, QuoteIndent: t.QuoteIndent, QuoteItalic: t.QuoteItalic,
		QuoteFill: t.QuoteFill, QuotePadding: t.QuotePadding, TableStripe: t.TableStripe,
		LinkPlain: t.LinkPlain, StrikeMuted: t.StrikeMuted, AlertPadding: t.AlertPadding,
		ListItemSpacing: t.ListItemSpacing, CodeSize: t.CodeSize, CodeLineHeight: t.CodeLineHeight,
		HeadingLineHeight: t.HeadingLineHeight, FootnoteSize: t.FootnoteSize,
	}
	if t.CodePadding != ([3]float64{}) {
		out.CodePadding = t.CodePadding[:]
	}
	if t.HeadingSpacing != ([2]float64{}) {
		out.HeadingSpacing = t.HeadingSpacing[:]
	}
	out.HeadingItalic = levelsToPB(t.HeadingItalic)
	out.HeadingRegular = levelsToPB(t.HeadingRegular)
	out.HeadingMuted = levelsToPB(t.HeadingMuted)
	return out
}

// levelsToPB sends a per-level flag only when a level has it, so that
// tokens without it cost nothing on the wire.
func levelsToPB(l [6]bool) []bool {
	if l == ([6]bool{}) {
		return nil
	}
	return l[:]
}

func alertsToPB(a stage.AlertColors) *pb.AlertColors {
	if a == (stage.AlertColors{}) {
		return nil
	}
	return &pb.AlertColors{Note: a.Note, Tip: a.Tip, Important: a.Important, Warning: a.Warning, Caution: a.Caution}
}

func alertsFromPB(a *pb.AlertColors) stage.AlertColors {
	return stage.AlertColors{
		Note: a.GetNote(), Tip: a.GetTip(), Important: a.GetImportant(), Warning: a.GetWarning(), Caution: a.GetCaution(),
	}
}

func paletteToPB(p stage.CodePalette) *pb.CodePalette {
	if p == (stage.CodePalette{}) {
		return nil
	}
	return &pb.CodePalette{
		Comment: p.Comment, Keyword: p.Keyword, StringLiteral: p.String, Constant: p.Constant, Entity: p.Entity,
		Tag: p.Tag, Variable: p.Variable, Inserted: p.Inserted, Deleted: p.Deleted, Heading: p.Heading,
	}
}

func paletteFromPB(p *pb.CodePalette) stage.CodePalette {
	return stage.CodePalette{
		Comment: p.GetComment(), Keyword: p.GetKeyword(), String: p.GetStringLiteral(), Constant: p.GetConstant(), Entity: p.GetEntity(),
		Tag: p.GetTag(), Variable: p.GetVariable(), Inserted: p.GetInserted(), Deleted: p.GetDeleted(), Heading: p.GetHeading(),
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
		CodePalette: paletteFromPB(t.GetCodePalette()),
		AlertColors: alertsFromPB(t.GetAlertColors()),
		CodeIndent:  t.GetCodeIndent(), CodeRule: t.GetCodeRule(), QuoteIndent: t.GetQuoteIndent(), QuoteItalic: t.GetQuoteItalic(),
		QuoteFill: t.GetQuoteFill(), QuotePadding: t.GetQuotePadding(), TableStripe: t.GetTableStripe(),
		LinkPlain: t.GetLinkPlain(), StrikeMuted: t.GetStrikeMuted(), AlertPadding: t.GetAlertPadding(),
		ListItemSpacing: t.GetListItemSpacing(), CodeSize: t.GetCodeSize(), CodeLineHeight: t.GetCodeLineHeight(),
		HeadingLineHeight: t.GetHeadingLineHeight(), FootnoteSize: t.GetFootnoteSize(),
	}
	copy(out.HeadingSizes[:], t.GetHeadingSizes())
	copy(out.CodePadding[:], t.GetCodePadding())
	copy(out.HeadingSpacing[:], t.GetHeadingSpacing())
	copy(out.HeadingItalic[:], t.GetHeadingItalic())
	copy(out.HeadingRegular[:], t.GetHeadingRegular())
	copy(out.HeadingMuted[:], t.GetHeadingMuted())
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
