package layout

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"maps"
	"reflect"
	"runtime"
	"slices"
	"strings"
	"testing"
	"weak"

	"github.com/mdpress/mdpress/sdk/stage"
)

// streamed lays out blocks with a Stream, one Add per part.
func streamed(t testing.TB, opt Options, parts ...[]*stage.Node) (*Doc, error) {
	t.Helper()
	s, err := Begin(context.Background(), opt)
	if err != nil {
		return nil, err
	}
	for _, p := range parts {
		if err := s.Add(p); err != nil {
			return nil, err
		}
	}
	return s.End()
}

// splitAt cuts ns before each index whose bit is set in mask.
func splitAt(ns []*stage.Node, mask int) [][]*stage.Node {
	var parts [][]*stage.Node
	start := 0
	for i := 1; i < len(ns); i++ {
		if mask&(1<<(i-1)) != 0 {
			parts = append(parts, ns[start:i])
			start = i
		}
	}
	return append(parts, ns[start:])
}

// TestStreamMatchesLayout lays out a sequence in every possible split and
// requires the Doc of the whole tree each time. The sequence holds what
// looks past a part's end: a heading at the foot of a page (swept by the
// filler's length) kept with the heading after it and the paragraph after
// that, a run of inline nodes
// that makes one paragraph, a nil among them, a footnote list in the
// middle (laid out last) and a heading followed by a trailing inline run.
func TestStreamMatchesLayout(t *testing.T) {
	set, err := testFonts()
	if err != nil {
		t.Fatal(err)
	}
	opt := Options{Page: a4, Fonts: set}
	cutMatters := 0
	for lines := 44; lines < 56; lines++ {
		filler := &stage.Node{Kind: stage.KindCodeBlock, Text: strings.Repeat("filler\n", lines)}
		kept := with(n(stage.KindHeading, txt("Kept")), "level", "2")
		ns := []*stage.Node{
			filler, kept, with(n(stage.KindHeading, txt("Also kept")), "level", "3"), para(txt("follower")),
			txt("loose "), n(stage.KindEmphasis, txt("run")), nil,
			n(stage.KindFootnotes, with(n(stage.KindFootnote, para(txt("the note"))), "index", "1")),
			with(n(stage.KindHeading, txt("Last")), "level", "3"), txt("tail "), txt("text"),
		}
		whole := lay(t, ns...)
		// The sweep must put the heading where the paragraph after it
		// decides its page, or it tests nothing.
		if alone := lay(t, filler, kept); find(t, alone, "Kept").page != find(t, whole, "Kept").page {
			cutMatters++
		}
		for mask := range 1 << (len(ns) - 1) {
			parts := splitAt(ns, mask)
			if mask%7 == 0 { // now and then an empty part, first or last
				if mask%2 == 0 {
					parts = append([][]*stage.Node{nil}, parts...)
				} else {
					parts = append(parts, []*stage.Node{})
				}
			}
			got, err := streamed(t, opt, parts...)
			if err != nil {
				t.Fatal(err)
			}
			if !sameDoc(got, whole) {
				t.Fatalf("%d filler lines, parts of %v: the Doc differs from the whole tree's", lines, partLens(parts))
			}
		}
	}
	if cutMatters == 0 {
		t.Fatal("no filler length put the kept heading where what follows it decides its page")
	}
}

// sameDoc is reflect.DeepEqual for Docs, at a fraction of its cost on the
// font character sets, which the sweep above compares thousands of times.
func sameDoc(a, b *Doc) bool {
	if a.Width != b.Width || a.Height != b.Height || a.Content != b.Content || a.Body != b.Body ||
		a.BodySize != b.BodySize || a.Muted != b.Muted || a.TextColor != b.TextColor ||
		!maps.Equal(a.Anchors, b.Anchors) || !slices.Equal(a.Outline, b.Outline) ||
		!slices.EqualFunc(a.Images, b.Images, func(x, y Image) bool {
			return x.Type == y.Type && x.Width == y.Width && x.Height == y.Height && bytes.Equal(x.Data, y.Data)
		}) ||
		!slices.EqualFunc(a.Pages, b.Pages, func(x, y *Page) bool { return slices.Equal(x.Items, y.Items) }) ||
		!slices.EqualFunc(a.Actual, b.Actual, slices.Equal[[]ActualText]) {
		return false
	}
	for f := range a.Used {
		if x, y := a.Used[f], b.Used[f]; (x == nil) != (y == nil) || x != nil && *x != *y {
			return false
		}
	}
	return true
}

