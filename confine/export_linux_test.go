package confine

// ControlDir is the control sockets' directory and how many sockets are
// open in it.
func ControlDir() (string, int) {
	ctlDir.mu.Lock()
	defer ctlDir.mu.Unlock()
	return ctlDir.path, ctlDir.users
}
