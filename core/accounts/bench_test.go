package accounts

import (
	"math"
	"testing"
)

// BenchmarkReserveCommit measures the credit path one request takes, run in
// parallel against one account (the worst case: every call contends for the
// same row).
func BenchmarkReserveCommit(b *testing.B) {
	for _, be := range backends {
		b.Run(be.driver, func(b *testing.B) {
			s := benchStore(b, be)
			a, err := s.CreateAccount(b.Context(), "free", ptr[int64](math.MaxInt64/2))
			if err != nil {
				b.Fatal(err)
			}
			b.ReportAllocs()
			cpu := startCPU(b)
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					res, _, err := s.Reserve(b.Context(), ReserveParams{UserID: a.ID, Credits: 1})
					if err == nil {
						err = s.Commit(b.Context(), res.ID, "")
					}
					if err != nil {
						b.Error(err)
						return
					}
				}
			})
			cpu.report()
		})
	}
}

// BenchmarkAuthenticate measures the lookup every API request starts with.
func BenchmarkAuthenticate(b *testing.B) {
	for _, be := range backends {
		b.Run(be.driver, func(b *testing.B) {
			s := benchStore(b, be)
			a, err := s.CreateAccount(b.Context(), "free", nil)
			if err != nil {
				b.Fatal(err)
			}
			key, _, err := s.CreateKey(b.Context(), a.ID)
			if err != nil {
				b.Fatal(err)
			}
			b.ReportAllocs()
			cpu := startCPU(b)
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					if _, _, err := s.Authenticate(b.Context(), key); err != nil {
						b.Error(err)
						return
					}
				}
			})
			cpu.report()
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

// BenchmarkReserveCommitSerial is one request's credit path with no
// contention: what each conversion costs the meter process.
func BenchmarkReserveCommitSerial(b *testing.B) {
	for _, be := range backends {
		b.Run(be.driver, func(b *testing.B) {
			s := benchStore(b, be)
			a, err := s.CreateAccount(b.Context(), "free", ptr[int64](math.MaxInt64/2))
			if err != nil {
				b.Fatal(err)
			}
			b.ReportAllocs()
			cpu := startCPU(b)
			for b.Loop() {
				res, _, err := s.Reserve(b.Context(), ReserveParams{UserID: a.ID, Credits: 1})
				if err == nil {
					err = s.Commit(b.Context(), res.ID, "")
				}
				if err != nil {
					b.Fatal(err)
				}
			}
			cpu.report()
		})
	}
}

// BenchmarkAuthenticateSerial is one API request's key lookup with no
// contention: what each request costs the auth process.
func BenchmarkAuthenticateSerial(b *testing.B) {
	for _, be := range backends {
		b.Run(be.driver, func(b *testing.B) {
			s := benchStore(b, be)
			a, err := s.CreateAccount(b.Context(), "free", nil)
			if err != nil {
				b.Fatal(err)
			}
			key, _, err := s.CreateKey(b.Context(), a.ID)
			if err != nil {
				b.Fatal(err)
			}
			b.ReportAllocs()
			cpu := startCPU(b)
			for b.Loop() {
				if _, _, err := s.Authenticate(b.Context(), key); err != nil {
					b.Fatal(err)
				}
			}
			cpu.report()
		})
	}
}
