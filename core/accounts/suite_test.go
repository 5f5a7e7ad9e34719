package accounts

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mdpress/mdpress/sdk/stage"
)

// TestStore runs one suite against every engine: both must keep the same
// promises.
func TestStore(t *testing.T) {
	cases := []struct {
		name string
		run  func(t *testing.T, b backend)
	}{
		{"Accounts", testAccounts},
		{"Keys", testKeys},
		{"ConcurrentReserve", testConcurrentReserve},
		{"TwoStoresOneDatabase", testTwoStores},
		{"CommitAndRefund", testCommitAndRefund},
		{"ReleaseExpired", testReleaseExpired},
		{"MonthlyReset", testMonthlyReset},
		{"ResetOnShortMonths", testResetOnShortMonths},
		{"Idempotency", testIdempotency},
		{"ConcurrentOpen", testConcurrentOpen},
		{"ClockSkewRefund", testClockSkewRefund},
		{"ClockSkewIdempotency", testClockSkewIdempotency},
		{"RefundOfReservationFromBeforeResetColumn", testRefundWithoutResetColumn},
		{"CreditBesideOpenReservations", testCreditBesideOpenReservations},
		{"AccountWithKey", testAccountWithKey},
		{"PruneFinished", testPruneFinished},
	}
	for _, b := range backends {
		t.Run(b.driver, func(t *testing.T) {
			for _, c := range cases {
				t.Run(c.name, func(t *testing.T) { c.run(t, b) })
			}
		})
	}
}

func testAccounts(t *testing.T, b backend) {
	ctx := t.Context()
	clk := newClock(time.Date(2026, 3, 10, 12, 0, 0, 0, time.UTC))
	s := open(t, b, b.newDB(t), WithClock(clk.Now))

	free := must[Account](t)(s.CreateAccount(ctx, "free", nil))
	if !strings.HasPrefix(free.ID, "usr_") || free.Plan != "free" || free.Credits != 50 {
		t.Fatalf("free account = %+v, want usr_ id, plan free, 50 credits", free)
	}
	if !free.LastReset.Equal(clk.Now()) || !free.CreatedAt.Equal(clk.Now()) || free.LastReset.Location() != time.UTC {
		t.Errorf("times = %v / %v, want %v in UTC", free.LastReset, free.CreatedAt, clk.Now())
	}
	clk.Advance(time.Second)
	pro := must[Account](t)(s.CreateAccount(ctx, "pro", ptr[int64](7)))
	if pro.Credits != 7 {
		t.Errorf("pro credits = %d, want the 7 asked for", pro.Credits)
	}
	clk.Advance(time.Second)
	zero := must[Account](t)(s.CreateAccount(ctx, "pro", ptr[int64](0)))
	if zero.Credits != 0 {
		t.Errorf("credits = %d, want 0", zero.Credits)
	}

	t.Run("errors", func(t *testing.T) {
		for _, tc := range []struct {
			name string
			err  error
			want stage.Code
		}{
			{"unknown plan", second(s.CreateAccount(ctx, "gold", nil)), stage.CodeInvalid},
			{"negative credits", second(s.CreateAccount(ctx, "free", ptr[int64](-1))), stage.CodeInvalid},
			{"unknown account", second(s.Account(ctx, "usr_nobody")), stage.CodeNotFound},
			{"set unknown plan", second(s.SetPlan(ctx, free.ID, "gold")), stage.CodeInvalid},
			{"set plan of unknown account", second(s.SetPlan(ctx, "usr_nobody", "pro")), stage.CodeNotFound},
			{"credit zero", second(s.Credit(ctx, free.ID, 0, "")), stage.CodeInvalid},
			{"credit below zero", second(s.Credit(ctx, free.ID, -51, "")), stage.CodeInvalid},
			{"credit unknown account", second(s.Credit(ctx, "usr_nobody", 1, "")), stage.CodeNotFound},
			{"ledger of unknown account", second(s.Ledger(ctx, "usr_nobody")), stage.CodeNotFound},
			{"plan", second(s.Plan("gold")), stage.CodeInvalid},
		} {
			t.Run(tc.name, func(t *testing.T) { wantCode(t, tc.err, tc.want) })
		}
	})

	// The most negative credit is refused in its own figure, not one
	// whose sign overflowed.
	if _, err := s.Credit(ctx, free.ID, math.MinInt64, ""); err == nil || !strings.Contains(err.Error(), "9223372036854775808 taken") || strings.Contains(err.Error(), "-9223372036854775808") {
		t.Errorf("credit of MinInt64: %v", err)
	}

	got := must[Account](t)(s.Credit(ctx, free.ID, 25, "support gift"))
	if got.Credits != 75 {
		t.Errorf("after +25: %d credits, want 75", got.Credits)
	}
	got = must[Account](t)(s.Credit(ctx, free.ID, -75, "chargeback"))
	if got.Credits != 0 {
		t.Errorf("after -75: %d credits, want 0", got.Credits)
	}
	got = must[Account](t)(s.SetPlan(ctx, free.ID, "pro"))
	if got.Plan != "pro" || got.Credits != 0 {
		t.Errorf("after SetPlan: %+v, want plan pro with the balance unchanged", got)
	}
	if p := must[stage.Plan](t)(s.Plan("pro")); p != testPlans[1] {
		t.Errorf("Plan(pro) = %+v", p)
	}

	all := must[[]Account](t)(s.Accounts(ctx))
	if len(all) != 3 || all[0].ID != free.ID || all[1].ID != pro.ID || all[0].Plan != "pro" {
		t.Errorf("Accounts = %+v, want free (now pro), pro, zero in creation order", all)
	}
	entries := checkLedger(t, s, free.ID)
	var kinds []string
	for _, e := range entries {
		kinds = append(kinds, e.Kind+":"+e.Reason)
	}
	want := "create:opening balance on plan free,credit:support gift,credit:chargeback"
	if strings.Join(kinds, ",") != want {
		t.Errorf("ledger = %v, want %s", kinds, want)
	}
	checkLedger(t, s, pro.ID)
}

