// Package testbin builds the fixture programs under testdata/servers (and any
// other main package of the module) for tests that need a real server
// process. [Build] compiles each import path once per test process into one
// temporary directory; [Cleanup] removes it at the end of TestMain.
//
// The package is test infrastructure: production code must never import it.
// It never installs anything, never writes outside its temporary directory,
// and never changes the environment of the go command it runs beyond what
// the test process already has.
package testbin
