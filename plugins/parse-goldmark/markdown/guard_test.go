package markdown

import "testing"

func TestDefuse(t *testing.T) {
	const markers, indent = 3, 8
	tests := []struct {
		name, in, want string
	}{
		{"within bounds", "> > > x\n", "> > > x\n"},
		{"quotes over", ">>>> x\n", `>>>\> x` + "\n"},
		{"spaced quotes over", "> > > > > x", `> > > \> > x`},
		{"bullets over", "- - - - x\n- ok\n", `- - - \- x` + "\n- ok\n"},
		{"mixed over", "> - 1. * x", `> - 1. \* x`},
		{"ordered over", "1. 2) 3. 10. x", `1. 2) 3. 10\. x`},
		{"footnotes over", "[^a]: [^b]:[^c]: [^d]: x", `[^a]: [^b]:[^c]: \[^d]: x`},
		{"not a footnote", "[^a] [^b] [^c] [^d] x", "[^a] [^b] [^c] [^d] x"},
		{"marker needs a space", "-x -y -z -w", "-x -y -z -w"},
		{"emphasis is not a bullet", "**** *a* ****", "**** *a* ****"},
		{"thematic break kept", "* * * * * * *", "* * * * * * *"},
		{"indent over", "          code", "        \u00a0\u00a0code"},
		{"tab indent over", "\t\t\tcode", "\t\t\u00a0code"},
		{"text line untouched", "plain text that is long enough to be scanned", "plain text that is long enough to be scanned"},
		{"crlf", ">>>> x\r\n> y\r\n", ">>>\\> x\r\n> y\r\n"},
		{"second line only", "a\n>>>>>\nb", "a\n>>>\\>>\nb"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := string(defuse([]byte(tt.in), markers, indent))
			if got != tt.want {
				t.Fatalf("defuse(%q)\n got %q\nwant %q", tt.in, got, tt.want)
			}
		})
	}
}

func TestDefuseKeepsSourceWhenFine(t *testing.T) {
	src := []byte("# Title\n\n> quote\n- item\n")
	if got := defuse(src, 64, 128); &got[0] != &src[0] {
		t.Fatal("defuse copied a source that needed no change")
	}
}
