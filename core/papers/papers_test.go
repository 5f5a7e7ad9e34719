package papers

import (
	"math"
	"testing"
)

func TestSizesMatchPublishedPoints(t *testing.T) {
	// Published values in PostScript points, rounded to 0.01.
	want := map[string][2]float64{
		"A0": {2383.94, 3370.39}, "A1": {1683.78, 2383.94}, "A2": {1190.55, 1683.78},
		"A3": {841.89, 1190.55}, "A4": {595.28, 841.89}, "A5": {419.53, 595.28},
		"A6": {297.64, 419.53}, "A7": {209.76, 297.64}, "A8": {147.40, 209.76},
		"A9": {104.88, 147.40}, "B1": {2004.09, 2834.65}, "B2": {1417.32, 2004.09},
		"B3": {1000.63, 1417.32}, "B4": {708.66, 1000.63}, "B5": {498.90, 708.66},
		"B6": {354.33, 498.90}, "Letter": {612, 792}, "Legal": {612, 1008},
		"Ledger": {1224, 792}, "Tabloid": {792, 1224}, "Executive": {522, 756},
		"Folio": {595.28, 935.43},
	}
	if len(All()) != 22 || len(want) != 22 {
		t.Fatalf("want 22 sizes, table has %d", len(All()))
	}
	for name, wh := range want {
		p, ok := Lookup(name)
		if !ok {
			t.Errorf("%s missing", name)
			continue
		}
		if math.Abs(p.WidthPt-wh[0]) > 0.006 || math.Abs(p.HeightPt-wh[1]) > 0.006 {
			t.Errorf("%s = %.2fx%.2f, want %.2fx%.2f", name, p.WidthPt, p.HeightPt, wh[0], wh[1])
		}
	}
}

func TestLookup(t *testing.T) {
	if _, ok := Lookup("a4"); ok {
		t.Error("Lookup must be exact")
	}
	if p, ok := LookupFold("letter"); !ok || p.Name != "Letter" {
		t.Errorf("LookupFold(letter) = %v, %v", p, ok)
	}
	if _, ok := Lookup("A10"); ok {
		t.Error("A10 is not a size")
	}
}
