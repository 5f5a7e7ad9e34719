package accounts

import (
	"math"
	"testing"
)

// BenchmarkReserveCommit measures the credit path one request takes:
// serial is what each conversion costs the meter process with no
// contention; parallel runs against one account, the worst case, where
// every call contends for the same row.
func BenchmarkReserveCommit(b *testing.B) {
	benchOp(b, func(b *testing.B, s Store) func() error {
		a, err := s.CreateAccount(b.Context(), "free", ptr[int64](math.MaxInt64/2))
		if err != nil {
			b.Fatal(err)
		}
		return func() error {
			res, _, err := s.Reserve(b.Context(), ReserveParams{UserID: a.ID, Credits: 1})
			if err == nil {
				err = s.Commit(b.Context(), res.ID, "")
			}
			return err
		}
	})
}

// BenchmarkAuthenticate measures the lookup every API request starts with.
func BenchmarkAuthenticate(b *testing.B) {
	benchOp(b, func(b *testing.B, s Store) func() error {
		a, err := s.CreateAccount(b.Context(), "free", nil)
		if err != nil {
			b.Fatal(err)
		}
		key, _, err := s.CreateKey(b.Context(), a.ID)
		if err != nil {
			b.Fatal(err)
		}
		return func() error {
			_, _, err := s.Authenticate(b.Context(), key)
			return err
		}
	})
}

// benchOp runs the operation setup returns on every backend, serially and
// from parallel goroutines, reporting allocations and process CPU per op.
func benchOp(b *testing.B, setup func(b *testing.B, s Store) func() error) {
	for _, be := range backends {
		b.Run(be.driver, func(b *testing.B) {
			op := setup(b, benchStore(b, be))
			b.Run("serial", func(b *testing.B) {
				b.ReportAllocs()
				cpu := startCPU(b)
				for b.Loop() {
					if err := op(); err != nil {
						b.Fatal(err)
					}
				}
				cpu.report()
			})
			b.Run("parallel", func(b *testing.B) {
				b.ReportAllocs()
				cpu := startCPU(b)
				b.RunParallel(func(pb *testing.PB) {
					for pb.Next() {
						if err := op(); err != nil {
							b.Error(err)
							return
						}
					}
				})
				cpu.report()
			})
		})
	}
}

func benchStore(b *testing.B, be backend) Store {
	s, err := Open(b.Context(), be.driver, be.newDB(b), testPlans)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { s.Close() })
	return s
}
