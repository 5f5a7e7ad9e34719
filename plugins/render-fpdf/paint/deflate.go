package paint

import "github.com/mdpress/mdpress/plugins/render-fpdf/layout"

// deflateMin is the page content, in bytes over the whole document, below
// which page streams are stored uncompressed even when compression is on.
// fpdf deflates each stream with a fresh compressor, 1.2 MB to allocate
// and zero: for content this small that is about a tenth of the document's
// render time, spent to save under 2 KB (deflate removes about three
// quarters) of a PDF whose embedded fonts alone take 20 KB or more.
const deflateMin = 2 << 10

// contentSize estimates, up to deflateMin, the bytes of drawing operators
// fpdf writes for doc's pages: text as UTF-16 (two bytes a character,
// counted as two a UTF-8 byte) and the operators around each item. Links
// are annotations, not content.
func contentSize(doc *layout.Doc) int {
	n := 0
	for _, p := range doc.Pages {
		for i := range p.Items {
			switch it := &p.Items[i]; it.Kind {
			case layout.Text:
				n += 60 + 2*len(it.Text)
			case layout.LinkURI, layout.LinkAnchor:
			default:
				n += 40
			}
		}
		if n >= deflateMin {
			break
		}
	}
	return n
}
