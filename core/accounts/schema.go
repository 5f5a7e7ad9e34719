package accounts

import (
	"context"
	"fmt"
	"strings"
	"time"
)

// migration is one step of the schema. Applied steps are never edited; a
// change is a new step with the next version. {{serial}} stands for each
// engine's auto-incrementing primary key.
type migration struct {
	version int
	stmts   []string
}

// Timestamps are BIGINT microseconds since the Unix epoch, UTC, in both
// engines: exact, ordered, and free of each driver's time conversions.
var migrations = []migration{
	{version: 1, stmts: []string{
		`CREATE TABLE accounts (
			id            TEXT PRIMARY KEY,
			plan          TEXT NOT NULL,
			credits       BIGINT NOT NULL CHECK (credits >= 0),
			last_reset_us BIGINT NOT NULL,
			created_us    BIGINT NOT NULL
		)`,
		`CREATE TABLE api_keys (
			id         TEXT PRIMARY KEY,
			user_id    TEXT NOT NULL REFERENCES accounts (id),
			hash       TEXT NOT NULL UNIQUE,
			created_us BIGINT NOT NULL,
			revoked_us BIGINT NOT NULL DEFAULT 0
		)`,
		`CREATE INDEX api_keys_user ON api_keys (user_id)`,
		// state: reserved -> committed | refunded, once.
		`CREATE TABLE reservations (
			id           TEXT PRIMARY KEY,
			user_id      TEXT NOT NULL REFERENCES accounts (id),
			credits      BIGINT NOT NULL CHECK (credits > 0),
			state        TEXT NOT NULL CHECK (state IN ('reserved', 'committed', 'refunded')),
			idem_key     TEXT NOT NULL DEFAULT '',
			request_hash TEXT NOT NULL DEFAULT '',
			result       TEXT NOT NULL DEFAULT '',
			created_us   BIGINT NOT NULL,
			finished_us  BIGINT NOT NULL DEFAULT 0
		)`,
		`CREATE INDEX reservations_open ON reservations (created_us) WHERE state = 'reserved'`,
		`CREATE INDEX reservations_idem ON reservations (user_id, idem_key, created_us) WHERE idem_key <> ''`,
		`CREATE TABLE ledger (
			seq            {{serial}},
			user_id        TEXT NOT NULL REFERENCES accounts (id),
			kind           TEXT NOT NULL,
			delta          BIGINT NOT NULL,
			balance        BIGINT NOT NULL,
			reason         TEXT NOT NULL DEFAULT '',
			reservation_id TEXT NOT NULL DEFAULT '',
			created_us     BIGINT NOT NULL
		)`,
		`CREATE INDEX ledger_user ON ledger (user_id, seq)`,
	}},
	// The monthly reset each reservation was made under (last_reset_us of
	// its account then), so that a refund knows whether a reset has
	// restored the balance since without comparing two hosts' clocks; -1
	// for reservations made before this column.
	{version: 2, stmts: []string{
		`ALTER TABLE reservations ADD COLUMN reset_us BIGINT NOT NULL DEFAULT -1`,
	}},
	// The finished reservations PruneFinished deletes, oldest first.
	{version: 3, stmts: []string{
		`CREATE INDEX reservations_finished ON reservations (finished_us) WHERE state <> 'reserved'`,
	}},
}

// applyMigrations brings the schema up to date inside the caller's
// transaction, which already excludes every other migrator.
func applyMigrations(ctx context.Context, q querier, ms []migration, serial string) error {
	if _, err := q.exec(ctx, `CREATE TABLE IF NOT EXISTS schema_migrations (
		version    INTEGER PRIMARY KEY,
		applied_us BIGINT NOT NULL
	)`); err != nil {
		return err
	}
	var current int
	if err := q.queryRow(ctx, `SELECT COALESCE(MAX(version), 0) FROM schema_migrations`).Scan(&current); err != nil {
		return fmt.Errorf("read schema version: %w", err)
	}
	if latest := ms[len(ms)-1].version; current > latest {
		return fmt.Errorf("database schema version %d is newer than this build's %d", current, latest)
	}
	for _, m := range ms {
		if m.version <= current {
			continue
		}
		for _, s := range m.stmts {
			if _, err := q.exec(ctx, strings.ReplaceAll(s, "{{serial}}", serial)); err != nil {
				return fmt.Errorf("migration %d: %w", m.version, err)
			}
		}
		if _, err := q.exec(ctx, `INSERT INTO schema_migrations (version, applied_us) VALUES ($1, $2)`,
			m.version, time.Now().UnixMicro()); err != nil {
			return fmt.Errorf("migration %d: %w", m.version, err)
		}
	}
	return nil
}
