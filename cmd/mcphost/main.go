// Command mcphost runs MCP servers for people and agents: see the README.
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
	confine.MaybeHelper() // `mcphost __sandbox-exec`: contain a stdio server, then exec it
	httpapi.DisableDebugOutput()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	hup := make(chan os.Signal, 1)
	signal.Notify(hup, syscall.SIGHUP) // serve reloads its config
	e := &env{stdin: os.Stdin, stdout: os.Stdout, stderr: os.Stderr, reload: hup}
	code := e.run(ctx, os.Args[1:])
	signal.Stop(hup)
	stop()
	os.Exit(code)
}
