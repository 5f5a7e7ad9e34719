package accounts

import (
	"context"
	"errors"
	"fmt"

	"github.com/mdpress/mdpress/sdk/stage"
)

// badKey is the one answer to every failed authentication, so a caller
// cannot tell an unknown key from a revoked one.
func badKey() error { return stage.Errorf(stage.CodeUnauthenticated, "invalid API key") }

func (s *store) CreateKey(ctx context.Context, userID string) (string, KeyInfo, error) {
	key := newKey()
	info := KeyInfo{ID: newID("key_"), UserID: userID, CreatedAt: s.now()}
	err := s.db.write(ctx, func(q querier) error {
		if _, err := s.getAccount(ctx, q, userID, false); err != nil {
			return err
		}
		return insertKey(ctx, q, info, key)
	})
	if err != nil {
		return "", KeyInfo{}, err
	}
	return key, info, nil
}

func insertKey(ctx context.Context, q querier, info KeyInfo, key string) error {
	_, err := q.exec(ctx, `INSERT INTO api_keys (id, user_id, hash, created_us) VALUES ($1, $2, $3, $4)`,
		info.ID, info.UserID, hashKey(key), info.CreatedAt.UnixMicro())
	if err != nil {
		return fmt.Errorf("insert key: %w", err)
	}
	return nil
}

func (s *store) RevokeKey(ctx context.Context, keyID string) error {
	return s.db.write(ctx, func(q querier) error {
		n, err := q.exec(ctx, `UPDATE api_keys SET revoked_us = $2 WHERE id = $1 AND revoked_us = 0`,
			keyID, s.now().UnixMicro())
		if err != nil || n > 0 {
			return err
		}
		var one int
		err = q.queryRow(ctx, `SELECT 1 FROM api_keys WHERE id = $1`, keyID).Scan(&one)
		if errors.Is(err, errNoRows) {
			return stage.Errorf(stage.CodeNotFound, "API key %q not found", keyID)
		}
		return err
	})
}

const keyCols = `k.id, k.user_id, k.created_us, k.revoked_us`

func scanKey(r row, extra ...any) (KeyInfo, error) {
	var k KeyInfo
	var created, revoked int64
	err := r.Scan(append([]any{&k.ID, &k.UserID, &created, &revoked}, extra...)...)
	k.CreatedAt, k.RevokedAt = fromMicros(created), fromMicros(revoked)
	return k, err
}

func (s *store) Keys(ctx context.Context, userID string) ([]KeyInfo, error) {
	if _, err := s.getAccount(ctx, s.db, userID, false); err != nil {
		return nil, err
	}
	keys, err := collect(ctx, s.db, func(r rows) (KeyInfo, error) { return scanKey(r) },
		`SELECT `+keyCols+` FROM api_keys k WHERE k.user_id = $1 ORDER BY k.created_us, k.id`, userID)
	if err != nil {
		return nil, fmt.Errorf("list keys: %w", err)
	}
	return keys, nil
}

func (s *store) Authenticate(ctx context.Context, key string) (Account, KeyInfo, error) {
	if !wellFormedKey(key) {
		return Account{}, KeyInfo{}, badKey()
	}
	var a Account
	var reset, created int64
	k, err := scanKey(s.db.queryRow(ctx, `SELECT `+keyCols+`, a.plan, a.credits, a.last_reset_us, a.created_us
		FROM api_keys k JOIN accounts a ON a.id = k.user_id WHERE k.hash = $1`, hashKey(key)),
		&a.Plan, &a.Credits, &reset, &created)
	switch {
	case errors.Is(err, errNoRows):
		return Account{}, KeyInfo{}, badKey()
	case err != nil:
		return Account{}, KeyInfo{}, fmt.Errorf("authenticate: %w", err)
	case k.Revoked():
		return Account{}, KeyInfo{}, badKey()
	}
	a.ID, a.LastReset, a.CreatedAt = k.UserID, fromMicros(reset), fromMicros(created)
	return a, k, nil
}
