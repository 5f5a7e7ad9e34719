package disk

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/mdpress/mdpress/core/fileid"
	"github.com/mdpress/mdpress/sdk/stage"
)

// TestCrashLeavesNothingServed builds the on-disk state a crash leaves after
// each step of Store, using Store's own writer for the steps that completed,
// and shows the file is never served and the sweeper clears the remains once
// they are old enough not to be a Store in progress.
func TestCrashLeavesNothingServed(t *testing.T) {
	pdf := pattern(4096)
	record := []byte(`{"id":"`) // a metadata write cut short

	tests := []struct {
		name  string
		crash func(t *testing.T, root *os.Root, id string)
	}{
		{"during data write", func(t *testing.T, root *os.Root, id string) {
			writeFile(t, root, filepath.Join(fanout(id), tmpPrefix+"0123456789abcdef"), pdf[:1000])
		}},
		{"after data rename", func(t *testing.T, root *os.Root, id string) {
			if err := writeAtomic(root, fanout(id), id+dataExt, pdf); err != nil {
				t.Fatal(err)
			}
		}},
		{"during metadata write", func(t *testing.T, root *os.Root, id string) {
			if err := writeAtomic(root, fanout(id), id+dataExt, pdf); err != nil {
				t.Fatal(err)
			}
			writeFile(t, root, filepath.Join(fanout(id), tmpPrefix+"fedcba9876543210"), record)
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			c := newClock()
			d := configured(t, dir, c, nil)
			root, err := os.OpenRoot(dir)
			if err != nil {
				t.Fatal(err)
			}
			defer root.Close()
			id := fileid.New()
			if err := root.MkdirAll(fanout(id), 0o750); err != nil {
				t.Fatal(err)
			}
			tt.crash(t, root, id)
			// A live file beside the debris must survive every sweep.
			live := store(t, d, []byte("%PDF live"), 48*time.Hour).ID

			_, err = d.Open(context.Background(), &stage.OpenRequest{ID: id, Length: -1})
			wantCode(t, err, stage.CodeNotFound)

			// Young debris may be a Store in progress: left alone.
			if n, err := d.Sweep(context.Background()); err != nil || n != 0 {
				t.Fatalf("sweep of young debris removed %d (%v)", n, err)
			}
			c.Advance(orphanAge + time.Minute)
			// The sweep at start runs beside the test, and on a busy
			// machine it may run now and take the debris first: what
			// counts is that the debris goes, which the listing checks.
			if _, err := d.Sweep(context.Background()); err != nil {
				t.Fatalf("sweep of old debris: %v", err)
			}
			entries, err := os.ReadDir(filepath.Join(dir, fanout(id)))
			if err != nil {
				t.Fatal(err)
			}
			for _, e := range entries {
				if e.Name() != live+dataExt && e.Name() != live+metaExt {
					t.Errorf("debris left: %s", e.Name())
				}
			}
			readRange(t, d, live, 0, -1)
		})
	}
}

func writeFile(t *testing.T, root *os.Root, name string, data []byte) {
	t.Helper()
	if err := root.WriteFile(name, data, 0o600); err != nil {
		t.Fatal(err)
	}
}
