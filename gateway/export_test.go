package gateway

import "time"

// SetWriteStall sets how long a write to a client stream may make no
// progress, for the gateways made until restore is called.
func SetWriteStall(d time.Duration) (restore func()) {
	was := writeStall
	writeStall = d
	return func() { writeStall = was }
}
