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
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := newRoot().ExecuteContext(ctx); err != nil {
		fmt.Fprintln(os.Stderr, "mdpress:", err)
		os.Exit(1)
	}
}
