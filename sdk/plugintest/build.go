package plugintest

import (
	"os/exec"
	"path"
	"path/filepath"
	"testing"
)

// Build compiles the plugin main package at importPath (or a directory such
// as ".") into a temporary directory and returns the binary's path, for
// Launch. The test skips when no go toolchain is on PATH.
func Build(t testing.TB, importPath string) string {
	t.Helper()
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go toolchain to build the plugin binary")
	}
	name := path.Base(importPath)
	if name == "." || name == "/" {
		name = "plugin"
	}
	bin := filepath.Join(t.TempDir(), name)
	if out, err := exec.Command(goTool, "build", "-o", bin, importPath).CombinedOutput(); err != nil {
		t.Fatalf("build %s: %v\n%s", importPath, err, out)
	}
	return bin
}
