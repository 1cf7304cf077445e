package upstream

import (
	"context"
	"fmt"
	"slices"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// logLevels orders MCP's log levels, most verbose first.
var logLevels = []mcp.LoggingLevel{"debug", "info", "notice", "warning", "error", "critical", "alert", "emergency"}

// RaiseLogLevel asks the server, on cs and on its per-client sessions,
// to send its log messages from level up. The session is shared by every
// client, so its level only ever becomes more verbose: it is the most
// verbose any client asked for. A 2026-07-28 session takes the level with
// each call (CallTool) instead.
func (c *Conn) RaiseLogLevel(ctx context.Context, cs *mcp.ClientSession, level mcp.LoggingLevel) error {
	want := slices.Index(logLevels, level)
	if want < 0 {
		return fmt.Errorf("unknown log level %q", level)
	}
	c.mu.Lock()
	cur := slices.Index(logLevels, c.logLevel)
	raise := cur < 0 || want < cur
	if raise {
		c.logLevel = level
	}
	c.mu.Unlock()
	if !raise {
		return nil
	}
	if ir := cs.InitializeResult(); ir != nil && ir.ProtocolVersion >= modernProtocolVersion {
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, c.Cfg.CallTimeout)
	defer cancel()
	for _, pcs := range c.clients.sessions() {
		if err := pcs.SetLoggingLevel(ctx, &mcp.SetLoggingLevelParams{Level: level}); err != nil {
			c.logger.Warn("setting the log level of a per-client upstream session", "level", level, "err", err)
		}
	}
	return cs.SetLoggingLevel(ctx, &mcp.SetLoggingLevelParams{Level: level})
}

// IsLogLevel reports whether level is one of MCP's log levels.
func IsLogLevel(level mcp.LoggingLevel) bool { return slices.Contains(logLevels, level) }
