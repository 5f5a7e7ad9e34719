package plugin

import (
	"google.golang.org/grpc/experimental"
	"google.golang.org/grpc/mem"
)

// bufferTiers are the capacities, as powers of two, of gRPC's pooled
// message buffers: every power from 32 KiB to 1 MiB. gRPC's default tiers
// jump from 32 KiB to 1 MiB and zero a pooled buffer's whole capacity when
// it is taken, so each message in between (a rendered PDF, a styled HTML
// document, a long document's tree) cleared a megabyte, once where it was
// marshalled and once where it was read: 6.6% of the host's CPU in a
// ten-page conversion.
var bufferTiers = []uint8{8, 12, 14, 15, 16, 17, 18, 19, 20}

// The proto codec takes its buffers from the process's default pool, not
// from a connection's, so the tiers are set for the whole process, before
// any connection exists. Every process that talks to a stage (the host,
// each plugin, the test kits) imports this package.
func init() {
	pool, err := mem.NewBinaryTieredBufferPool(bufferTiers...)
	if err != nil {
		panic(err) // the tiers above are valid
	}
	experimental.SetDefaultBufferPool(pool)
}
