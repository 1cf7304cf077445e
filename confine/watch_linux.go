package confine

import (
	"encoding/binary"
	"log/slog"
	"net"
	"os"
	"time"

	"golang.org/x/sys/unix"
)

// helloWait bounds how long the parent keeps the child's descriptors for a
// command that is never started.
const helloWait = 2 * time.Minute

// watch runs beside one sandboxed start: it waits for the helper's hello
// (its pid, and the proxy's listener when there is one), then closes the
// parent's copies of the helper's descriptors, serves the listener, and
// closes it when the server exits.
func watch(ours *os.File, childFiles []*os.File, serve func(net.Listener), server string) {
	defer ours.Close()
	pid, ln, err := readHello(ours)
	closeAll(childFiles)
	if err != nil {
		return // never started, or the helper failed: its stderr says why
	}
	if ln != nil {
		if serve != nil {
			go serve(ln)
		} else {
			ln.Close()
			ln = nil
		}
	}
	waitExit(pid)
	if ln != nil {
		ln.Close()
	}
	slog.Debug("sandboxed server exited", "server", server, "pid", pid)
}

// readHello reads the helper's one message: its pid as 8 bytes, with the
// listener's descriptor attached when it listens for the proxy.
func readHello(f *os.File) (int, net.Listener, error) {
	_ = f.SetReadDeadline(time.Now().Add(helloWait))
	conn, err := net.FileConn(f)
	if err != nil {
		return 0, nil, err
	}
	defer conn.Close()
	uc := conn.(*net.UnixConn)
	_ = uc.SetReadDeadline(time.Now().Add(helloWait))
	buf, oob := make([]byte, 8), make([]byte, unix.CmsgSpace(4))
	n, oobn, _, _, err := uc.ReadMsgUnix(buf, oob)
	if err != nil {
		return 0, nil, err
	}
	if n != 8 {
		return 0, nil, os.ErrInvalid
	}
	pid := int(binary.LittleEndian.Uint64(buf))
	if oobn == 0 {
		return pid, nil, nil
	}
	msgs, err := unix.ParseSocketControlMessage(oob[:oobn])
	if err != nil || len(msgs) == 0 {
		return pid, nil, err
	}
	fds, err := unix.ParseUnixRights(&msgs[0])
	if err != nil || len(fds) == 0 {
		return pid, nil, err
	}
	lf := os.NewFile(uintptr(fds[0]), "sandbox-proxy")
	defer lf.Close()
	ln, err := net.FileListener(lf)
	return pid, ln, err
}

// waitExit returns when process pid has exited (it is not reaped here: its
// parent's Wait does that).
func waitExit(pid int) {
	fd, err := unix.PidfdOpen(pid, 0)
	if err != nil {
		return
	}
	defer unix.Close(fd)
	for {
		fds := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}
		if _, err := unix.Poll(fds, -1); err == nil || err != unix.EINTR {
			return
		}
	}
}
