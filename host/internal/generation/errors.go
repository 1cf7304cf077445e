package generation

import (
	"fmt"
	"strings"

	"github.com/mcphost/mcphost/host/config"
)

// UnknownServerError is returned for a server name the config does not have.
type UnknownServerError struct {
	Server string
	Known  []string
}

func (e *UnknownServerError) Error() string {
	if len(e.Known) == 0 {
		return fmt.Sprintf("no server named %q: the config declares no servers", e.Server)
	}
	return fmt.Sprintf("no server named %q (configured: %s)", e.Server, strings.Join(e.Known, ", "))
}

// ServerNames lists cfg's servers in config order.
func ServerNames(cfg *config.Config) []string {
	var names []string
	for _, s := range cfg.Servers {
		names = append(names, s.Name)
	}
	return names
}