func second[T any](_ T, err error) error { return err }

func testKeys(t *testing.T, b backend) {
	ctx := t.Context()
	dsn := b.newDB(t)
	s := open(t, b, dsn)
	a := must[Account](t)(s.CreateAccount(ctx, "free", nil))

	key, info, err := s.CreateKey(ctx, a.ID)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(key, KeyPrefix) || len(key) != len(KeyPrefix)+52 || !strings.HasPrefix(info.ID, "key_") {
		t.Fatalf("key %d chars, id %q: want mdp_ + 52 base32 characters and a key_ id", len(key), info.ID)
	}
	key2, info2, err := s.CreateKey(ctx, a.ID)
	if err != nil {
		t.Fatal(err)
	}
	if key2 == key || info2.ID == info.ID {
		t.Fatal("two keys are the same")
	}

	gotA, gotK, err := s.Authenticate(ctx, key)
	if err != nil {
		t.Fatal(err)
	}
	if gotA.ID != a.ID || gotA.Plan != "free" || gotA.Credits != 50 || gotK.ID != info.ID || gotK.Revoked() {
		t.Errorf("Authenticate = %+v, %+v; want account %s and key %s", gotA, gotK, a.ID, info.ID)
	}

	t.Run("clear key never stored", func(t *testing.T) {
		dump := b.dump(t, dsn)
		if !bytes.Contains(dump, []byte(hashKey(key))) {
			t.Fatal("the dump does not hold the key's hash: it is not reading the database")
		}
		for _, k := range []string{key, key2} {
			if bytes.Contains(dump, []byte(k)) || bytes.Contains(dump, []byte(k[len(KeyPrefix):])) {
				t.Errorf("the database holds a clear API key")
			}
		}
	})

	t.Run("rejected", func(t *testing.T) {
		for name, k := range map[string]string{
			"empty":       "",
			"unknown":     newKey(),
			"truncated":   key[:len(key)-1],
			"extended":    key + "a",
			"upper case":  strings.ToUpper(key),
			"no prefix":   key[len(KeyPrefix):],
			"bearer":      "Bearer " + key,
			"hash as key": hashKey(key),
		} {
			t.Run(name, func(t *testing.T) {
				_, _, err := s.Authenticate(ctx, k)
				wantCode(t, err, stage.CodeUnauthenticated)
			})
		}
	})

	// The auth plugin's store is another process's: warm every one of its
	// connections, then revoke through s.
	auth := open(t, b, dsn)
	authenticateAll := func() []error {
		errs := make([]error, 8)
		var wg sync.WaitGroup
		for i := range errs {
			wg.Go(func() { _, _, errs[i] = auth.Authenticate(ctx, key) })
		}
		wg.Wait()
		return errs
	}
	for _, err := range authenticateAll() {
		if err != nil {
			t.Fatalf("before the revoke: %v", err)
		}
	}
	if err := s.RevokeKey(ctx, info.ID); err != nil {
		t.Fatal(err)
	}
	for _, err := range authenticateAll() {
		wantCode(t, err, stage.CodeUnauthenticated) // at once, on every connection
	}
	if err := s.RevokeKey(ctx, info.ID); err != nil {
		t.Errorf("revoking twice: %v", err)
	}
	wantCode(t, s.RevokeKey(ctx, "key_nothere"), stage.CodeNotFound)
	_, _, err = s.Authenticate(ctx, key)
	wantCode(t, err, stage.CodeUnauthenticated)
	if _, k, err := s.Authenticate(ctx, key2); err != nil || k.ID != info2.ID {
		t.Errorf("the other key stopped working: %v", err)
	}

	keys := must[[]KeyInfo](t)(s.Keys(ctx, a.ID))
	if len(keys) != 2 || keys[0].ID != info.ID || !keys[0].Revoked() || keys[1].Revoked() {
		t.Errorf("Keys = %+v, want the first revoked, the second valid", keys)
	}
	_, _, err = s.CreateKey(ctx, "usr_nobody")
	wantCode(t, err, stage.CodeNotFound)
	_, err = s.Keys(ctx, "usr_nobody")
	wantCode(t, err, stage.CodeNotFound)
}

// burst runs n Reserve+Commit calls at once, spread over stores, and counts
// the outcomes.
func burst(t *testing.T, stores []Store, userID string, n int) (ok, forbidden int) {
	t.Helper()
	var okN, forbiddenN atomic.Int64
	var wg sync.WaitGroup
	start := make(chan struct{})
	errs := make(chan error, n)
	for i := range n {
		s := stores[i%len(stores)]
		wg.Go(func() {
			<-start
			res, _, err := s.Reserve(t.Context(), ReserveParams{UserID: userID, Credits: 1})
			if stage.CodeOf(err) == stage.CodeForbidden {
				forbiddenN.Add(1)
				return
			}
			if err == nil {
				err = s.Commit(t.Context(), res.ID, fmt.Sprint("result ", i))
			}
			if err != nil {
				errs <- err
				return
			}
			okN.Add(1)
		})
	}
	close(start)
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Errorf("unexpected error: %v", err)
	}
	return int(okN.Load()), int(forbiddenN.Load())
}

