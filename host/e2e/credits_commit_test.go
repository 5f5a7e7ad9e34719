package e2e

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"io"
	"net/http"
	"path/filepath"
	"testing"
	"time"

	_ "modernc.org/sqlite" // the driver the meter's SQLite store uses

	"github.com/mdpress/mdpress/host/internal/pdfcheck"
)

// TestAnswerBeforeCommit: the client has its whole PDF while the meter
// cannot yet commit the charge (the test holds the account database's
// write lock from the moment the credits are reserved), and the charge is
// made once the lock is released. Before, the answer waited for the
// commit, a meter round trip on every conversion.
func TestAnswerBeforeCommit(t *testing.T) {
	pdfcheck.Require(t)
	h := startHost(t, fpdf())
	_, key := h.account("pro", 5)
	db := accountsDB(t, h)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()

	answered := convertAsync(ctx, h, key, largeMarkdown(t))

	// Take the write lock as soon as the reservation is made, while the
	// document renders.
	var open int
	for open == 0 {
		if err := db.QueryRowContext(ctx, `SELECT count(*) FROM reservations WHERE state = 'reserved'`).Scan(&open); err != nil {
			t.Fatal(err)
		}
		select {
		case a := <-answered:
			t.Fatalf("answered (%d, %v) before the test saw the reservation: make the document heavier", a.status, a.err)
		case <-time.After(2 * time.Millisecond):
		}
	}
	conn := writeLock(ctx, t, db)
	// While the test holds the lock a commit cannot succeed, nor fail
	// before SQLite's busy timeout and the meter's timeout (10 s each)
	// from its start, which comes after the lock was taken: an answer
	// within that window did not wait for the commit. The window is the
	// bound, not 5 s: the rest of the render alone took longer on a loaded
	// CI machine.
	var a answer
	select {
	case a = <-answered:
	case <-time.After(9 * time.Second):
		_, _ = conn.ExecContext(ctx, "ROLLBACK")
		t.Fatal("no answer while the charge could not be committed: the answer waits for the commit")
	}
	if a.err != nil || a.status != http.StatusOK {
		t.Fatalf("answer: %d %v %.300s", a.status, a.err, a.body)
	}
	if pages := pdfcheck.Read(t, a.body).Pages; pages < 2 {
		t.Fatalf("the answer is a PDF of %d pages", pages)
	}
	var state string
	if err := conn.QueryRowContext(ctx, `SELECT state FROM reservations`).Scan(&state); err != nil || state != "reserved" {
		t.Fatalf("reservation %q (%v) while the test held the lock", state, err)
	}
	if _, err := conn.ExecContext(ctx, "ROLLBACK"); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(10 * time.Second); ; {
		if err := db.QueryRowContext(ctx, `SELECT state FROM reservations`).Scan(&state); err != nil {
			t.Fatal(err)
		}
		if state == "committed" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("reservation still %q after the lock was released", state)
		}
		time.Sleep(10 * time.Millisecond)
	}
	if b := h.balance(key); b != 4 {
		t.Fatalf("balance %d, want 4: one credit charged", b)
	}
}

// TestRenderWaitsForReservation: with render-fpdf, which reads the tree in
// parts, the document is parsed while the credits are being reserved, but
// nothing is rendered before they are. The test holds the account
// database's write lock from before the request: the parse finishes (its
// stage metric appears) while no reservation can be made, no render
// starts, and the PDF comes once the lock is released.
func TestRenderWaitsForReservation(t *testing.T) {
	pdfcheck.Require(t)
	h := startHost(t, fpdf())
	_, key := h.account("pro", 5)
	before := h.balance(key)
	db := accountsDB(t, h)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	conn := writeLock(ctx, t, db)
	locked := true
	defer func() {
		if locked {
			_, _ = conn.ExecContext(ctx, "ROLLBACK")
		}
	}()

	answered := convertAsync(ctx, h, key, "# After the reservation\n\nRendered once the credits were reserved.\n")

	seen := func(plugin, stageName string) bool {
		_, m := h.do("GET", "/metrics", "", nil, nil)
		return bytes.Contains(m, []byte(`mdpress_stage_duration_seconds_count{outcome="ok",plugin="`+plugin+`",stage="`+stageName+`"} 1`))
	}
	for deadline := time.Now().Add(5 * time.Second); !seen("parse-goldmark", "parse"); time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("nothing was parsed while the reservation waited: the parse waits for it")
		}
	}
	select {
	case a := <-answered:
		t.Fatalf("answered (%d, %v) before the credits were reserved", a.status, a.err)
	case <-time.After(300 * time.Millisecond):
	}
	if seen("render-fpdf", "render") {
		t.Fatal("rendered before the credits were reserved")
	}
	if _, err := conn.ExecContext(ctx, "ROLLBACK"); err != nil {
		t.Fatal(err)
	}
	locked = false
	var a answer
	select {
	case a = <-answered:
	case <-time.After(10 * time.Second):
		t.Fatal("no answer once the lock was released")
	}
	if a.err != nil || a.status != http.StatusOK {
		t.Fatalf("answer: %d %v %.300s", a.status, a.err, a.body)
	}
	if text := pdfcheck.Text(t, a.body); !bytes.Contains([]byte(text), []byte("Rendered once the credits were reserved.")) {
		t.Fatalf("PDF text = %q", text)
	}
	for deadline := time.Now().Add(10 * time.Second); h.balance(key) != before-1; time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("balance %d, want %d: the conversion was not charged", h.balance(key), before-1)
		}
	}
}

// answer is what a client got for a conversion sent by convertAsync.
type answer struct {
	status int
	body   []byte
	err    error
}

// convertAsync sends a conversion of markdown and delivers its answer on
// the channel returned.
func convertAsync(ctx context.Context, h *host, key, markdown string) <-chan answer {
	answered := make(chan answer, 1)
	go func() {
		body, _ := json.Marshal(map[string]string{"markdown": markdown})
		req, _ := http.NewRequestWithContext(ctx, "POST", h.URL+"/v1/pdf/markdown", bytes.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+key)
		req.Header.Set("Content-Type", "application/json")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			answered <- answer{err: err}
			return
		}
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		answered <- answer{resp.StatusCode, b, err}
	}()
	return answered
}

// accountsDB opens the host's account database, as the meter's SQLite
// store does, closed when the test ends.
// writeLock takes the account database's write lock on a connection of
// its own, which the caller ends with ROLLBACK.
func writeLock(ctx context.Context, t *testing.T, db *sql.DB) *sql.Conn {
	t.Helper()
	conn, err := db.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	if _, err := conn.ExecContext(ctx, "BEGIN IMMEDIATE"); err != nil {
		t.Fatal(err)
	}
	return conn
}

func accountsDB(t *testing.T, h *host) *sql.DB {
	t.Helper()
	db, err := sql.Open("sqlite", "file:"+filepath.Join(h.DataDir, "mdpress.db")+"?_pragma=busy_timeout(10000)")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}
