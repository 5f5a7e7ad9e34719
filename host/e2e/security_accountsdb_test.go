package e2e

import (
	"encoding/json"
	"io/fs"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestAccountDatabasePrivate: the SQLite database holds every hosted
// file's id, the capability that downloads it, so it is kept as private
// as the files are (0600), with its -wal and -shm files, whether serve or
// `accounts create` made it, whatever the umask leaves.
func TestAccountDatabasePrivate(t *testing.T) {
	check := func(t *testing.T, dir string, names ...string) {
		t.Helper()
		for _, name := range names {
			fi, err := os.Stat(filepath.Join(dir, name))
			if err != nil {
				t.Fatal(err)
			}
			if mode := fi.Mode().Perm(); mode&0o077 != 0 {
				t.Errorf("%s has mode %o: others than its owner can read the capabilities it holds", name, mode)
			}
		}
	}

	t.Run("serve", func(t *testing.T) {
		h := startHost(t, fpdf())
		_, key := h.account("pro", 5)
		resp, body := h.post(key, map[string]string{"markdown": "# Private", "output": "url"})
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("convert: %d %s", resp.StatusCode, body)
		}
		var out struct{ URL string }
		mustJSON(t, body, &out)
		id := out.URL[strings.LastIndexByte(out.URL, '/')+1:]
		db, err := os.ReadFile(filepath.Join(h.DataDir, "mdpress.db-wal"))
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(db), id) {
			t.Fatalf("the database's WAL does not hold the hosted file's id %s: the case tests nothing", id)
		}
		check(t, h.DataDir, "mdpress.db", "mdpress.db-wal", "mdpress.db-shm")
		// The bar the database must meet: the hosted files themselves.
		err = filepath.WalkDir(filepath.Join(h.DataDir, "files"), func(path string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() {
				return err
			}
			rel, _ := filepath.Rel(h.DataDir, path)
			check(t, h.DataDir, rel)
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	})

	t.Run("accounts create", func(t *testing.T) {
		h := &host{t: t, DataDir: t.TempDir()}
		var out struct{ APIKey string }
		if err := json.Unmarshal(h.mdpress("accounts", "create", "--plan", "pro", "--json"), &out); err != nil || out.APIKey == "" {
			t.Fatalf("accounts create: %v", err)
		}
		check(t, h.DataDir, "mdpress.db")
	})
}