func testConcurrentReserve(t *testing.T, b backend) {
	s := open(t, b, b.newDB(t))
	a := must[Account](t)(s.CreateAccount(t.Context(), "free", ptr[int64](20)))

	ok, forbidden := burst(t, []Store{s}, a.ID, 60)
	if ok != 20 || forbidden != 40 {
		t.Errorf("%d reserved, %d refused; want exactly 20 and 40", ok, forbidden)
	}
	if got := must[Account](t)(s.Account(t.Context(), a.ID)); got.Credits != 0 {
		t.Errorf("balance %d, want 0", got.Credits)
	}
	var reserved int64
	for _, e := range checkLedger(t, s, a.ID) {
		if e.Kind == LedgerReserve {
			reserved += e.Delta
		}
	}
	if reserved != -20 {
		t.Errorf("ledger reserves sum to %d, want -20", reserved)
	}
}

func testTwoStores(t *testing.T, b backend) {
	dsn := b.newDB(t)
	s1, s2 := open(t, b, dsn), open(t, b, dsn)
	a := must[Account](t)(s1.CreateAccount(t.Context(), "free", ptr[int64](20)))

	ok, forbidden := burst(t, []Store{s1, s2}, a.ID, 60)
	if ok != 20 || forbidden != 40 {
		t.Errorf("%d reserved, %d refused across two stores; want exactly 20 and 40", ok, forbidden)
	}
	for _, s := range []Store{s1, s2} {
		if got := must[Account](t)(s.Account(t.Context(), a.ID)); got.Credits != 0 {
			t.Errorf("balance %d, want 0", got.Credits)
		}
	}
	checkLedger(t, s2, a.ID)
}

