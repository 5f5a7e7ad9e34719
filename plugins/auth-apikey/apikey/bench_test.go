package apikey

import (
	"strconv"
	"testing"

	"github.com/mdpress/mdpress/sdk/plugintest"
	"github.com/mdpress/mdpress/sdk/stage"
)

// BenchmarkBinaryAuthenticate is what one API request costs the auth
// plugin the host runs: Authenticate over go-plugin gRPC, from one client
// and from four at once.
// plugin-cpu-ns/op is the plugin process's CPU time, every thread included.
func BenchmarkBinaryAuthenticate(b *testing.B) {
	bin := plugintest.Build(b, "github.com/mdpress/mdpress/plugins/auth-apikey")
	for _, be := range backends {
		b.Run(be.name, func(b *testing.B) {
			req := be.req(b)
			s := cliStore(b, req)
			acct, err := s.CreateAccount(b.Context(), "free", nil)
			if err != nil {
				b.Fatal(err)
			}
			key, _, err := s.CreateKey(b.Context(), acct.ID)
			if err != nil {
				b.Fatal(err)
			}
			c := plugintest.Launch(b, bin, stage.NameAuth, plugintest.Config{Request: req})
			cpu := plugintest.ProcessCPU(b, bin)
			for _, clients := range []int{1, 4} {
				b.Run(strconv.Itoa(clients)+"clients", func(b *testing.B) {
					start := cpu()
					plugintest.Drive(b, clients, func() error {
						_, err := c.Authenticate(b.Context(), &stage.AuthenticateRequest{Token: key})
						return err
					})
					b.ReportMetric(float64(cpu()-start)/float64(b.N), "plugin-cpu-ns/op")
				})
			}
		})
	}
}
