// Package upstream is one configured server as the host reaches it: its
// state and catalog as the doors see them (a ServerStatus snapshot, its
// tools), and, as the split of the host goes on, its supervision, its
// sessions and the one way to a session for a principal.
//
// It sits above identity and the transports, below the generations and
// the pipeline. It must never decide for a caller: what a caller may see
// or do is the pipeline's and the policies'.
package upstream