func testCommitAndRefund(t *testing.T, b backend) {
	ctx := t.Context()
	s := open(t, b, b.newDB(t))
	a := must[Account](t)(s.CreateAccount(ctx, "free", ptr[int64](10)))
	balance := func() int64 { return must[Account](t)(s.Account(ctx, a.ID)).Credits }

	res, replay, err := s.Reserve(ctx, ReserveParams{UserID: a.ID, Credits: 3})
	if err != nil || replay != nil {
		t.Fatalf("Reserve: %v, replay %v", err, replay)
	}
	if !strings.HasPrefix(res.ID, "res_") || res.Credits != 3 || res.Balance != 7 || res.UserID != a.ID {
		t.Errorf("reservation = %+v", res)
	}
	if got := balance(); got != 7 {
		t.Errorf("balance after reserving 3 of 10: %d, want 7 (deducted at once)", got)
	}
	for range 2 {
		if err := s.Refund(ctx, res.ID, "render failed"); err != nil {
			t.Fatal(err)
		}
		if got := balance(); got != 10 {
			t.Errorf("balance after refund: %d, want 10", got)
		}
	}
	// The credits are back: the result must not be delivered as paid.
	wantCode(t, s.Commit(ctx, res.ID, "late"), stage.CodeTimeout)
	if got := balance(); got != 10 {
		t.Errorf("commit after refund changed the balance to %d", got)
	}

	res2 := must[Reservation](t)(first(s.Reserve(ctx, ReserveParams{UserID: a.ID, Credits: 4})))
	for range 2 {
		if err := s.Commit(ctx, res2.ID, "ok"); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Refund(ctx, res2.ID, "too late"); err != nil {
		t.Errorf("refund after commit: %v, want a no-op", err)
	}
	if got := balance(); got != 6 {
		t.Errorf("balance after a committed 4: %d, want 6", got)
	}

	_, _, err = s.Reserve(ctx, ReserveParams{UserID: a.ID, Credits: 7})
	wantCode(t, err, stage.CodeForbidden)
	if msg := stage.SafeMessage(err); !strings.Contains(msg, "out of credits: 6 left, 7 needed") || !strings.Contains(msg, "resets to 50") {
		t.Errorf("message %q does not say what is left, what is needed and when it resets", msg)
	}
	for _, tc := range []struct {
		name string
		err  error
		want stage.Code
	}{
		{"zero credits", lastErr(s.Reserve(ctx, ReserveParams{UserID: a.ID})), stage.CodeInvalid},
		{"unknown account", lastErr(s.Reserve(ctx, ReserveParams{UserID: "usr_nobody", Credits: 1})), stage.CodeNotFound},
		{"long idempotency key", lastErr(s.Reserve(ctx, ReserveParams{UserID: a.ID, Credits: 1, IdempotencyKey: strings.Repeat("k", 256)})), stage.CodeInvalid},
		{"commit unknown", s.Commit(ctx, "res_nothere", ""), stage.CodeNotFound},
		{"refund unknown", s.Refund(ctx, "res_nothere", ""), stage.CodeNotFound},
	} {
		t.Run(tc.name, func(t *testing.T) { wantCode(t, tc.err, tc.want) })
	}

	var kinds []string
	for _, e := range checkLedger(t, s, a.ID) {
		kinds = append(kinds, fmt.Sprintf("%s%+d", e.Kind, e.Delta))
	}
	if got, want := strings.Join(kinds, " "), "create+10 reserve-3 refund+3 reserve-4"; got != want {
		t.Errorf("ledger %q, want %q", got, want)
	}
}

func first[T, U any](v T, _ U, err error) (T, error) { return v, err }

func testReleaseExpired(t *testing.T, b backend) {
	ctx := t.Context()
	clk := newClock(time.Date(2026, 5, 1, 9, 0, 0, 0, time.UTC))
	s := open(t, b, b.newDB(t), WithClock(clk.Now), WithReservationTTL(10*time.Minute))
	a := must[Account](t)(s.CreateAccount(ctx, "free", ptr[int64](10)))
	reserve := func(n int64) Reservation {
		return must[Reservation](t)(first(s.Reserve(ctx, ReserveParams{UserID: a.ID, Credits: n})))
	}

	stuck := reserve(2)     // its host died: never finished
	committed := reserve(3) // finished normally
	if err := s.Commit(ctx, committed.ID, ""); err != nil {
		t.Fatal(err)
	}
	clk.Advance(5 * time.Minute)
	young := reserve(1) // still inside the TTL at the check below

	clk.Advance(5*time.Minute + time.Second)
	if n := must[int](t)(s.ReleaseExpired(ctx)); n != 1 {
		t.Fatalf("released %d, want only the stuck reservation", n)
	}
	if got := must[Account](t)(s.Account(ctx, a.ID)).Credits; got != 10-3-1 {
		t.Errorf("balance %d, want 6 (stuck 2 back, committed 3 and young 1 still out)", got)
	}
	if n := must[int](t)(s.ReleaseExpired(ctx)); n != 0 {
		t.Errorf("second sweep released %d, want 0", n)
	}
	// The host finishing after the sweep must not charge or refund twice,
	// and learns that its result was not paid for.
	wantCode(t, s.Commit(ctx, stuck.ID, ""), stage.CodeTimeout)
	if err := s.Refund(ctx, stuck.ID, ""); err != nil {
		t.Errorf("late refund: %v", err)
	}
	if err := s.Commit(ctx, young.ID, ""); err != nil {
		t.Fatal(err)
	}
	clk.Advance(time.Hour)
	if n := must[int](t)(s.ReleaseExpired(ctx)); n != 0 {
		t.Errorf("released %d committed reservations", n)
	}
	entries := checkLedger(t, s, a.ID)
	if last := entries[len(entries)-1]; last.Kind != LedgerRefund || last.ReservationID != stuck.ID || !strings.HasPrefix(last.Reason, "expired") {
		t.Errorf("ledger entry for the sweep = %+v", last)
	}
	if got := must[Account](t)(s.Account(ctx, a.ID)).Credits; got != 6 {
		t.Errorf("balance %d, want 6", got)
	}
}

func testMonthlyReset(t *testing.T, b backend) {
	ctx := t.Context()
	clk := newClock(time.Date(2026, 1, 15, 10, 0, 0, 0, time.UTC))
	s := open(t, b, b.newDB(t), WithClock(clk.Now))
	a := must[Account](t)(s.CreateAccount(ctx, "free", ptr[int64](10)))
	reserve := func() (Reservation, error) {
		return first(s.Reserve(ctx, ReserveParams{UserID: a.ID, Credits: 5}))
	}
	if _, err := reserve(); err != nil {
		t.Fatal(err)
	}
	pending := must[Reservation](t)(reserve()) // still open at the reset

	clk.Set(time.Date(2026, 2, 15, 9, 59, 59, 0, time.UTC))
	if got := must[Account](t)(s.Account(ctx, a.ID)); got.Credits != 0 || !got.LastReset.Equal(a.LastReset) {
		t.Errorf("a second before a month has passed: %+v, want no reset", got)
	}
	_, err := reserve()
	wantCode(t, err, stage.CodeForbidden)

	clk.Set(time.Date(2026, 2, 15, 10, 0, 0, 0, time.UTC))
	got := must[Account](t)(s.Account(ctx, a.ID))
	if got.Credits != 50 || !got.LastReset.Equal(clk.Now()) {
		t.Errorf("a month later: %+v, want 50 credits reset at %v", got, clk.Now())
	}
	// The pending reservation came out of last month's balance, which the
	// reset replaced: refunding it must not add to this month's.
	if err := s.Refund(ctx, pending.ID, "failed"); err != nil {
		t.Fatal(err)
	}
	if got := must[Account](t)(s.Account(ctx, a.ID)).Credits; got != 50 {
		t.Errorf("refund of a pre-reset reservation: balance %d, want 50", got)
	}

	// Reserve applies the reset too, without an Account call first.
	clk.Set(time.Date(2026, 3, 20, 0, 0, 0, 0, time.UTC))
	if _, err := s.Credit(ctx, a.ID, -50, "spent elsewhere"); err != nil {
		t.Fatal(err)
	}
	clk.Set(time.Date(2026, 4, 20, 0, 0, 0, 0, time.UTC))
	res := must[Reservation](t)(reserve())
	if res.Balance != 45 {
		t.Errorf("reserve after a month: balance %d, want 50-5", res.Balance)
	}
	// Due a reset while the old balance still covers the request: the
	// charge comes out of the new month's balance.
	clk.Set(time.Date(2026, 5, 20, 0, 0, 0, 0, time.UTC))
	if res := must[Reservation](t)(reserve()); res.Balance != 45 {
		t.Errorf("reserve with a reset due and credits left: balance %d, want 50-5", res.Balance)
	}
	// Found due on the 20th, the reset is dated the 15th, when it fell due:
	// the next one stays on the account's day of the month.
	may15 := time.Date(2026, 5, 15, 10, 0, 0, 0, time.UTC)
	if got := must[Account](t)(s.Account(ctx, a.ID)); got.Credits != 45 || !got.LastReset.Equal(may15) {
		t.Errorf("after the May reserve: %+v, want 45 credits reset at %v", got, may15)
	}
	if got := must[Account](t)(s.Account(ctx, a.ID)).NextReset(); !got.Equal(may15.AddDate(0, 1, 0)) {
		t.Errorf("after the May reserve: next reset %v, want June 15", got)
	}

	var resets []string
	for _, e := range checkLedger(t, s, a.ID) {
		if e.Kind == LedgerReset {
			resets = append(resets, fmt.Sprintf("%+d@%s", e.Delta, e.At.Format(time.DateOnly)))
		}
	}
	// Credit in March applied the February->March reset first.
	if got, want := strings.Join(resets, " "), "+50@2026-02-15 +0@2026-03-20 +50@2026-04-20 +5@2026-05-20"; got != want {
		t.Errorf("resets %q, want %q", got, want)
	}
}

// testResetOnShortMonths: an account opened on the 31st resets every month,
// on the last day of the months that have no 31st, and a reset applied
// late does not move the next.
func testResetOnShortMonths(t *testing.T, b backend) {
	ctx := t.Context()
	at := func(m time.Month, d int) time.Time { return time.Date(2027, m, d, 12, 0, 0, 0, time.UTC) }
	clk := newClock(at(time.January, 31))
	s := open(t, b, b.newDB(t), WithClock(clk.Now))
	a := must[Account](t)(s.CreateAccount(ctx, "free", ptr[int64](0)))
	if got := a.NextReset(); !got.Equal(at(time.February, 28)) {
		t.Fatalf("opened on 31 January: next reset %v, want 28 February", got)
	}
	_, _, err := s.Reserve(ctx, ReserveParams{UserID: a.ID, Credits: 1})
	wantCode(t, err, stage.CodeForbidden)
	var se *stage.Error
	if errors.As(err, &se) && se.Details["nextReset"] != "2027-02-28T12:00:00Z" {
		t.Errorf("out of credits: nextReset %q, want 2027-02-28T12:00:00Z", se.Details["nextReset"])
	}
	for _, step := range []struct {
		now, last, next time.Time
	}{
		{at(time.February, 28), at(time.February, 28), at(time.March, 31)},
		{at(time.March, 31), at(time.March, 31), at(time.April, 30)},
		// Nobody asked in May: the June request finds the May reset due,
		// dated 31 May, and the next stays on the 30th of June.
		{at(time.June, 10), at(time.May, 31), at(time.June, 30)},
	} {
		clk.Set(step.now)
		if _, err := s.Credit(ctx, a.ID, -1, "spend"); err != nil {
			t.Fatal(err)
		}
		got := must[Account](t)(s.Account(ctx, a.ID))
		if got.Credits != 49 || !got.LastReset.Equal(step.last) || !got.NextReset().Equal(step.next) {
			t.Errorf("at %s: %d credits, reset %s, next %s; want 49, %s, %s", step.now.Format(time.DateOnly),
				got.Credits, got.LastReset.Format(time.DateOnly), got.NextReset().Format(time.DateOnly),
				step.last.Format(time.DateOnly), step.next.Format(time.DateOnly))
		}
	}
}

func testIdempotency(t *testing.T, b backend) {
	ctx := t.Context()
	clk := newClock(time.Date(2026, 6, 1, 8, 0, 0, 0, time.UTC))
	s := open(t, b, b.newDB(t), WithClock(clk.Now))
	a := must[Account](t)(s.CreateAccount(ctx, "free", ptr[int64](10)))
	other := must[Account](t)(s.CreateAccount(ctx, "free", ptr[int64](10)))
	reserve := func(user, key, hash string) (Reservation, *Replay, error) {
		return s.Reserve(ctx, ReserveParams{UserID: user, Credits: 1, IdempotencyKey: key, RequestHash: hash})
	}
	balance := func(id string) int64 { return must[Account](t)(s.Account(ctx, id)).Credits }

	res, _, err := reserve(a.ID, "K", "H")
	if err != nil {
		t.Fatal(err)
	}
	_, _, err = reserve(a.ID, "K", "H")
	wantCode(t, err, stage.CodeBusy)
	_, _, err = reserve(a.ID, "K", "H2")
	wantCode(t, err, stage.CodeInvalid)

	if err := s.Commit(ctx, res.ID, "file-1"); err != nil {
		t.Fatal(err)
	}
	clk.Advance(23 * time.Hour)
	for range 2 {
		got, replay, err := reserve(a.ID, "K", "H")
		if err != nil || replay == nil || replay.Result != "file-1" || got.ID != "" {
			t.Fatalf("retry: %+v, %+v, %v; want a replay of file-1", got, replay, err)
		}
	}
	if got := balance(a.ID); got != 9 {
		t.Errorf("balance %d after one charge and two replays, want 9", got)
	}
	_, _, err = reserve(a.ID, "K", "H2")
	wantCode(t, err, stage.CodeInvalid)
	if msg := stage.SafeMessage(err); msg != "Idempotency-Key reused with a different request: send a new key for a different document or options" {
		t.Errorf("message %q", msg)
	}
	if se := (*stage.Error)(nil); !errors.As(err, &se) || se.Details["field"] != "Idempotency-Key" {
		t.Errorf("details of %v do not name the field Idempotency-Key", err)
	}

	// Keys belong to one user.
	if _, replay, err := reserve(other.ID, "K", "H"); err != nil || replay != nil {
		t.Errorf("another user's K: replay %v, err %v; want a fresh charge", replay, err)
	}
	if got := balance(other.ID); got != 9 {
		t.Errorf("other balance %d, want 9", got)
	}

	// A refunded request may be retried, and is charged again.
	failed := must[Reservation](t)(first(reserve(a.ID, "R", "H")))
	if err := s.Refund(ctx, failed.ID, "render failed"); err != nil {
		t.Fatal(err)
	}
	retry, replay, err := reserve(a.ID, "R", "H")
	if err != nil || replay != nil || retry.ID == failed.ID {
		t.Fatalf("retry after refund: %+v, %v, %v; want a new reservation", retry, replay, err)
	}
	if got := balance(a.ID); got != 8 {
		t.Errorf("balance %d, want 8", got)
	}

	// Past the window the key is forgotten.
	clk.Advance(time.Hour + time.Second)
	if _, replay, err := reserve(a.ID, "K", "H2"); err != nil || replay != nil {
		t.Errorf("after 24 h: replay %v, err %v; want a fresh charge", replay, err)
	}
	checkLedger(t, s, a.ID)
}

func testConcurrentOpen(t *testing.T, b backend) {
	dsn := b.newDB(t)
	const n = 4
	var wg sync.WaitGroup
	stores := make([]Store, n)
	errs := make([]error, n)
	for i := range n {
		wg.Go(func() { stores[i], errs[i] = Open(t.Context(), b.driver, dsn, testPlans) })
	}
	wg.Wait()
	for i, s := range stores {
		if errs[i] != nil {
			t.Fatalf("open %d: %v", i, errs[i])
		}
		t.Cleanup(func() { s.Close() })
	}
	var versions int
	q := stores[0].(*store).db
	if err := q.queryRow(t.Context(), `SELECT count(*) FROM schema_migrations`).Scan(&versions); err != nil {
		t.Fatal(err)
	}
	if versions != len(migrations) {
		t.Errorf("%d migration rows after %d concurrent opens, want %d", versions, n, len(migrations))
	}
	a := must[Account](t)(stores[1].CreateAccount(t.Context(), "free", nil))
	if got := must[Account](t)(stores[3].Account(t.Context(), a.ID)); got.Credits != 50 {
		t.Errorf("account seen through another store: %+v", got)
	}
	if err := stores[2].Ping(t.Context()); err != nil {
		t.Error(err)
	}

	// A database migrated by a newer build is left alone, not downgraded.
	if _, err := q.exec(t.Context(), `INSERT INTO schema_migrations (version, applied_us) VALUES (999, 0)`); err != nil {
		t.Fatal(err)
	}
	if s, err := Open(t.Context(), b.driver, dsn, testPlans); err == nil || !strings.Contains(err.Error(), "newer") {
		if s != nil {
			s.Close()
		}
		t.Errorf("open of a newer schema: %v, want an error saying it is newer", err)
	}
}

func lastErr[T, U any](_ T, _ U, err error) error { return err }

func TestOpenRejects(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		name   string
		driver string
		dsn    string
		plans  []stage.Plan
		opts   []Option
	}{
		{"unknown driver", "mysql", "x", testPlans, nil},
		{"empty sqlite path", DriverSQLite, "", testPlans, nil},
		{"sqlite URI", DriverSQLite, "file:" + dir + "/x.db?mode=ro", testPlans, nil},
		{"memory", DriverSQLite, ":memory:", testPlans, nil},
		{"postgres URL", DriverSQLite, "postgres://mdpress@db.example:5432/mdpress", testPlans, nil},
		{"unnamed plan", DriverSQLite, dir + "/a.db", []stage.Plan{{MonthlyCredits: 1}}, nil},
		{"duplicate plan", DriverSQLite, dir + "/b.db", []stage.Plan{{Name: "a"}, {Name: "a"}}, nil},
		{"negative plan credits", DriverSQLite, dir + "/c.db", []stage.Plan{{Name: "a", MonthlyCredits: -1}}, nil},
		{"zero TTL", DriverSQLite, dir + "/d.db", testPlans, []Option{WithReservationTTL(0)}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, err := Open(t.Context(), tc.driver, tc.dsn, tc.plans, tc.opts...)
			if err == nil {
				s.Close()
			}
			wantCode(t, err, stage.CodeInvalid)
		})
	}
}

