//go:build race

package main

// raceEnabled: the race detector slows wazero's compiler down by about
// twenty times, so the smoke test leaves the plugin out under -race.
const raceEnabled = true
