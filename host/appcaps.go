package host

import "github.com/mcphost/mcphost/host/config"

// AppCapabilities returns what the Apps of server may ask for; all false
// when the server's apps setting is off. It fails only for an unknown server.
func (h *Host) AppCapabilities(server string) (AppCapabilities, error) {
	c, err := h.conn(server)
	if err != nil {
		return AppCapabilities{}, err
	}
	if c.Cfg.Apps == config.AppsOff {
		return AppCapabilities{}, nil
	}
	return AppCapabilities{ToolCalls: c.Cfg.AppToolCalls, OpenLinks: c.Cfg.AppOpenLinks, Messages: c.Cfg.AppMessages,
		DisplayModes: c.Cfg.AppDisplayModes, Tools: c.Cfg.AppTools, Resources: c.Cfg.AppResources,
		Downloads: c.Cfg.AppDownloads, ModelContext: c.Cfg.AppModelContext}, nil
}
