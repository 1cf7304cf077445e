// Package testbin builds the fixture programs under testdata/servers (and any
// other main package of the module) for tests that need a real server
// process, and the WebAssembly plugins of the repository for tests that
// load them. [Build] compiles each import path once per test process into one
// temporary directory; [Cleanup] removes it at the end of TestMain.
// [Plugin] and [ExamplePlugin] keep their .wasm files across runs in a cache
// directory of their own, named by a hash of the sources.
//
// The package is test infrastructure: production code must never import it.
// It imports only the standard library. It never installs anything, never
// writes outside its temporary directory and the plugin cache, and never
// changes the environment of the go command it runs beyond what the test
// process already has (and, for a plugin, the wasip1/wasm target).
package testbin
