// Command mdpress is the mdpress host: it serves the HTTP API over the
// stage plugins, manages accounts, and renders local files.
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"
)

func main() {
	// SIGHUP too: its default ends the process at once, and it comes from a
	// closed terminal or from an operator who expects a reload, which
	// mdpress does not do; both are better served by a drain.
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM, syscall.SIGHUP)
	defer stop()
	if err := newRoot().ExecuteContext(ctx); err != nil {
		fmt.Fprintln(os.Stderr, "mdpress:", err)
		os.Exit(1)
	}
}
