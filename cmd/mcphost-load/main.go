package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"github.com/mcphost/mcphost/confine"
	"github.com/mcphost/mcphost/host/httpapi"
)

func main() {
	confine.MaybeHelper() // the load tool's daemons start contained stdio servers
	httpapi.DisableDebugOutput()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}
