package disk

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mdpress/mdpress/core/fileid"
	"github.com/mdpress/mdpress/sdk/stage"
)

func pattern(n int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(i*7 + i/251)
	}
	return b
}

func TestStoreOpenRoundTrip(t *testing.T) {
	dir := t.TempDir()
	c := newClock()
	d := configured(t, dir, c, nil)
	pdf := append([]byte("%PDF-1.7\n"), pattern(10_000)...)

	resp := store(t, d, pdf, 7*24*time.Hour)
	if !fileid.Valid(resp.ID) {
		t.Fatalf("id %q is not 32 lowercase hex", resp.ID)
	}
	if resp.URL != "" {
		t.Fatalf("URL %q: the host builds disk URLs", resp.URL)
	}
	if want := c.Now().Add(7 * 24 * time.Hour); !resp.ExpiresAt.Equal(want) {
		t.Fatalf("ExpiresAt %v, want %v", resp.ExpiresAt, want)
	}

	got, open := readRange(t, d, resp.ID, 0, -1)
	if !bytes.Equal(got, pdf) {
		t.Fatalf("read %d bytes, not the %d stored", len(got), len(pdf))
	}
	sum := sha256.Sum256(pdf)
	if want := `"` + hex.EncodeToString(sum[:]) + `"`; open.ETag != want {
		t.Fatalf("ETag %s, want %s", open.ETag, want)
	}
	if open.Size != int64(len(pdf)) || open.Filename != "Report.pdf" ||
		!open.Created.Equal(c.Now()) || !open.ExpiresAt.Equal(resp.ExpiresAt) {
		t.Fatalf("metadata %+v", open)
	}

	fi, err := os.Stat(filepath.Join(dir, resp.ID[:2], resp.ID[2:4], resp.ID+".pdf"))
	if err != nil {
		t.Fatalf("data file not at its fan-out path: %v", err)
	}
	if fi.Mode().Perm() != 0o600 {
		t.Fatalf("data file mode %v, want 0600", fi.Mode().Perm())
	}
}

func TestStoreRejects(t *testing.T) {
	d := configured(t, t.TempDir(), newClock(), nil)
	for name, req := range map[string]*stage.StoreRequest{
		"empty pdf": {Owner: "u", PDF: nil, TTL: time.Hour},
		"zero ttl":  {Owner: "u", PDF: []byte("%PDF"), TTL: 0},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := d.Store(context.Background(), req)
			wantCode(t, err, stage.CodeInvalid)
		})
	}
}

func TestOpenRanges(t *testing.T) {
	d := configured(t, t.TempDir(), newClock(), nil)
	pdf := pattern(1000)
	id := store(t, d, pdf, time.Hour).ID

	tests := []struct {
		name        string
		off, length int64
		want        []byte
	}{
		{"whole", 0, -1, pdf},
		{"start", 0, 100, pdf[:100]},
		{"middle", 400, 200, pdf[400:600]},
		{"suffix to end", 900, -1, pdf[900:]},
		{"last byte", 999, 1, pdf[999:]},
		{"length past end is clamped", 950, 100, pdf[950:]},
		{"empty at end", 1000, -1, []byte{}},
		{"zero length", 10, 0, []byte{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, resp := readRange(t, d, id, tt.off, tt.length)
			if !bytes.Equal(got, tt.want) {
				t.Fatalf("got %d bytes, want %d", len(got), len(tt.want))
			}
			if resp.Size != 1000 {
				t.Fatalf("Size %d: must be the whole file's size", resp.Size)
			}
		})
	}
	for _, bad := range []struct {
		name        string
		off, length int64
	}{{"offset past end", 1001, -1}, {"negative offset", -1, 10}, {"negative length", 0, -2}} {
		t.Run(bad.name, func(t *testing.T) {
			_, err := d.Open(context.Background(), &stage.OpenRequest{ID: id, Offset: bad.off, Length: bad.length})
			wantCode(t, err, stage.CodeInvalid)
		})
	}
}

