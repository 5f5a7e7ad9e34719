package chrome

import (
	"context"
	"fmt"
	"strconv"

	"github.com/mdpress/mdpress/sdk/stage"
)

// fitTables lets the cells of a table wider than the page break their
// words anywhere, which narrows the table to the page; tables that fit are
// left as their stylesheet lays them out. A table cannot be narrower than
// its longest words, and Markdown tables are full of unbreakable ones
// (identifiers, URLs, many columns). Printed as they were, such a table
// ran past the page's right edge, where the print lost its last columns,
// and Chromium shrank the whole document, every page of it, by up to a
// quarter to make room: the goldmark README printed at 81% of its type
// size and still lost text. Breaking the words of every table instead
// would split the short ones of tables that fit. The page's width is the
// paper's less the margins of the document's own @page rules (user CSS
// may move them); it is read here, before printing, in the print media
// the tab emulates.
func (t *tab) fitTables(ctx context.Context, size stage.PageSize) (int, error) {
	v, err := t.eval(ctx, fmt.Sprintf(fitTablesJS, size.WidthPt*96/72), false)
	if err != nil {
		return 0, err
	}
	n, err := strconv.Atoi(v)
	if err != nil {
		return 0, fmt.Errorf("fit tables: unexpected result %q", v)
	}
	return n, nil
}

// fitTablesJS takes the paper's width in CSS pixels and answers how many
// tables it let break their words. The available width of a table is the
// page's content width less what its containers take on either side (list
// indents, quote bars), measured in the screen layout, where they are the
// same; its narrowest width is measured with every table forced to its
// min-content width, all in one layout.
const fitTablesJS = `(() => {
  const tables = document.querySelectorAll("table");
  if (tables.length === 0 || !document.body) return 0;
  let left = "", right = "";
  const walk = (rules) => {
    for (const r of rules) {
      if (r instanceof CSSPageRule) {
        if (r.selectorText !== "") continue;
        left = r.style.marginLeft || left;
        right = r.style.marginRight || right;
      } else if (r instanceof CSSMediaRule) {
        if (matchMedia(r.media.mediaText || "all").matches) walk(r.cssRules);
      } else if (r.cssRules) {
        walk(r.cssRules);
      }
    }
  };
  for (const s of document.styleSheets) {
    try { walk(s.cssRules); } catch (e) {}
  }
  const box = document.createElement("div");
  box.style.cssText = "position:absolute;left:0;top:0;visibility:hidden;height:0;width:%gpx";
  const probe = box.appendChild(document.createElement("div"));
  probe.style.marginLeft = left || "0";
  probe.style.marginRight = right || "0";
  document.body.appendChild(box);
  const page = probe.getBoundingClientRect().width;
  box.remove();
  const root = document.documentElement.clientWidth;
  const inner = (el) => {
    const cs = getComputedStyle(el);
    const r = el.getBoundingClientRect();
    return [r.left + parseFloat(cs.borderLeftWidth) + parseFloat(cs.paddingLeft),
            r.right - parseFloat(cs.borderRightWidth) - parseFloat(cs.paddingRight)];
  };
  const force = document.createElement("style");
  force.textContent = "table{width:min-content!important;min-width:0!important;max-width:none!important}";
  document.head.appendChild(force);
  const over = [];
  for (const t of tables) {
    const parent = t.parentElement;
    if (!parent) continue;
    const [l, r] = inner(parent);
    const avail = page - l - (root - r);
    const tr = t.getBoundingClientRect();
    if (tr.width > avail + 0.5) over.push(t);
  }
  force.remove();
  for (const t of over) t.style.overflowWrap = "anywhere";
  return over.length;
})()`
