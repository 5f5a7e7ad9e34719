package credits

import (
	"math"
	"strconv"
	"testing"

	"github.com/mdpress/mdpress/sdk/plugintest"
	"github.com/mdpress/mdpress/sdk/stage"
)

// BenchmarkBinaryReserveCommit is what one conversion costs the meter
// plugin the host runs: Reserve then Commit over go-plugin gRPC, from one
// client and from four at once. plugin-cpu-ns/op is the plugin process's
// CPU time, every thread included.
func BenchmarkBinaryReserveCommit(b *testing.B) {
	bin := plugintest.Build(b, "github.com/mdpress/mdpress/plugins/meter-credits")
	for _, be := range backends {
		b.Run(be.name, func(b *testing.B) {
			req := be.req(b)
			credits := int64(math.MaxInt64 / 2)
			acct, err := cliStore(b, req).CreateAccount(b.Context(), "free", &credits)
			if err != nil {
				b.Fatal(err)
			}
			c := plugintest.Launch(b, bin, stage.NameMeter, plugintest.Config{Request: req})
			cpu := plugintest.ProcessCPU(b, bin)
			for _, clients := range []int{1, 4} {
				b.Run(strconv.Itoa(clients)+"clients", func(b *testing.B) {
					start := cpu()
					plugintest.Drive(b, clients, func() error {
						res, err := c.Reserve(b.Context(), &stage.ReserveRequest{UserID: acct.ID, Credits: 1})
						if err == nil {
							_, err = c.Commit(b.Context(), &stage.CommitRequest{ReservationID: res.ReservationID})
						}
						return err
					})
					b.ReportMetric(float64(cpu()-start)/float64(b.N), "plugin-cpu-ns/op")
				})
			}
		})
	}
}