func TestETagIsContentHash(t *testing.T) {
	d := configured(t, t.TempDir(), newClock(), nil)
	a := store(t, d, []byte("%PDF same"), time.Hour).ID
	b := store(t, d, []byte("%PDF same"), time.Hour).ID
	other := store(t, d, []byte("%PDF other"), time.Hour).ID
	if a == b {
		t.Fatal("two stores returned one id")
	}
	etag := func(id string) string {
		_, r := readRange(t, d, id, 0, -1)
		return r.ETag
	}
	first, again := etag(a), etag(a)
	if first != again || first != etag(b) {
		t.Fatalf("ETag not stable: %s %s %s", first, again, etag(b))
	}
	if etag(a) == etag(other) {
		t.Fatal("different content, same ETag")
	}
	if _, r := readRange(t, d, a, 2, 3); r.ETag != etag(a) {
		t.Fatal("a range must carry the whole file's ETag")
	}
}

func TestOpenRejectsBadIDs(t *testing.T) {
	base := t.TempDir()
	dir := filepath.Join(base, "files")
	// A file a traversal would reach if an id were ever joined into a path.
	if err := os.WriteFile(filepath.Join(base, "secret.json"), []byte(`{"id":"x"}`), 0o600); err != nil {
		t.Fatal(err)
	}
	d := configured(t, dir, newClock(), nil)
	id := store(t, d, []byte("%PDF-1.7"), time.Hour).ID

	bad := []string{
		"",
		"../../etc/passwd",
		"..%2f..%2fetc%2fpasswd",
		"%2e%2e%2f%2e%2e%2fsecret",
		"../secret",
		strings.Repeat("../", 9) + "sec",        // 30 bytes
		"../../" + id[6:],                       // right length, traversal
		id[:2] + "/" + id[3:],                   // right length, a slash
		id[:16] + "\\" + id[17:],                // right length, a backslash
		id[:31],                                 // short
		id + "0",                                // long
		strings.ToUpper(id),                     // uppercase of a real id
		id[:31] + "\n",                          // control character
		id[:31] + "g",                           // outside the alphabet
		"abcdefghijklmnopqrstuvwxyz",            // base32-shaped, not ours
		id[:30] + "..",                          // dots
		"\x00" + id[1:],                         // NUL
		"0123456789abcdef0123456789abcdéf"[:32], // multi-byte rune
	}
	for _, badID := range bad {
		t.Run(strings.ToValidUTF8(badID, "?"), func(t *testing.T) {
			if fileid.Valid(badID) {
				t.Fatalf("fileid.Valid(%q) = true", badID)
			}
			_, err := d.Open(context.Background(), &stage.OpenRequest{ID: badID, Length: -1})
			wantCode(t, err, stage.CodeNotFound)
		})
	}

	t.Run("rejected before any file access", func(t *testing.T) {
		// With the directory handle closed, any file access fails with an
		// internal error; a not-found answer proves none was attempted.
		st := d.cur.Load()
		d.Close()
		d.cur.Store(&state{cfg: st.cfg, root: st.root})
		defer d.cur.Store(nil)
		for _, badID := range bad {
			_, err := d.Open(context.Background(), &stage.OpenRequest{ID: badID, Length: -1})
			wantCode(t, err, stage.CodeNotFound)
		}
		_, err := d.Open(context.Background(), &stage.OpenRequest{ID: id, Length: -1})
		if stage.CodeOf(err) != stage.CodeInternal {
			t.Fatalf("a valid id on a closed directory gave %v; the probe proves nothing", err)
		}
	})

	t.Run("unknown valid id", func(t *testing.T) {
		d := configured(t, dir, newClock(), nil)
		_, err := d.Open(context.Background(), &stage.OpenRequest{ID: fileid.New(), Length: -1})
		wantCode(t, err, stage.CodeNotFound)
	})
}

func TestExpiry(t *testing.T) {
	c := newClock()
	d := configured(t, t.TempDir(), c, nil)
	id := store(t, d, []byte("%PDF-1.7"), time.Hour).ID

	c.Advance(59 * time.Minute)
	readRange(t, d, id, 0, -1)

	c.Advance(time.Minute)
	_, err := d.Open(context.Background(), &stage.OpenRequest{ID: id, Length: -1})
	wantCode(t, err, stage.CodeGone)
}

