package accounts

import (
	"testing"
	"time"
)

func TestNextReset(t *testing.T) {
	d := func(y int, m time.Month, day int) time.Time { return time.Date(y, m, day, 9, 30, 0, 0, time.UTC) }
	for _, tc := range []struct {
		created, last, want time.Time
	}{
		{d(2026, 1, 15), d(2026, 1, 15), d(2026, 2, 15)},
		{d(2026, 10, 31), d(2026, 10, 31), d(2026, 11, 30)},
		{d(2026, 10, 31), d(2026, 11, 30), d(2026, 12, 31)},
		{d(2027, 1, 31), d(2027, 1, 31), d(2027, 2, 28)},
		{d(2028, 1, 31), d(2028, 1, 31), d(2028, 2, 29)}, // leap year
		{d(2028, 1, 30), d(2028, 2, 29), d(2028, 3, 30)},
		{d(2026, 12, 31), d(2026, 12, 31), d(2027, 1, 31)},
		{d(2026, 1, 29), d(2027, 1, 29), d(2027, 2, 28)},
		// A reset dated by a request (before resets were dated when due)
		// goes back onto the account's day.
		{d(2026, 1, 15), d(2026, 3, 20), d(2026, 4, 15)},
		{d(2026, 1, 15), time.Date(2026, 3, 15, 9, 29, 0, 0, time.UTC), d(2026, 3, 15)},
	} {
		a := Account{CreatedAt: tc.created, LastReset: tc.last}
		if got := a.NextReset(); !got.Equal(tc.want) {
			t.Errorf("created %s, last reset %s: next %s, want %s", tc.created.Format(time.DateOnly),
				tc.last.Format(time.DateTime), got.Format(time.DateOnly), tc.want.Format(time.DateOnly))
		}
	}
}

func TestDueReset(t *testing.T) {
	created := time.Date(2026, 1, 31, 23, 0, 0, 0, time.UTC)
	a := Account{CreatedAt: created, LastReset: created}
	for _, tc := range []struct{ now, want time.Time }{
		{time.Date(2026, 2, 28, 23, 0, 0, 0, time.UTC), time.Date(2026, 2, 28, 23, 0, 0, 0, time.UTC)},
		{time.Date(2026, 3, 30, 0, 0, 0, 0, time.UTC), time.Date(2026, 2, 28, 23, 0, 0, 0, time.UTC)},
		{time.Date(2026, 3, 31, 23, 0, 0, 0, time.UTC), time.Date(2026, 3, 31, 23, 0, 0, 0, time.UTC)},
		{time.Date(2027, 5, 1, 0, 0, 0, 0, time.UTC), time.Date(2027, 4, 30, 23, 0, 0, 0, time.UTC)},
	} {
		if got := a.dueReset(tc.now); !got.Equal(tc.want) {
			t.Errorf("at %s: due reset %s, want %s", tc.now, got, tc.want)
		}
	}
}