func TestOpenConfigured(t *testing.T) {
	dir := t.TempDir()
	s, err := OpenConfigured(t.Context(), &stage.ConfigureRequest{DataDir: dir, Plans: testPlans,
		Accounts: stage.AccountsConfig{Driver: DriverSQLite}})
	if err != nil {
		t.Fatal(err)
	}
	a := must[Account](t)(s.CreateAccount(t.Context(), "free", nil))
	s.Close()
	// The default file is <DataDir>/mdpress.db, which the CLI opens too.
	s2 := open(t, backends[0], filepath.Join(dir, "mdpress.db"))
	if _, err := s2.Account(t.Context(), a.ID); err != nil {
		t.Errorf("account not in <DataDir>/mdpress.db: %v", err)
	}
	_, err = OpenConfigured(t.Context(), &stage.ConfigureRequest{Plans: testPlans})
	wantCode(t, err, stage.CodeInvalid)
}

// testClockSkewRefund: two hosts whose clocks differ around a monthly
// reset. The slow host's reservation is stamped before the reset the fast
// host applied, yet it was made from the new month's balance, so its
// refund gives the credit back: a failed conversion is not charged.
func testClockSkewRefund(t *testing.T, b backend) {
	dsn := b.newDB(t)
	base := time.Date(2026, 1, 15, 10, 0, 0, 0, time.UTC)
	fast, slow := newClock(base), newClock(base)
	sFast := open(t, b, dsn, WithClock(fast.Now))
	sSlow := open(t, b, dsn, WithClock(slow.Now))
	a := must[Account](t)(sFast.CreateAccount(t.Context(), "free", ptr[int64](10)))
	fast.Set(time.Date(2026, 2, 15, 10, 0, 1, 0, time.UTC))
	slow.Set(time.Date(2026, 2, 15, 10, 0, 0, 500_000_000, time.UTC))
	must[Account](t)(sFast.Account(t.Context(), a.ID)) // the reset, at 10:00:01 by the fast clock
	res := must[Reservation](t)(first(sSlow.Reserve(t.Context(), ReserveParams{UserID: a.ID, Credits: 1})))
	if err := sSlow.Refund(t.Context(), res.ID, "render failed"); err != nil {
		t.Fatal(err)
	}
	if c := must[Account](t)(sFast.Account(t.Context(), a.ID)).Credits; c != 50 {
		t.Errorf("after a failed conversion in the new month: balance %d, want 50", c)
	}
	checkLedger(t, sFast, a.ID)
}

