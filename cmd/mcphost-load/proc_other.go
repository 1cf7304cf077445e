//go:build !linux

package main

import (
	"os/exec"
	"time"
)

// procSupported says whether the /proc counters are real; elsewhere they
// report -1 and the leak checks that need them are skipped.
const procSupported = false

func countFDs() int { return -1 }

type childCount struct {
	Children int
	Zombies  int
}

func children(func(pid int) bool) childCount { return childCount{-1, -1} }
func rssBytes() int64                        { return -1 }
func dieWithParent(*exec.Cmd)                {}
func cpuTime() time.Duration                 { return -1 }
