package highlight

import "time"

// wallClock is time since its first reading, for threadClock to fall back on.
func wallClock() (now func() time.Duration, release func()) {
	start := time.Now()
	return func() time.Duration { return time.Since(start) }, func() {}
}
