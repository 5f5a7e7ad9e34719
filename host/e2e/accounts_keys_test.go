package e2e

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/base32"
	"encoding/hex"
	"encoding/json"
	"io/fs"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"
)

// TestAccountKeysNeverInClear: after keys were created by the CLI, used,
// and a wrong key was tried, no key appears in clear in the database, the
// data dir or the host's logs.
func TestAccountKeysNeverInClear(t *testing.T) {
	eachStore(t, func(t *testing.T, st accountStore) {
		h := startHost(t, fpdf(), st.env())
		uid, first := h.account("free", 5)
		var second struct {
			APIKey string `json:"apiKey"`
		}
		if err := json.Unmarshal(h.mdpress("accounts", "keys", "create", uid, "--json"), &second); err != nil || second.APIKey == "" {
			t.Fatalf("keys create: %v", err)
		}
		wrong := "mdp_" + apiKeyText(32) // well formed, so the store looks it up

		for _, key := range []string{first, second.APIKey} {
			if resp, body := h.post(key, map[string]string{"markdown": "# Key"}); resp.StatusCode != http.StatusOK {
				t.Fatalf("convert: %d %s", resp.StatusCode, body)
			}
			if b := h.balance(key); b < 0 {
				t.Fatal("negative balance")
			}
		}
		for _, key := range []string{wrong, first + "x", strings.ToUpper(first)} {
			if resp, body := h.post(key, map[string]string{"markdown": "# Key"}); resp.StatusCode != http.StatusUnauthorized {
				t.Fatalf("wrong key: %d %s", resp.StatusCode, body)
			}
		}

		secrets := map[string][][]byte{}
		for name, key := range map[string]string{"first key": first, "second key": second.APIKey, "wrong key": wrong} {
			secrets[name] = keyForms(t, key)
		}
		look := func(where string, data []byte) {
			t.Helper()
			for name, forms := range secrets {
				for _, f := range forms {
					if bytes.Contains(data, f) {
						t.Errorf("%s holds the %s in clear (%q)", where, name, f)
					}
				}
			}
		}
		scan := func(when string) {
			t.Helper()
			files := 0
			err := filepath.WalkDir(h.DataDir, func(path string, d fs.DirEntry, err error) error {
				if err != nil || d.IsDir() {
					return err
				}
				data, err := os.ReadFile(path)
				if err != nil {
					return err
				}
				files++
				look(when+": "+path, data)
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
			look(when+": host logs", []byte(h.logs.String()))
			if st.postgres() {
				look(when+": pg_dump", pgDump(t, st.dsn))
			}
			t.Logf("%s: %d files of the data dir scanned", when, files)
		}
		// While the host runs, SQLite's recent writes are still in the WAL.
		if !st.postgres() {
			if _, err := os.Stat(filepath.Join(h.DataDir, "mdpress.db-wal")); err != nil {
				t.Errorf("no WAL beside the database while the host runs: %v", err)
			}
		}
		scan("running")
		h.stop()
		scan("stopped")
	})
}

// keyForms are the shapes a key could leak in: the key, its secret part,
// the secret's bytes, and those bytes in hex.
func keyForms(t *testing.T, key string) [][]byte {
	secret, ok := strings.CutPrefix(key, "mdp_")
	if !ok {
		t.Fatalf("key %q lacks the mdp_ prefix", key)
	}
	raw, err := keyEncoding.DecodeString(secret)
	if err != nil {
		t.Fatalf("key %q: %v", key, err)
	}
	return [][]byte{[]byte(key), []byte(secret), raw, []byte(hex.EncodeToString(raw))}
}

var keyEncoding = base32.NewEncoding("abcdefghijklmnopqrstuvwxyz234567").WithPadding(base32.NoPadding)

func apiKeyText(n int) string {
	b := make([]byte, n)
	rand.Read(b)
	return keyEncoding.EncodeToString(b)
}

// pgDump returns the whole database as pg_dump writes it.
func pgDump(t *testing.T, dsn string) []byte {
	t.Helper()
	bin, err := exec.LookPath("pg_dump")
	if err != nil {
		found, _ := filepath.Glob("/usr/lib/postgresql/*/bin/pg_dump")
		sort.Strings(found)
		if len(found) == 0 {
			t.Fatal("a PostgreSQL server runs but pg_dump is not installed")
		}
		bin = found[len(found)-1]
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, bin, "--dbname="+dsn).Output()
	if err != nil {
		t.Fatalf("pg_dump: %v", err)
	}
	if !bytes.Contains(out, []byte("CREATE TABLE")) {
		t.Fatalf("pg_dump wrote no tables:\n%.500s", out)
	}
	return out
}
