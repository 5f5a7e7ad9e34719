package markdown

import "testing"

func TestPartsSplitterDesync(t *testing.T) {
	p := tinyParts()
	for i, src := range []string{
		"<pre>\nx\n</script>\n\n```\n\n# a\n\n</pre>\n\n# b\n\nc\n\n```\n\n# d\n",
		"# h\n\n<pre>\n</style>\n\n~~~\n\n# h\n\n</pre>\n\nz\n\n~~~\n\n# h\n",
		"- [x]: /u\n\n[x]\n\n# x\n",
		"a\n\n> [foo\nbar]: /url\n\n[foo bar]\n",
		"a\n\n[foo]:\n/url\n\n[foo]\n",
		"para\n\n<!-->\n\n# h\n\n-->\n\nx\n",
		"para\n\n<?>\n\n# h\n\n?>\n\nx\n",
		"x\n\n<![CDATA[]]>\n\n# h\n",
		"x\n\n<!A\n\n# h\n\n>\n\ny\n",
		"# a\n\n```\n\n# a\n\n```\n\n# a\n\n````\n\n# a\n",
		"x\n\n\x0b```\n\n# h\n\n```\n\ny\n",
		"x\n\n```\x0b\n\n# h\n\n```\n\ny\n",
		"x\n\n``` \n\n# h\n\n``` \x0c\n\ny\n",
		"[a]: <b\n\nc>\n\n[a]\n",
		"x\n\n<textarea\n\n# h\n\n</textarea>\n\ny\n",
		"x\n\n<script/>\n\n# h\n\n</script>\n\ny\n",
		"x\n\n  <pre\tclass=a>\n\n# h\n\n</pre>\n\ny\n",
	} {
		n := checkParts(t, p, src)
		t.Logf("%d: %d parts", i, n)
	}
}
