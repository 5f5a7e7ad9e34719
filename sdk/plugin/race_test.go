//go:build race

package plugin

// raceEnabled: the race detector's sync.Pool drops what is put back at
// random, so gRPC's pooled buffers are allocated again now and then and
// what a call allocates is not measured.
const raceEnabled = true