// testClockSkewIdempotency: attempts of one Idempotency-Key on hosts whose
// clocks differ are stamped out of order; the committed one still decides,
// so the next retry is a replay, not a second charge.
func testClockSkewIdempotency(t *testing.T, b backend) {
	dsn := b.newDB(t)
	base := time.Date(2026, 1, 15, 10, 0, 0, 0, time.UTC)
	fast, slow := newClock(base.Add(time.Second)), newClock(base)
	sFast := open(t, b, dsn, WithClock(fast.Now))
	sSlow := open(t, b, dsn, WithClock(slow.Now))
	a := must[Account](t)(sFast.CreateAccount(t.Context(), "free", ptr[int64](10)))
	p := ReserveParams{UserID: a.ID, Credits: 1, IdempotencyKey: "K", RequestHash: "H"}
	r1 := must[Reservation](t)(first(sFast.Reserve(t.Context(), p)))
	if err := sFast.Refund(t.Context(), r1.ID, "render failed"); err != nil {
		t.Fatal(err)
	}
	fast.Advance(200 * time.Millisecond)
	slow.Advance(200 * time.Millisecond) // still before r1 by the fast clock
	r2 := must[Reservation](t)(first(sSlow.Reserve(t.Context(), p)))
	if err := sSlow.Commit(t.Context(), r2.ID, "file-2"); err != nil {
		t.Fatal(err)
	}
	_, replay, err := sFast.Reserve(t.Context(), p)
	if err != nil || replay == nil || replay.Result != "file-2" {
		t.Errorf("third try: replay %+v, err %v; want a replay of file-2", replay, err)
	}
	if c := must[Account](t)(sFast.Account(t.Context(), a.ID)).Credits; c != 9 {
		t.Errorf("balance %d, want 9 (one charge)", c)
	}
}

