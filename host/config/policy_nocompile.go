//go:build !policieswired

package config

// compilePolicies is replaced when the policies package lands.
func (l *loader) compilePolicies(cfg *Config) {}
