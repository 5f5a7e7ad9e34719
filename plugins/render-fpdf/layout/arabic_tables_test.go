package layout

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// TestArabicTablesGenerated: arabic_tables.go is what gen_arabic.go makes
// of the committed Unicode data, so an edit by hand, or data updated
// without a go generate, fails here.
func TestArabicTablesGenerated(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: no go run")
	}
	// Not named .go: go run would take it for a source file.
	fresh := filepath.Join(t.TempDir(), "arabic_tables.go.new")
	if out, err := exec.Command("go", "run", "gen_arabic.go", fresh).CombinedOutput(); err != nil {
		t.Fatalf("go run gen_arabic.go: %v\n%s", err, out)
	}
	want, err := os.ReadFile(fresh)
	if err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile("arabic_tables.go")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Fatal("arabic_tables.go differs from what gen_arabic.go makes: run go generate ./plugins/render-fpdf/layout/")
	}
}
