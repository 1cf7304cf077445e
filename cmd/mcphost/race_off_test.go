//go:build !race

package main

// raceEnabled: the test binary has the race detector (see demoRaceEnv).
const raceEnabled = false
