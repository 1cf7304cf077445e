package appdisplay

// CSP holds the source lists an App declared in _meta.ui.csp (apps.md §4):
// where it may connect, load resources from, frame, and set as base URI.
// An empty list means no source for that directive ('none' for frames and
// base-uri). The json names are the display record's and the plugin ABI's;
// the cel names are what the app phase of the policies reads (app.csp…).
type CSP struct {
	ConnectDomains  []string `json:"connectDomains" cel:"connectDomains"`
	ResourceDomains []string `json:"resourceDomains" cel:"resourceDomains"`
	FrameDomains    []string `json:"frameDomains" cel:"frameDomains"`
	BaseURIDomains  []string `json:"baseUriDomains" cel:"baseUriDomains"`
}
