//go:build !race

package highlight

// slowdown scales the time limits (see race.go).
const slowdown = 1
