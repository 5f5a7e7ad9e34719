package watermark

import (
	"strings"
	"testing"
)

func TestParseValue(t *testing.T) {
	tests := []struct {
		src  string
		kind kind
		raw  string // the bytes the value spans
		want func(value) bool
	}{
		{"12", kNumber, "12", func(v value) bool { return v.num == 12 }},
		{"-.5 ", kNumber, "-.5", func(v value) bool { return v.num == -0.5 }},
		{"12 0 R", kRef, "12 0 R", func(v value) bool { return v.obj == 12 && v.gen == 0 }},
		{"12 0 obj", kNumber, "12", func(v value) bool { return v.num == 12 }},
		{"12 -1 R", kNumber, "12", nil},
		{"1.5 0 R", kNumber, "1.5", nil},
		{"/Type/Page", kName, "/Type", func(v value) bool { return v.name == "Type" }},
		{"/A#20B", kName, "/A#20B", func(v value) bool { return v.name == "A B" }},
		{"(a (nested) \\) string)x", kOther, "(a (nested) \\) string)", nil},
		{"<4142>>", kOther, "<4142>", nil},
		{"true]", kOther, "true", nil},
		{"[1 2 0 R /N (s) [3]]", kArray, "[1 2 0 R /N (s) [3]]", func(v value) bool {
			return len(v.elems) == 5 && v.elems[1].kind == kRef && v.elems[1].obj == 2 && v.elems[4].kind == kArray
		}},
		{"<</Type /Page % a comment\n/Kids [1 0 R]/Sub<</X 1>>>>", kDict, "<</Type /Page % a comment\n/Kids [1 0 R]/Sub<</X 1>>>>", func(v value) bool {
			sub, ok := v.get("Sub")
			typ, _ := v.get("Type")
			return len(v.entries) == 3 && ok && sub.kind == kDict && typ.name == "Page" && string(v.entries[1].rawKey) == "Kids"
		}},
	}
	for _, tt := range tests {
		t.Run(tt.src, func(t *testing.T) {
			p := &parser{src: []byte(tt.src)}
			v, err := p.value(0)
			if err != nil {
				t.Fatal(err)
			}
			if v.kind != tt.kind || string(v.raw) != tt.raw {
				t.Fatalf("kind %d raw %q, want kind %d raw %q", v.kind, v.raw, tt.kind, tt.raw)
			}
			if tt.want != nil && !tt.want(v) {
				t.Fatalf("wrong value: %+v", v)
			}
			// Skimmed, the value ends where it does in full.
			p = &parser{src: []byte(tt.src), skim: true}
			if s, err := p.value(0); err != nil || s.kind != tt.kind || string(s.raw) != tt.raw {
				t.Fatalf("skimmed: kind %d raw %q (%v), want kind %d raw %q", s.kind, s.raw, err, tt.kind, tt.raw)
			}
		})
	}
}

func TestParseErrors(t *testing.T) {
	deep := strings.Repeat("[", maxDepth+2) + strings.Repeat("]", maxDepth+2)
	for _, src := range []string{"", "(unterminated", "<</A 1", "[1 2", "<<1 2>>", "<4142", ")", deep,
		"+Inf", "-inf", "+NaN", "1e5", "0x10", "1.2.3", "--1", "1_0"} {
		for _, skim := range []bool{false, true} {
			p := &parser{src: []byte(src), skim: skim}
			if v, err := p.value(0); err == nil {
				t.Errorf("%q parsed as %q (skim %v)", src, v.raw, skim)
			}
		}
	}
}
