package main

import (
	"errors"
	"fmt"
	"syscall"

	"github.com/mcphost/mcphost/host/config"
)

// listenEnv overrides the config's listen address, as -listen does (the
// flag wins).
const listenEnv = "MCPHOST_LISTEN"

// listenOverride is the address serve listens on instead of the config's
// `listen`, and where it came from ("" when there is none): it applies to
// the config at start and to every reloaded one.
type listenOverride struct {
	addr string
	from string // "-listen" or listenEnv
}

// parseListen returns the override of flag, else of env; an address
// that is not HOST:PORT with a numeric port is an error naming its source.
func parseListen(flag, env string) (listenOverride, error) {
	lo := listenOverride{addr: flag, from: "-listen"}
	if flag == "" {
		lo = listenOverride{addr: env, from: listenEnv}
	}
	if lo.addr == "" {
		return listenOverride{}, nil
	}
	if err := config.CheckListen(lo.addr); err != nil {
		return listenOverride{}, fmt.Errorf("%s %q: want HOST:PORT such as 127.0.0.1:7777 (port 0 picks a free one): %v", lo.from, lo.addr, err)
	}
	return lo, nil
}

// apply puts the override into cfg.
func (lo listenOverride) apply(cfg *config.Config) {
	if lo.addr != "" {
		cfg.Listen = lo.addr
	}
}

// bindError says why serve could not listen on cfg.Listen, where that
// address came from, and how to choose another: the flag, the
// environment variable and the config's attribute.
func (lo listenOverride) bindError(cfg *config.Config, source string, err error) string {
	from := "listen in " + source
	if source == "" {
		from = "the embedded default config's listen"
	}
	if lo.addr != "" {
		from = lo.from
	}
	msg := fmt.Sprintf("cannot listen on %s (from %s): %v", cfg.Listen, from, err)
	if errors.Is(err, syscall.EADDRINUSE) {
		msg += "; another program (perhaps another mcphost) holds that port"
	}
	return msg + fmt.Sprintf("; choose another address with -listen ADDR or %s=ADDR, or change listen in the config", listenEnv)
}
