// Package generation is one config's world as the host runs it: the
// config, its server connections (a reload keeps those whose block did not
// change), its principals, policies and plugins, and the reload plan that
// made it. A generation is held by every call that began under it
// (Acquire, Release), so that a reload retires it only once they end.
//
// It owns the one list filter (Lister: the `list` phase of the policies
// over tools, resources, resource templates and prompts) and what a
// caller may see of a server (Visible, Sees, StatusFor), and the way from
// a server's name to a caller's target (Target, VisibleTarget).
//
// It sits above upstream and identity and below the pipeline. It must
// never start, stop or call a server itself: the host starts and retires
// connections; and it never decides a call: that is the pipeline's.
package generation
