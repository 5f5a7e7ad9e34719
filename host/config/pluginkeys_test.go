package config

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// TestREADMENamesEveryPluginKey: the README's "Plugin settings" table is
// where operators look up what goes under plugins.<name>; sink-disk's dir,
// meter-credits' releaseInterval and parse-goldmark's bounds were read by
// the plugins and written nowhere an operator would look. The keys come
// from the json tags of each built-in plugin's Config (or rawConfig), read
// from its source, since the host module imports no plugin.
func TestREADMENamesEveryPluginKey(t *testing.T) {
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Skipf("README.md not beside the module: %v", err)
	}
	rows := pluginRows(t, string(readme))
	dirs, err := filepath.Glob("../../plugins/*/main.go")
	if err != nil || len(dirs) == 0 {
		t.Skipf("plugins not beside the module: %v", err)
	}
	for _, main := range dirs {
		name := filepath.Base(filepath.Dir(main))
		keys := configKeys(t, filepath.Dir(main))
		row, ok := rows[name]
		if !ok {
			t.Errorf("README's plugin settings have no row for %s (keys %v)", name, keys)
			continue
		}
		for _, k := range keys {
			if !strings.Contains(row, "`"+k+"`") {
				t.Errorf("README's plugin settings do not name %s's key %s", name, k)
			}
		}
	}
}

// pluginRows returns the text of the plugin settings table by plugin: a
// row whose first cell is empty continues the plugin above it.
func pluginRows(t *testing.T, readme string) map[string]string {
	_, section, ok := strings.Cut(readme, "### Plugin settings\n")
	if !ok {
		t.Fatal("README has no ### Plugin settings section")
	}
	section, _, _ = strings.Cut(section, "\n#")
	rows := map[string]string{}
	var current string
	for line := range strings.Lines(section) {
		cells := strings.Split(line, "|")
		if len(cells) < 3 || strings.HasPrefix(cells[1], "---") {
			continue
		}
		if first := strings.TrimSpace(cells[1]); first != "" {
			current = first
		}
		rows[current] += line
	}
	return rows
}

// configKeys lists the json tags of the structs named Config or rawConfig
// (and the anonymous structs decoded inside their parsers) in a plugin's
// non-test sources.
func configKeys(t *testing.T, dir string) []string {
	var keys []string
	err := filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return err
		}
		f, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		ast.Inspect(f, func(n ast.Node) bool {
			ts, ok := n.(*ast.TypeSpec)
			if !ok || (ts.Name.Name != "Config" && ts.Name.Name != "rawConfig") {
				return true
			}
			st, ok := ts.Type.(*ast.StructType)
			if !ok {
				return true
			}
			for _, f := range st.Fields.List {
				if f.Tag == nil {
					continue
				}
				tag, _ := strconv.Unquote(f.Tag.Value)
				key := strings.Split(reflect.StructTag(tag).Get("json"), ",")[0]
				if key != "" && key != "-" && !slices.Contains(keys, key) {
					keys = append(keys, key)
				}
			}
			return true
		})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return keys
}
