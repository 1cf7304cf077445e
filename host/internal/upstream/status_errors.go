package upstream

import "fmt"

// NotReadyError is returned when a server has no live session.
type NotReadyError struct {
	Server    string
	State     State
	LastError string
}

func (e *NotReadyError) Error() string {
	msg := fmt.Sprintf("server %q is not ready (%s)", e.Server, e.State)
	if e.LastError != "" {
		msg += ": " + e.LastError
	}
	return msg
}
