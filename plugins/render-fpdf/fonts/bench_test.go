package fonts

import (
	"io"
	"testing"

	"github.com/go-pdf/fpdf"
)

// BenchmarkFontLoad compares the per-document cost of four fonts: handing
// fpdf the full TrueType files (parsed for every document), handing it
// per-document copies with a cut cmap (parsed by fpdf, but cheaply), and
// Embed (the copies as simple fonts, written as they are).
func BenchmarkFontLoad(b *testing.B) {
	ids := []ID{Of(Sans, Regular), Of(Sans, Bold), Of(Sans, Italic), Of(Mono, Regular)}
	set := loadSet(b)
	doc := func(b *testing.B, font func(ID) []byte) {
		pdf := fpdf.NewCustom(&fpdf.InitType{UnitStr: "pt", Size: fpdf.SizeType{Wd: 595, Ht: 842}})
		for _, id := range ids {
			pdf.AddUTF8FontFromBytes(fileNames[id], "", font(id))
		}
		pdf.AddPage()
		for _, id := range ids {
			pdf.SetFont(fileNames[id], "", 12)
			pdf.Text(20, 20, sample)
		}
		if err := pdf.Output(io.Discard); err != nil {
			b.Fatal(err)
		}
	}
	b.Run("naive", func(b *testing.B) {
		for b.Loop() {
			doc(b, func(id ID) []byte {
				data, err := File(id)
				if err != nil {
					b.Fatal(err)
				}
				return data
			})
		}
	})
	b.Run("subset", func(b *testing.B) {
		for b.Loop() {
			used := runesOf(sample)
			doc(b, func(id ID) []byte { return set.Face(id).Subset(used) })
		}
	})
	b.Run("embed", func(b *testing.B) {
		for b.Loop() {
			used := runesOf(sample)
			pdf := fpdf.NewCustom(&fpdf.InitType{UnitStr: "pt", Size: fpdf.SizeType{Wd: 595, Ht: 842}})
			var faces []*Embedded
			for _, id := range ids {
				faces = append(faces, set.Embed(pdf, id, used))
			}
			pdf.AddPage()
			for _, e := range faces {
				drawText(pdf, e, 12, 20, 20, sample)
			}
			if err := pdf.Output(io.Discard); err != nil {
				b.Fatal(err)
			}
		}
	})
}
