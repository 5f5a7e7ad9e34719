// Package apikey authenticates API requests by their bearer key against the
// account store (core/accounts). Only the key's hash is ever looked up, and
// no key is ever logged.
package apikey

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"sync"

	"github.com/mdpress/mdpress/core/accounts"
	"github.com/mdpress/mdpress/sdk/stage"
)

// Version is reported in the plugin's Info.
const Version = "0.1.0"

// Authenticator is the auth stage over the account store.
type Authenticator struct {
	log  *slog.Logger
	opts []accounts.Option

	mu    sync.RWMutex // guards store against Configure and Close
	store accounts.Store
}

// New returns an unconfigured Authenticator; opts reach accounts.Open. It
// does no I/O.
func New(log *slog.Logger, opts ...accounts.Option) *Authenticator {
	return &Authenticator{log: log, opts: opts}
}

// Config is the plugin's block. It has no settings yet: where accounts live
// is shared by every plugin and arrives in ConfigureRequest.Accounts.
type Config struct{}

// Configure opens the account store. A second Configure replaces the first.
func (a *Authenticator) Configure(ctx context.Context, req *stage.ConfigureRequest) (*stage.ConfigureResponse, error) {
	if err := decodeStrict(req.Config, &Config{}); err != nil {
		return nil, err
	}
	st, err := accounts.OpenConfigured(ctx, req, a.opts...)
	if err != nil {
		return nil, openError(err)
	}
	a.mu.Lock()
	old := a.store
	a.store = st
	a.mu.Unlock()
	if old != nil {
		old.Close()
	}
	a.log.Info("auth-apikey configured", "driver", driverName(req.Accounts.Driver), "plans", len(req.Plans))
	return &stage.ConfigureResponse{Info: stage.Info{Name: "auth-apikey", Version: Version}}, nil
}

// Authenticate looks up the key. Any key that is not a live key of an
// account is the same CodeUnauthenticated error.
func (a *Authenticator) Authenticate(ctx context.Context, req *stage.AuthenticateRequest) (*stage.AuthenticateResponse, error) {
	a.mu.RLock()
	defer a.mu.RUnlock()
	if a.store == nil {
		return nil, notConfigured()
	}
	acct, key, err := a.store.Authenticate(ctx, req.Token)
	switch {
	case err == nil:
	case stage.CodeOf(err) != stage.CodeInternal, errors.Is(err, context.Canceled):
		return nil, err
	case errors.Is(err, context.DeadlineExceeded):
		return nil, stage.Wrap(stage.CodeTimeout, err, "the account store did not answer in time")
	default: // the SDK logs the cause; the store's errors never hold the key
		return nil, stage.Wrap(stage.CodeUnavailable, err, "the account store is unavailable")
	}
	plan, err := a.store.Plan(acct.Plan)
	if err != nil {
		a.log.WarnContext(ctx, "account on a plan that is not configured", "userId", acct.ID, "plan", acct.Plan)
		return nil, stage.Errorf(stage.CodeForbidden, "the account's plan %q is not offered; contact the operator", acct.Plan)
	}
	return &stage.AuthenticateResponse{Principal: stage.Principal{UserID: acct.ID, KeyID: key.ID, Plan: plan}}, nil
}

// Health checks that the account store answers.
func (a *Authenticator) Health(ctx context.Context) error {
	a.mu.RLock()
	defer a.mu.RUnlock()
	if a.store == nil {
		return notConfigured()
	}
	if err := a.store.Ping(ctx); err != nil {
		return stage.Wrap(stage.CodeUnavailable, err, "the account store is unavailable")
	}
	return nil
}

// Close closes the store. It is safe twice and before Configure.
func (a *Authenticator) Close() error {
	a.mu.Lock()
	st := a.store
	a.store = nil
	a.mu.Unlock()
	if st == nil {
		return nil
	}
	return st.Close()
}

func notConfigured() error {
	return stage.Errorf(stage.CodeUnavailable, "auth-apikey is not configured")
}

// openError keeps the store's own errors as they are (they name what is
// wrong and where, and only their message reaches the host) and reports
// anything else as an unreachable store.
func openError(err error) error {
	var se *stage.Error
	if errors.As(err, &se) {
		return err
	}
	return stage.Wrap(stage.CodeUnavailable, err, "auth-apikey: cannot open the account store")
}

func driverName(d string) string {
	if d == "" {
		return accounts.DriverSQLite
	}
	return d
}

// decodeStrict decodes the plugin's JSON block into v, rejecting unknown
// keys by name. An empty block is fine.
func decodeStrict(raw []byte, v any) error {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return nil
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return stage.Wrap(stage.CodeInvalid, err, "auth-apikey config: "+err.Error())
	}
	if _, err := dec.Token(); err != io.EOF {
		return stage.Errorf(stage.CodeInvalid, "auth-apikey config: trailing data after the object")
	}
	return nil
}

var _ stage.Authenticator = (*Authenticator)(nil)
var _ stage.Plugin = (*Authenticator)(nil)