// testRefundWithoutResetColumn: reservations made before the store kept
// the reset they were made under (reset_us -1 from migration 2) are still
// refunded by time: one from the month before a reset gives nothing back,
// one from after it gives its credits back.
func testRefundWithoutResetColumn(t *testing.T, b backend) {
	clk := newClock(time.Date(2026, 1, 15, 10, 0, 0, 0, time.UTC))
	st := open(t, b, b.newDB(t), WithClock(clk.Now), WithReservationTTL(100*24*time.Hour))
	a := must[Account](t)(st.CreateAccount(t.Context(), "free", ptr[int64](10)))
	old := must[Reservation](t)(first(st.Reserve(t.Context(), ReserveParams{UserID: a.ID, Credits: 1})))
	clk.Set(time.Date(2026, 2, 15, 10, 0, 1, 0, time.UTC))
	must[Account](t)(st.Account(t.Context(), a.ID)) // the reset: 50
	recent := must[Reservation](t)(first(st.Reserve(t.Context(), ReserveParams{UserID: a.ID, Credits: 1})))
	if _, err := st.(*store).db.exec(t.Context(), `UPDATE reservations SET reset_us = -1`); err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{old.ID, recent.ID} {
		if err := st.Refund(t.Context(), id, "render failed"); err != nil {
			t.Fatal(err)
		}
	}
	if c := must[Account](t)(st.Account(t.Context(), a.ID)).Credits; c != 50 {
		t.Errorf("balance %d, want 50: the new month's credit back, the old month's not", c)
	}
	checkLedger(t, st, a.ID)
}