// TestSameDoc keeps sameDoc comparing every field of Doc.
func TestSameDoc(t *testing.T) {
	if n := reflect.TypeFor[Doc]().NumField(); n != 13 {
		t.Fatalf("Doc has %d fields, sameDoc compares 13", n)
	}
}

func partLens(parts [][]*stage.Node) []int {
	var n []int
	for _, p := range parts {
		n = append(n, len(p))
	}
	return n
}

// TestStreamLetsGoOfLaidOutBlocks: a long document streamed in parts must
// not stay in memory part after part. Only the block still pending (the
// last one given, which waits for what follows it) may be held.
func TestStreamLetsGoOfLaidOutBlocks(t *testing.T) {
	set, err := testFonts()
	if err != nil {
		t.Fatal(err)
	}
	s, err := Begin(context.Background(), Options{Page: a4, Fonts: set})
	if err != nil {
		t.Fatal(err)
	}
	// add gives the Stream a part and keeps only weak pointers to its nodes.
	add := func(i int) (nodes []weak.Pointer[stage.Node]) {
		part := []*stage.Node{
			para(txt(fmt.Sprintf("part %d", i)), n(stage.KindStrong, txt("bold"))),
			with(n(stage.KindHeading, txt("heading")), "level", "2"),
			para(txt("last block of the part")),
		}
		for _, b := range part {
			b.Walk(func(n *stage.Node) bool {
				nodes = append(nodes, weak.Make(n))
				return true
			})
		}
		if err := s.Add(part); err != nil {
			t.Fatal(err)
		}
		return nodes
	}
	var parts [][]weak.Pointer[stage.Node]
	for i := range 20 {
		parts = append(parts, add(i))
	}
	runtime.GC()
	for i, nodes := range parts {
		for j, w := range nodes {
			pending := i == len(parts)-1 && j >= len(nodes)-2 // the last paragraph and its text
			if held := w.Value() != nil; held && !pending {
				t.Fatalf("node %d of part %d is still held after its part was laid out", j, i)
			}
		}
	}
	if _, err := s.End(); err != nil {
		t.Fatal(err)
	}
}

// TestStreamStaysFailed: once a Stream has stopped, halfway through a
// block, it answers every later call with the same error.
func TestStreamStaysFailed(t *testing.T) {
	set, err := testFonts()
	if err != nil {
		t.Fatal(err)
	}
	s, err := Begin(context.Background(), Options{Page: a4, Fonts: set, MaxPages: 1})
	if err != nil {
		t.Fatal(err)
	}
	block := []*stage.Node{para(txt(strings.Repeat("words and more words ", 40)))}
	for i := 0; err == nil; i++ {
		if i == 100 {
			t.Fatal("100 long paragraphs fit on one page")
		}
		err = s.Add(block)
	}
	if !errors.Is(err, ErrTooManyPages) {
		t.Fatalf("Add: %v, want ErrTooManyPages", err)
	}
	if again := s.Add(nil); again != err {
		t.Errorf("Add after failing: %v, want %v", again, err)
	}
	if d, again := s.End(); again != err || d != nil {
		t.Errorf("End after failing: %v, %v, want %v", d, again, err)
	}

	s, err = Begin(context.Background(), Options{Page: a4, Fonts: set})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.End(); err != nil {
		t.Fatal(err)
	}
	if err := s.Add(block); err == nil {
		t.Error("Add after End succeeded")
	}
	if _, err := s.End(); err == nil {
		t.Error("a second End succeeded")
	}
}

func TestStreamCancelled(t *testing.T) {
	set, err := testFonts()
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	s, err := Begin(ctx, Options{Page: a4, Fonts: set})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Add([]*stage.Node{para(txt("before"))}); err != nil {
		t.Fatal(err)
	}
	cancel()
	// One short block ticks too few steps to reach a context check of
	// the engine's own: Add checks on entry.
	if err := s.Add([]*stage.Node{para(txt("after"))}); !errors.Is(err, context.Canceled) {
		t.Errorf("Add after cancel: %v, want context.Canceled", err)
	}
	if _, err := Begin(ctx, Options{Page: a4, Fonts: set}); !errors.Is(err, context.Canceled) {
		t.Errorf("Begin on a cancelled context: %v", err)
	}
}
