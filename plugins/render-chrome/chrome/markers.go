package chrome

import (
	"context"
	"fmt"
	"strconv"
)

// fitMarkers widens an ordered list whose numbers are wider than the
// space its stylesheet left them. A list's numbers hang in its start
// padding, which the themes size for one or two digits; a wider number
// ran past the page's edge, where Chromium cuts what it prints: item 100
// of a list printed as "00.", the 10000th as "000.", and the footnotes of
// a document with a hundred of them lost their first digit, in the
// picture and in the PDF's text alike. Lists whose numbers fit keep their
// stylesheet's indent.
func (t *tab) fitMarkers(ctx context.Context) (int, error) {
	v, err := t.eval(ctx, fitMarkersJS, false)
	if err != nil {
		return 0, err
	}
	n, err := strconv.Atoi(v)
	if err != nil {
		return 0, fmt.Errorf("fit markers: unexpected result %q", v)
	}
	return n, nil
}

// fitMarkersJS answers how many lists it widened. Chromium does not lay
// out a marker where a script can measure it, so each list's widest
// numbers are drawn again, inside probe items of the same font and list
// style, all in one layout. Decimal numbers grow with their digits, so
// the first and last of a list are enough; other styles (roman, letters)
// are measured item by item, up to a bound that no real list reaches.
//
// Every style and box is read before anything is written, and computed
// styles are copied, not kept (they are live): a read after a write lays
// the whole document out again, and done once per list, a document of
// 3,000 lists numbered from 123456789 took 30 s to print instead of 3.
const fitMarkersJS = `(() => {
  const lists = document.querySelectorAll("ol");
  if (lists.length === 0 || !document.body) return 0;
  const fonts = ["fontFamily", "fontSize", "fontWeight", "fontStyle", "fontStretch", "fontVariantNumeric", "fontFeatureSettings", "letterSpacing", "wordSpacing"];
  const jobs = [];
  for (const ol of lists) {
    const items = [];
    for (const li of ol.children) if (li.tagName === "LI") items.push(li);
    if (items.length === 0) continue;
    let n = ol.reversed ? (ol.hasAttribute("start") ? ol.start : items.length) : ol.start;
    const step = ol.reversed ? -1 : 1;
    const marked = [];
    for (const li of items) {
      if (li.hasAttribute("value")) n = li.value;
      const cs = getComputedStyle(li);
      if (cs.display.includes("list-item") && cs.listStylePosition === "outside" &&
          cs.listStyleType !== "none" && getComputedStyle(li, "::marker").content === "normal") {
        marked.push([li, n, cs.listStyleType]);
      }
      n += step;
    }
    if (marked.length === 0) continue;
    let measure = marked;
    if (marked.every(([, , type]) => type === "decimal" || type === "decimal-leading-zero")) {
      const byLength = (m) => String(m[1]).length;
      measure = [marked.reduce((a, b) => byLength(b) > byLength(a) ? b : a)];
    } else {
      measure = marked.slice(0, 400);
    }
    const markers = measure.map(([li, value, type]) => {
      const ms = getComputedStyle(li, "::marker");
      return [value, type, fonts.map((f) => ms[f])];
    });
    const os = getComputedStyle(ol);
    const rtl = os.direction === "rtl";
    const or = ol.getBoundingClientRect();
    const edge = rtl ? or.right - parseFloat(os.borderRightWidth) : or.left + parseFloat(os.borderLeftWidth);
    let room = Infinity;
    for (const [li] of marked) {
      const ls = getComputedStyle(li);
      const lr = li.getBoundingClientRect();
      const start = rtl ? lr.right - parseFloat(ls.borderRightWidth) - parseFloat(ls.paddingRight)
                        : lr.left + parseFloat(ls.borderLeftWidth) + parseFloat(ls.paddingLeft);
      room = Math.min(room, rtl ? edge - start : start - edge);
    }
    jobs.push({ol, rtl, room, pad: parseFloat(rtl ? os.paddingRight : os.paddingLeft), markers});
  }
  if (jobs.length === 0) return 0;
  const probe = document.createElement("ol");
  probe.style.cssText = "position:absolute;left:0;top:0;visibility:hidden;margin:0;padding:0;border:0;list-style-position:inside";
  for (const job of jobs) {
    job.probes = job.markers.map(([value, type, font]) => {
      const p = probe.appendChild(document.createElement("li"));
      p.value = value;
      p.style.listStyleType = type;
      p.style.width = "max-content";
      // Something after the marker, or its trailing space would end the
      // line and not count.
      p.appendChild(document.createElement("span")).style.cssText = "display:inline-block;width:0";
      fonts.forEach((f, i) => { p.style[f] = font[i]; });
      return p;
    });
  }
  document.body.appendChild(probe);
  for (const job of jobs) {
    job.need = 0;
    for (const p of job.probes) job.need = Math.max(job.need, p.getBoundingClientRect().width);
  }
  probe.remove();
  let widened = 0;
  for (const {ol, rtl, room, pad, need} of jobs) {
    if (need > room + 0.5) {
      ol.style.setProperty(rtl ? "padding-right" : "padding-left", (pad + need - room + 1) + "px");
      widened++;
    }
  }
  return widened;
})()`
