package credits

import (
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mdpress/mdpress/core/accounts/pgtest"
	"github.com/mdpress/mdpress/sdk/plugintest"
	"github.com/mdpress/mdpress/sdk/stage"
)

// BenchmarkBinaryReserveCommit is what one conversion costs the meter
// plugin the host runs: Reserve then Commit over go-plugin gRPC, from one
// client and from four at once. plugin-cpu-ns/op is the plugin process's
// CPU time, every thread included.
func BenchmarkBinaryReserveCommit(b *testing.B) {
	bin := plugintest.Build(b, "github.com/mdpress/mdpress/plugins/meter-credits")
	for _, be := range []struct {
		name string
		req  func(b *testing.B) *stage.ConfigureRequest
	}{
		{"sqlite", func(b *testing.B) *stage.ConfigureRequest {
			return &stage.ConfigureRequest{DataDir: b.TempDir(), Accounts: stage.AccountsConfig{Driver: "sqlite"}, Plans: plans}
		}},
		{"postgres", func(b *testing.B) *stage.ConfigureRequest {
			return &stage.ConfigureRequest{Accounts: stage.AccountsConfig{Driver: "postgres", DSN: pgtest.Start(b)}, Plans: plans}
		}},
	} {
		b.Run(be.name, func(b *testing.B) {
			req := be.req(b)
			credits := int64(math.MaxInt64 / 2)
			acct, err := cliStore(b, req).CreateAccount(b.Context(), "free", &credits)
			if err != nil {
				b.Fatal(err)
			}
			c := plugintest.Launch(b, bin, stage.NameMeter, plugintest.Config{Request: req})
			pid := childPID(b, bin)
			for _, clients := range []int{1, 4} {
				b.Run(strconv.Itoa(clients)+"clients", func(b *testing.B) {
					start := processCPU(b, pid)
					drive(b, clients, func() error {
						res, err := c.Reserve(b.Context(), &stage.ReserveRequest{UserID: acct.ID, Credits: 1})
						if err == nil {
							_, err = c.Commit(b.Context(), &stage.CommitRequest{ReservationID: res.ReservationID})
						}
						return err
					})
					b.ReportMetric(float64(processCPU(b, pid)-start)/float64(b.N), "plugin-cpu-ns/op")
				})
			}
		})
	}
}

// drive runs op b.N times in all, from clients goroutines at once.
func drive(b *testing.B, clients int, op func() error) {
	var next atomic.Int64
	var wg sync.WaitGroup
	b.ResetTimer()
	for range clients {
		wg.Go(func() {
			for next.Add(1) <= int64(b.N) {
				if err := op(); err != nil {
					b.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
}

// childPID finds the process this test started from bin.
func childPID(b *testing.B, bin string) int {
	procs, _ := filepath.Glob("/proc/[0-9]*/exe")
	for _, exe := range procs {
		if target, err := os.Readlink(exe); err != nil || target != bin {
			continue
		}
		pid, _ := strconv.Atoi(filepath.Base(filepath.Dir(exe)))
		return pid
	}
	b.Skip("cannot find the plugin process in /proc")
	return 0
}

// processCPU is a process's user and system time, from /proc in clock
// ticks of 10 ms: run enough iterations (-benchtime 2000x) for a few
// percent of precision.
func processCPU(b *testing.B, pid int) time.Duration {
	raw, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		b.Fatal(err)
	}
	// Fields after the parenthesised command name; utime and stime are the
	// 14th and 15th of the whole line.
	f := strings.Fields(string(raw[strings.LastIndexByte(string(raw), ')')+1:]))
	utime, _ := strconv.ParseInt(f[11], 10, 64)
	stime, _ := strconv.ParseInt(f[12], 10, 64)
	return time.Duration(utime+stime) * 10 * time.Millisecond
}