func TestSweepRemovesExpired(t *testing.T) {
	dir := t.TempDir()
	c := newClock()
	d := configured(t, dir, c, nil)
	short := store(t, d, []byte("%PDF short"), time.Hour).ID
	long := store(t, d, []byte("%PDF long"), 48*time.Hour).ID

	if n, err := d.Sweep(context.Background()); err != nil || n != 0 {
		t.Fatalf("sweep before expiry removed %d (%v)", n, err)
	}
	c.Advance(2 * time.Hour)
	n, err := d.Sweep(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if n != 2 {
		t.Fatalf("removed %d files, want the record and the data of one", n)
	}
	for _, p := range []string{dataPath(short), metaPath(short)} {
		if _, err := os.Stat(filepath.Join(dir, p)); !os.IsNotExist(err) {
			t.Fatalf("%s still there (%v)", p, err)
		}
	}
	_, err = d.Open(context.Background(), &stage.OpenRequest{ID: short, Length: -1})
	wantCode(t, err, stage.CodeNotFound)
	readRange(t, d, long, 0, -1)
}

func TestBackgroundSweeper(t *testing.T) {
	dir := t.TempDir()
	c := newClock()
	d := configured(t, dir, c, map[string]any{"sweepInterval": "10ms"})
	id := store(t, d, []byte("%PDF"), time.Hour).ID
	c.Advance(2 * time.Hour)

	deadline := time.Now().Add(5 * time.Second)
	for {
		_, err := os.Stat(filepath.Join(dir, dataPath(id)))
		if os.IsNotExist(err) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("sweeper did not remove the expired file within 5s (%v)", err)
		}
		time.Sleep(10 * time.Millisecond)
	}
	// Close must stop the sweeper: a second Close would hang otherwise.
	if err := d.Close(); err != nil {
		t.Fatal(err)
	}
}

func TestRestartOpensOldFiles(t *testing.T) {
	dir := t.TempDir()
	c := newClock()
	first := configured(t, dir, c, nil)
	pdf := pattern(5000)
	id := store(t, first, pdf, time.Hour).ID
	if err := first.Close(); err != nil {
		t.Fatal(err)
	}

	second := configured(t, dir, c, nil)
	got, _ := readRange(t, second, id, 0, -1)
	if !bytes.Equal(got, pdf) {
		t.Fatal("restarted sink read different bytes")
	}
}

func TestLifecycle(t *testing.T) {
	d := New(testLogger(t))
	if err := d.Health(context.Background()); stage.CodeOf(err) != stage.CodeUnavailable {
		t.Fatalf("health before configure: %v", err)
	}
	if _, err := d.Store(context.Background(), &stage.StoreRequest{PDF: []byte("x"), TTL: time.Hour}); stage.CodeOf(err) != stage.CodeUnavailable {
		t.Fatalf("store before configure: %v", err)
	}
	if err := d.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := d.Configure(context.Background(), &stage.ConfigureRequest{Config: []byte(`{"nope":1}`), DataDir: t.TempDir()}); err == nil {
		t.Fatal("bad config accepted")
	}
	if err := d.Close(); err != nil {
		t.Fatal(err)
	}
	resp, err := d.Configure(context.Background(), &stage.ConfigureRequest{DataDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	if resp.Info.Name != "sink-disk" {
		t.Fatalf("info %+v", resp.Info)
	}
	if err := d.Health(context.Background()); err != nil {
		t.Fatal(err)
	}
	d.Close()
	d.Close()
	if _, err := d.Open(context.Background(), &stage.OpenRequest{ID: fileid.New(), Length: -1}); stage.CodeOf(err) != stage.CodeUnavailable {
		t.Fatalf("open after close: %v", err)
	}
}

// A Store whose caller gives up while it writes (the host's sink timeout)
// leaves nothing behind: the request was refunded and its id never handed
// out, so the file would only take up room until it expired.
func TestStoreAbandonedLeavesNothing(t *testing.T) {
	dir := t.TempDir()
	c := newClock()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	// The clock is read once the writes are under way: the caller's
	// deadline passes then.
	d := New(testLogger(t), WithClock(func() time.Time { cancel(); return c.Now() }))
	raw, _ := json.Marshal(map[string]any{"dir": dir})
	if _, err := d.Configure(context.Background(), &stage.ConfigureRequest{Config: raw}); err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	if _, err := d.Store(ctx, &stage.StoreRequest{Owner: "user-1", Filename: "a.pdf", PDF: []byte("%PDF-1.7"), TTL: time.Hour}); err == nil {
		t.Fatal("a Store its caller gave up on succeeded")
	}
	var left []string
	_ = filepath.WalkDir(dir, func(path string, e fs.DirEntry, err error) error {
		if err == nil && !e.IsDir() {
			left = append(left, path)
		}
		return nil
	})
	if len(left) > 0 {
		t.Fatalf("an abandoned Store left %v", left)
	}
}
