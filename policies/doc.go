// Package policies will own CEL permission policies: one environment with the
// declared variables, compiling every `when` expression at load with
// diagnostics that point into the HCL file, and evaluating the list, call,
// result and app phases into decisions with reasons
// (../shared/docs/plugins-and-policies.md).
//
// It holds no code yet; until it lands the config loader rejects `policy`
// blocks with a "not supported yet" diagnostic. It must never import the host
// package or another leaf.
package policies
