//go:build !linux

package sysinfo

// LoadAvg is "" without /proc.
func LoadAvg() string { return "" }

// CPUModel is "" without /proc.
func CPUModel() string { return "" }

// MemTotal is -1 without /proc.
func MemTotal() int64 { return -1 }

// Kernel is "" without /proc.
func Kernel() string { return "" }
