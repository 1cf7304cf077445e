// Package plugins will own WebAssembly result plugins: loading and compiling
// them on wazero with the Extism ABI, checking their exports, bounded instance
// pools, memory and time limits, and the result and display stages
// (../shared/docs/plugins-and-policies.md).
//
// It holds no code yet; until it lands the config loader rejects `plugin`
// blocks with a "not supported yet" diagnostic. It must never grant a plugin
// files, network, environment or a real clock by default, and never import the
// host package or another leaf.
package plugins
