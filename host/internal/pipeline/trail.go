package pipeline

// InputAsk is one request a server made while a call ran, as the call's
// trail records it: what was asked and how it ended, never a secret value
// (a password or writeOnly field's value is recorded as "[redacted]").
type InputAsk struct {
	// Round is the input_required round (1-based) on a 2026-07-28
	// session; 0 for a legacy session's elicitation/create.
	Round int `json:"round,omitempty"`
	// Kind is "elicitation", "roots" or "sampling".
	Kind    string `json:"kind"`
	Mode    string `json:"mode,omitempty"`
	Message string `json:"message,omitempty"`
	// URL is a url-mode request's URL without its query, fragment and
	// user info (they may carry one-time codes).
	URL string `json:"url,omitempty"`
	// Fields are the names of the form's properties.
	Fields []string `json:"fields,omitempty"`
	// Outcome is an action (accept, decline, cancel), expired, cancelled,
	// refused, or "answered" (roots).
	Outcome string `json:"outcome"`
	// Content is an accepted form's content, secrets redacted.
	Content map[string]any `json:"content,omitempty"`
	// Reason says why mcphost refused or declined by itself.
	Reason string `json:"reason,omitempty"`
}
