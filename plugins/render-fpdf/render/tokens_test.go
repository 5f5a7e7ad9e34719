package render

import "github.com/mdpress/mdpress/sdk/stage"

// Two realistic token sets, as the style stage would send them: a sans
// theme with a blue accent and a serif theme in black.
var (
	modernTokens = stage.Tokens{
		Theme: "modern", BodyFont: "sans", HeadingFont: "sans", MonoFont: "mono",
		FontSize: 10.5, LineHeight: 1.5,
		HeadingSizes: [6]float64{24, 18, 15, 13, 11.5, 10.5},
		TextColor:    "#1f2328", HeadingColor: "#0b3d91", LinkColor: "#0969da", MutedColor: "#59636e",
		RuleColor: "#d0d7de", CodeBackground: "#f3f5f8", CodeColor: "#24292f", QuoteBar: "#0969da",
		TableHeaderFill: "#eaf1fb", AccentColor: "#0969da",
		Margins: [4]float64{54, 54, 60, 54}, ParagraphSpacing: 8, HeadingRule: true,
		CodePalette: stage.CodePalette{
			Comment: "#64748b", Keyword: "#7c3aed", String: "#047857", Constant: "#b45309", Entity: "#1d4ed8",
			Tag: "#be123c", Variable: "#c2410c", Inserted: "#15803d", Deleted: "#b91c1c", Heading: "#1d4ed8",
		},
	}
	basicTokens = stage.Tokens{
		Theme: "basic", BodyFont: "serif", HeadingFont: "serif", MonoFont: "mono",
		FontSize: 11, LineHeight: 1.4,
		HeadingSizes: [6]float64{22, 17, 14, 12, 11, 11},
		TextColor:    "#000000", HeadingColor: "#000000", LinkColor: "#000000", MutedColor: "#444444",
		RuleColor: "#000000", CodeBackground: "#f0f0f0", CodeColor: "#000000", QuoteBar: "#888888",
		TableHeaderFill: "#e8e8e8", AccentColor: "#000000",
		Margins: [4]float64{72, 72, 72, 72}, ParagraphSpacing: 9, HeadingRule: false,
		CodePalette: stage.CodePalette{
			Comment: "#59636e", Keyword: "#cf222e", String: "#0a3069", Constant: "#0550ae", Entity: "#6639ba",
			Tag: "#116329", Variable: "#953800", Inserted: "#116329", Deleted: "#82071e", Heading: "#0550ae",
		},
	}
)
