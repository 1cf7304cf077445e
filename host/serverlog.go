package host

import (
	"time"

	"github.com/mcphost/mcphost/host/internal/transport"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// logMessage logs one notifications/message of the server within the
// bounds of its stderr: rate-limited by c.logLimit (a suppressed message is
// not even rendered), its data cut to stderrLineMax and its level and
// logger name to logNameMax. Log messages are kept nowhere else.
func (c *serverConn) logMessage(p *mcp.LoggingMessageParams) {
	if p == nil {
		return
	}
	c.recent.add(LogLine{At: time.Now().UTC(), Level: transport.CutText(string(p.Level), transport.LogNameMax),
		Logger: transport.CutText(p.Logger, transport.LogNameMax), Data: transport.CutText(transport.RenderLogData(p.Data), transport.StderrLineMax)})
	if !c.logLimit.Allow() {
		return
	}
	if c.opts.logMessage != nil && !c.retired.Load() {
		c.opts.logMessage(c.cfg.Name, p)
	}
	c.logger.Info("server log message",
		"level", transport.CutText(string(p.Level), transport.LogNameMax),
		"logger", transport.CutText(p.Logger, transport.LogNameMax),
		"data", transport.CutText(transport.RenderLogData(p.Data), transport.StderrLineMax))
}
