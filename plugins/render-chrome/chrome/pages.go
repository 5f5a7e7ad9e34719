package chrome

import "regexp"

// pageObject matches the dictionary entry of a page object, "/Type /Page",
// and not that of the page tree, "/Type /Pages".
var pageObject = regexp.MustCompile(`/Type\s*/Page\b`)

// countPages counts the page objects of a PDF. Chromium writes PDF 1.4
// without object streams, so every page dictionary is in the clear.
func countPages(pdf []byte) int {
	return len(pageObject.FindAllIndex(pdf, -1))
}
