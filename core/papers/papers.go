// Package papers is the one table of page sizes that the request decoder,
// both render backends and the tests read.
package papers

import (
	"slices"
	"strings"

	"github.com/mdpress/mdpress/sdk/stage"
)

const mm = 72 / 25.4 // points per millimetre

// table holds the sizes in PostScript points. ISO 216 sizes are defined in
// whole millimetres; Ledger is landscape by definition; Executive is the
// PostScript 7.25x10.5 in; Folio is 210x330 mm.
var table = []stage.PageSize{
	{Name: "A0", WidthPt: 841 * mm, HeightPt: 1189 * mm},
	{Name: "A1", WidthPt: 594 * mm, HeightPt: 841 * mm},
	{Name: "A2", WidthPt: 420 * mm, HeightPt: 594 * mm},
	{Name: "A3", WidthPt: 297 * mm, HeightPt: 420 * mm},
	{Name: "A4", WidthPt: 210 * mm, HeightPt: 297 * mm},
	{Name: "A5", WidthPt: 148 * mm, HeightPt: 210 * mm},
	{Name: "A6", WidthPt: 105 * mm, HeightPt: 148 * mm},
	{Name: "A7", WidthPt: 74 * mm, HeightPt: 105 * mm},
	{Name: "A8", WidthPt: 52 * mm, HeightPt: 74 * mm},
	{Name: "A9", WidthPt: 37 * mm, HeightPt: 52 * mm},
	{Name: "B1", WidthPt: 707 * mm, HeightPt: 1000 * mm},
	{Name: "B2", WidthPt: 500 * mm, HeightPt: 707 * mm},
	{Name: "B3", WidthPt: 353 * mm, HeightPt: 500 * mm},
	{Name: "B4", WidthPt: 250 * mm, HeightPt: 353 * mm},
	{Name: "B5", WidthPt: 176 * mm, HeightPt: 250 * mm},
	{Name: "B6", WidthPt: 125 * mm, HeightPt: 176 * mm},
	{Name: "Letter", WidthPt: 612, HeightPt: 792},
	{Name: "Legal", WidthPt: 612, HeightPt: 1008},
	{Name: "Ledger", WidthPt: 1224, HeightPt: 792},
	{Name: "Tabloid", WidthPt: 792, HeightPt: 1224},
	{Name: "Executive", WidthPt: 522, HeightPt: 756},
	{Name: "Folio", WidthPt: 210 * mm, HeightPt: 330 * mm},
}

// Default is the size used when a request names none.
const Default = "A4"

// Lookup returns the size with the given name. Names match exactly as the
// public contract spells them ("A4", "Letter").
func Lookup(name string) (stage.PageSize, bool) {
	for _, p := range table {
		if p.Name == name {
			return p, true
		}
	}
	return stage.PageSize{}, false
}

// LookupFold is Lookup ignoring case, for command-line use.
func LookupFold(name string) (stage.PageSize, bool) {
	for _, p := range table {
		if strings.EqualFold(p.Name, name) {
			return p, true
		}
	}
	return stage.PageSize{}, false
}

// All returns every size in table order.
func All() []stage.PageSize { return slices.Clone(table) }

// Names returns every size's name in table order.
func Names() []string {
	names := make([]string, len(table))
	for i, p := range table {
		names[i] = p.Name
	}
	return names
}