// testCreditBesideOpenReservations: a top-up counts the credits that open
// reservations may still bring back, so that no refund can overflow the
// balance. One that did failed for good, and the sweeper, which stops at a
// failed refund, then released no other account's reservation either.
func testCreditBesideOpenReservations(t *testing.T, b backend) {
	ctx := t.Context()
	clk := newClock(time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC))
	s := open(t, b, b.newDB(t), WithClock(clk.Now))
	unlimited := must[Account](t)(s.CreateAccount(ctx, "pro", ptr[int64](math.MaxInt64)))
	other := must[Account](t)(s.CreateAccount(ctx, "free", ptr[int64](10)))
	held := must[Reservation](t)(first(s.Reserve(ctx, ReserveParams{UserID: unlimited.ID, Credits: 5})))
	must[Reservation](t)(first(s.Reserve(ctx, ReserveParams{UserID: other.ID, Credits: 1})))

	_, err := s.Credit(ctx, unlimited.ID, 1, "top-up")
	wantCode(t, err, stage.CodeInvalid)
	if a := must[Account](t)(s.Credit(ctx, unlimited.ID, -1, "spent")); a.Credits != math.MaxInt64-6 {
		t.Fatalf("balance %d, want MaxInt64-6", a.Credits)
	}
	if a := must[Account](t)(s.Credit(ctx, unlimited.ID, 1, "back")); a.Credits != math.MaxInt64-5 {
		t.Fatalf("balance %d, want MaxInt64-5", a.Credits)
	}

	clk.Advance(DefaultReservationTTL + time.Second)
	if n, err := s.ReleaseExpired(ctx); err != nil || n != 2 {
		t.Fatalf("ReleaseExpired: %d, %v; want both reservations released", n, err)
	}
	if got := must[Account](t)(s.Account(ctx, unlimited.ID)).Credits; got != math.MaxInt64 {
		t.Errorf("after the refund of %s: %d credits, want MaxInt64", held.ID, got)
	}
	if got := must[Account](t)(s.Account(ctx, other.ID)).Credits; got != 10 {
		t.Errorf("the other account: %d credits, want 10", got)
	}
	checkLedger(t, s, unlimited.ID)
}

// testAccountWithKey: an account and its first key are made together or
// not at all. Made in two steps, a failed key left an account nobody held
// a key for: a sign-up that answered 500, and a development account that
// every later start reported as existing without ever printing its key.
func testAccountWithKey(t *testing.T, b backend) {
	ctx := t.Context()
	s := open(t, b, b.newDB(t))
	a, key, info, err := s.CreateAccountWithKey(ctx, "pro", ptr[int64](3))
	if err != nil {
		t.Fatal(err)
	}
	if a.Plan != "pro" || a.Credits != 3 || info.UserID != a.ID {
		t.Fatalf("account %+v, key %+v", a, info)
	}
	got, gotKey, err := s.Authenticate(ctx, key)
	if err != nil || got.ID != a.ID || gotKey.ID != info.ID {
		t.Fatalf("Authenticate = %+v, %+v, %v; want the new account and key", got, gotKey, err)
	}
	checkLedger(t, s, a.ID)

	if _, err := s.(*store).db.exec(ctx, `DROP TABLE api_keys`); err != nil {
		t.Fatal(err)
	}
	if _, _, _, err := s.CreateAccountWithKey(ctx, "free", nil); err == nil {
		t.Fatal("CreateAccountWithKey succeeded without a keys table")
	}
	all, err := s.Accounts(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(all) != 1 {
		t.Fatalf("%d accounts after a failed CreateAccountWithKey, want the first alone", len(all))
	}
}

// testPruneFinished: finished reservations go once nothing can ask for them
// again, in batches; open ones, young ones and the ledger stay.
func testPruneFinished(t *testing.T, b backend) {
	ctx := t.Context()
	clk := newClock(time.Date(2026, 7, 1, 8, 0, 0, 0, time.UTC))
	s := open(t, b, b.newDB(t), WithClock(clk.Now), WithReservationTTL(10*time.Minute))
	a := must[Account](t)(s.CreateAccount(ctx, "pro", ptr[int64](5000)))
	reserve := func(key string) Reservation {
		return must[Reservation](t)(first(s.Reserve(ctx, ReserveParams{UserID: a.ID, Credits: 1, IdempotencyKey: key, RequestHash: "H"})))
	}
	// More than a batch of committed ones, a refunded one and one left open.
	for i := range pruneBatch + 5 {
		if err := s.Commit(ctx, reserve(fmt.Sprint("old-", i)).ID, "file-old"); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Refund(ctx, reserve("refunded").ID, "render failed"); err != nil {
		t.Fatal(err)
	}
	open := reserve("open")
	ledger := len(checkLedger(t, s, a.ID))

	clk.Advance(idempotencyWindow)
	young := reserve("young")
	if err := s.Commit(ctx, young.ID, "file-young"); err != nil {
		t.Fatal(err)
	}
	if n := must[int](t)(s.PruneFinished(ctx)); n != 0 {
		t.Fatalf("pruned %d inside the window and the TTL, want 0", n)
	}
	if _, replay, err := s.Reserve(ctx, ReserveParams{UserID: a.ID, Credits: 1, IdempotencyKey: "old-0", RequestHash: "H"}); err != nil || replay == nil {
		t.Fatalf("replay just inside the window: %v, %v", replay, err)
	}

	clk.Advance(10*time.Minute + time.Second)
	if n := must[int](t)(s.PruneFinished(ctx)); n != pruneBatch+5+1 {
		t.Errorf("pruned %d, want the %d old finished ones", n, pruneBatch+5+1)
	}
	if n := must[int](t)(s.PruneFinished(ctx)); n != 0 {
		t.Errorf("second prune deleted %d, want 0", n)
	}
	// The open one is the sweeper's to refund, and still can be; the young
	// one still replays.
	if n := must[int](t)(s.ReleaseExpired(ctx)); n != 1 {
		t.Errorf("released %d, want the open reservation %s", n, open.ID)
	}
	if _, replay, err := s.Reserve(ctx, ReserveParams{UserID: a.ID, Credits: 1, IdempotencyKey: "young", RequestHash: "H"}); err != nil || replay == nil || replay.Result != "file-young" {
		t.Errorf("replay of the young one: %+v, %v", replay, err)
	}
	entries := checkLedger(t, s, a.ID)
	if len(entries) < ledger+2 {
		t.Errorf("ledger of %d entries after pruning, had %d before and 2 since", len(entries), ledger)
	}
}
