package chrome

import (
	"fmt"
	"io"
	"sync/atomic"
)

// stats are the plugin's own counters. The host times every call; these say
// what happened inside the browser.
type stats struct {
	rendered   atomic.Int64 // PDFs returned
	failed     atomic.Int64 // renders that returned an error other than busy
	timedOut   atomic.Int64 // renders past their deadline
	busy       atomic.Int64 // renders refused because the queue was full
	launches   atomic.Int64 // browser starts
	crashes    atomic.Int64 // browsers that died or hung without being asked to stop
	restarts   atomic.Int64 // browsers replaced for using too much memory
	retried    atomic.Int64 // renders printed again after a browser killed for another's memory
	memStopped atomic.Int64 // renders stopped for their memory, the browser kept
	recycled   atomic.Int64 // tabs closed and replaced
	blocked    atomic.Int64 // document requests refused
	fetched    atomic.Int64 // remote resources fetched for documents
	inFlight   atomic.Int64 // renders holding a tab
	waiting    atomic.Int64 // renders waiting for a tab
}

// Stats is a snapshot of the counters.
type Stats struct {
	Rendered, Failed, TimedOut, Busy  int64
	Launches, Crashes, MemoryRestarts int64
	Retried, MemoryStopped            int64
	TabsRecycled, Blocked, Fetched    int64
	InFlight, Waiting                 int64
	// Escaped counts connections that reached the browser's blackhole
	// proxy: requests Fetch interception did not see (preconnects,
	// WebSockets), none of which reached the network.
	Escaped int64
}

func (s *stats) snapshot() Stats {
	return Stats{
		Rendered: s.rendered.Load(), Failed: s.failed.Load(), TimedOut: s.timedOut.Load(), Busy: s.busy.Load(),
		Launches: s.launches.Load(), Crashes: s.crashes.Load(), MemoryRestarts: s.restarts.Load(),
		Retried: s.retried.Load(), MemoryStopped: s.memStopped.Load(),
		TabsRecycled: s.recycled.Load(), Blocked: s.blocked.Load(), Fetched: s.fetched.Load(),
		InFlight: s.inFlight.Load(), Waiting: s.waiting.Load(),
	}
}

// writeMetrics writes st in the Prometheus text format.
func writeMetrics(w io.Writer, st Stats) error {
	families := []struct {
		name, kind, help string
		v                int64
	}{
		{"mdpress_chrome_renders_total", "counter", "PDFs printed.", st.Rendered},
		{"mdpress_chrome_render_failures_total", "counter", "Renders that failed, timeouts included.", st.Failed},
		{"mdpress_chrome_render_timeouts_total", "counter", "Renders past their deadline.", st.TimedOut},
		{"mdpress_chrome_busy_total", "counter", "Renders refused because the queue was full.", st.Busy},
		{"mdpress_chrome_browser_launches_total", "counter", "Browser starts.", st.Launches},
		{"mdpress_chrome_browser_crashes_total", "counter", "Browsers that died or stopped answering.", st.Crashes},
		{"mdpress_chrome_browser_memory_restarts_total", "counter", "Browsers replaced for their memory use.", st.MemoryRestarts},
		{"mdpress_chrome_renders_memory_stopped_total", "counter", "Renders stopped for passing the render memory bound, the browser kept.", st.MemoryStopped},
		{"mdpress_chrome_renders_retried_total", "counter", "Renders printed again after their browser was killed for another render's memory.", st.Retried},
		{"mdpress_chrome_tabs_recycled_total", "counter", "Tabs closed and replaced.", st.TabsRecycled},
		{"mdpress_chrome_requests_blocked_total", "counter", "Document requests refused.", st.Blocked},
		{"mdpress_chrome_requests_fetched_total", "counter", "Remote resources fetched for documents.", st.Fetched},
		{"mdpress_chrome_requests_escaped_total", "counter", "Browser connections caught by the blackhole proxy.", st.Escaped},
		{"mdpress_chrome_tabs_busy", "gauge", "Renders holding a tab.", st.InFlight},
		{"mdpress_chrome_queue_waiting", "gauge", "Renders waiting for a tab.", st.Waiting},
	}
	for _, f := range families {
		if _, err := fmt.Fprintf(w, "# HELP %s %s\n# TYPE %s %s\n%s %d\n", f.name, f.help, f.name, f.kind, f.name, f.v); err != nil {
			return err
		}
	}
	return nil
}
