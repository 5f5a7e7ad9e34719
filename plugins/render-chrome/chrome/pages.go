package chrome

import "github.com/mdpress/mdpress/plugins/render-chrome/chrome/watermark"

// countPages counts the pages of a PDF by its page tree, stamped or not.
// Counting the bytes "/Type /Page" counted the document's own as well: a
// link's URI and a heading's bookmark title are written as they are, and
// so is a JPEG, comments and all.
func countPages(pdf []byte) (int, error) {
	return watermark.PageCount(pdf)
}
