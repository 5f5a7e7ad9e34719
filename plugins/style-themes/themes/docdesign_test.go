package themes

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// TestDocDesignNamesEveryKey: the design file that the package comment
// shows operators is one that readDesign takes, and it names every key a
// design has, so that an operator reading it learns of each. The example
// lacked codeSize, codeLineHeight, headingSpacing and headingLineHeight,
// and the comment said every size was in points, where headingSpacing is
// in paragraph gaps.
func TestDocDesignNamesEveryKey(t *testing.T) {
	src, err := os.ReadFile("doc.go")
	if err != nil {
		t.Fatal(err)
	}
	var example []string
	for _, l := range strings.Split(string(src), "\n") {
		if body, ok := strings.CutPrefix(l, "//\t"); ok && (len(example) > 0 || strings.HasPrefix(body, `{"base"`)) {
			example = append(example, body)
			if strings.HasSuffix(body, "}") && strings.Count(strings.Join(example, ""), "{") == strings.Count(strings.Join(example, ""), "}") {
				break
			}
		}
	}
	text := strings.Join(example, "\n")
	if text == "" {
		t.Fatal("no design example in doc.go")
	}
	path := filepath.Join(t.TempDir(), "basic.json")
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := readDesign(path, basicDesign); err != nil {
		t.Fatalf("the example in doc.go: %v", err)
	}
	typ := reflect.TypeFor[design]()
	for i := range typ.NumField() {
		key, _, _ := strings.Cut(typ.Field(i).Tag.Get("json"), ",")
		if !strings.Contains(text, `"`+key+`":`) {
			t.Errorf("the example in doc.go does not name %q", key)
		}
	}
}
