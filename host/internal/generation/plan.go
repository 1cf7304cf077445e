package generation

// ReloadPlan says what a reload of the running config does: planned by
// [Host.PlanReload] without changing anything, and returned by
// [Host.Reload] for what it did. It carries names (of servers, principals,
// settings, attributes), never a token, a header or an env value.
type ReloadPlan struct {
	From   string `json:"from"`    // the running config's hash ([Host.ConfigHash])
	To     string `json:"to"`      // the new config's hash
	DryRun bool   `json:"dry_run"` // planned only: nothing was changed

	// Servers are the servers of both configs: the new one's in its order,
	// then the removed ones.
	Servers []ServerPlan `json:"servers"`
	// The same servers by what happens to them.
	Kept      []string `json:"kept"`
	Restarted []string `json:"restarted"`
	Added     []string `json:"added"`
	Removed   []string `json:"removed"`
	// Started are the added and restarted servers, in the new config's
	// order: each gets a new connection, started before the swap. Stopped
	// are the restarted and removed ones, in the old config's order: each
	// is stopped once its calls have finished.
	Started []string `json:"started"`
	Stopped []string `json:"stopped"`

	Policies        int  `json:"policies"`         // policy rules in force after the reload
	PoliciesChanged bool `json:"policies_changed"` // a rule, its order, or the default
	Plugins         int  `json:"plugins"`          // plugins loaded after the reload
	PluginsChanged  bool `json:"plugins_changed"`  // a block, its order, or a module's bytes

	Principals        PrincipalPlan `json:"principals"`
	AdminsChanged     bool          `json:"admins_changed"`      // the `admins` list
	RateLimitsChanged bool          `json:"rate_limits_changed"` // the limits of a principal kept, or the owner's
	GatewayChanged    bool          `json:"gateway_changed"`     // the `gateway` block

	// Settings are the changed top-level settings the daemon applies at
	// once (log_level, watch_config).
	Settings []string `json:"settings"`
	// Ignored are the changed settings that take effect only at the next
	// start (listen, data_dir, App compaction, store.sync): a restart is
	// required for them; the rest of the reload applies.
	Ignored []string `json:"ignored"`

	// Unset are the env() calls of a dry run's config whose variables the
	// daemon does not have, each as `env("NAME") ("ATTRIBUTE" of BLOCK,
	// FILE:LINE)`: the plan compares those attributes without their
	// values, and a reload refuses the file until they are set.
	Unset []string `json:"unset,omitempty"`
}

// ServerPlan is what a reload does to one server.
type ServerPlan struct {
	Name   string `json:"name"`
	Action string `json:"action"` // PlanKept, PlanRestarted, PlanAdded or PlanRemoved
	// Changed names the attributes of a restarted server's block that
	// differ (its values are never shown: env and headers hold secrets);
	// for a kept server, "roots" when only its roots changed (they are
	// sent to the running session).
	Changed []string `json:"changed,omitempty"`
	// Warning is what would keep an added or restarted server from
	// starting that the plan can see (a command the daemon cannot find);
	// the reload still applies, and the server fails with the same reason.
	Warning string `json:"warning,omitempty"`
}

// PrincipalPlan is what a reload does to the principals (the generated
// owner among them), by name.
type PrincipalPlan struct {
	Added   []string `json:"added"`
	Removed []string `json:"removed"` // their tokens stop working
	Rotated []string `json:"rotated"` // a new token: the old one, and its WebShell credential, stop working
	Changed []string `json:"changed"` // groups or webshell changed: their event streams end
}

// Any reports whether the reload changes a principal.
func (p PrincipalPlan) Any() bool {
	return len(p.Added)+len(p.Removed)+len(p.Rotated)+len(p.Changed) > 0
}

// Changes reports whether the reload changes anything at all (the source
// may still differ: a comment, a block moved).
func (p ReloadPlan) Changes() bool {
	return len(p.Restarted)+len(p.Added)+len(p.Removed)+len(p.Settings)+len(p.Ignored) > 0 ||
		p.PoliciesChanged || p.PluginsChanged || p.Principals.Any() ||
		p.AdminsChanged || p.RateLimitsChanged || p.GatewayChanged
}

// Public is p for every subscriber of the events: the principals are
// left out (only admins may see who they are).
func (p ReloadPlan) Public() ReloadPlan {
	p.Principals = PrincipalPlan{Added: []string{}, Removed: []string{}, Rotated: []string{}, Changed: []string{}}
	return p
}
