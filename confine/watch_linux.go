package confine

import (
	"crypto/rand"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"sync"
	"time"

	"golang.org/x/sys/unix"
)

// helloWait bounds how long the parent waits for the helper of a command
// that may never be started.
const helloWait = 2 * time.Minute

// ctlDir is the directory of the control sockets: made for the first
// socket and removed with the last, so that no directory is left in the
// system's temporary directory when no helper is on its way (a process
// that started sandboxed servers used to leave one behind for good).
var ctlDir struct {
	mu    sync.Mutex
	path  string
	users int // control sockets open in it
}

// control is one control socket; Close closes it and removes the
// directory when it was the last.
type control struct {
	*net.UnixListener
	once sync.Once
}

func (c *control) Close() error {
	var err error
	c.once.Do(func() {
		err = c.UnixListener.Close()
		ctlDir.mu.Lock()
		defer ctlDir.mu.Unlock()
		ctlDir.users--
		dropCtlDir()
	})
	return err
}

// dropCtlDir removes the directory when no socket is open in it. Its
// caller holds ctlDir.mu.
func dropCtlDir() {
	if ctlDir.users == 0 && ctlDir.path != "" {
		_ = os.RemoveAll(ctlDir.path)
		ctlDir.path = ""
	}
}

// listenControl listens on a new unix socket through which one helper
// gets its Landlock ruleset and hands back its pid and the proxy's
// listener. The sockets live in a directory of this process's own (0700,
// under the system's temporary directory, short enough for a socket
// path); the helper connects to it before it gives anything up.
func listenControl() (*control, error) {
	ctlDir.mu.Lock()
	defer ctlDir.mu.Unlock()
	if ctlDir.users == 0 {
		base := os.TempDir()
		if len(base) > 60 {
			base = "/tmp"
		}
		dir, err := os.MkdirTemp(base, "mcphost-ctl-")
		if err != nil {
			return nil, err
		}
		ctlDir.path = dir
	}
	var b [8]byte
	_, _ = rand.Read(b[:])
	ln, err := net.ListenUnix("unix", &net.UnixAddr{Name: filepath.Join(ctlDir.path, hex.EncodeToString(b[:])), Net: "unix"})
	if err != nil {
		dropCtlDir()
		return nil, err
	}
	ln.SetUnlinkOnClose(true)
	ctlDir.users++
	return &control{UnixListener: ln}, nil
}

// watch runs beside one sandboxed start: it waits for the helper on the
// control socket, hands it the ruleset, reads its hello (its pid, and the
// proxy's listener when there is one), serves the listener, and closes it
// when the server exits. A command never started is given up after
// helloWait.
func watch(ctl *control, ruleset *os.File, serve func(net.Listener), server string) {
	defer ctl.Close()
	if ruleset != nil {
		defer ruleset.Close()
	}
	_ = ctl.SetDeadline(time.Now().Add(helloWait))
	conn, err := ctl.AcceptUnix()
	ctl.Close() // one helper per socket; the file goes with it
	if err != nil {
		return // never started
	}
	pid, ln, err := handshake(conn, ruleset)
	conn.Close()
	if ruleset != nil {
		ruleset.Close()
	}
	if err != nil {
		slog.Debug("sandbox helper handshake failed", "server", server, "err", err)
		return // the helper fails too, and its stderr says why
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
}

// handshake sends the ruleset (a byte, with the descriptor attached when
// there is one) and reads the helper's hello: its pid as 8 bytes, with the
// listener's descriptor attached when it listens for the proxy.
func handshake(c *net.UnixConn, ruleset *os.File) (int, net.Listener, error) {
	_ = c.SetDeadline(time.Now().Add(helloWait))
	var oob []byte
	if ruleset != nil {
		oob = unix.UnixRights(int(ruleset.Fd()))
	}
	if _, _, err := c.WriteMsgUnix([]byte{1}, oob, nil); err != nil {
		return 0, nil, err
	}
	buf, rights := make([]byte, 8), make([]byte, unix.CmsgSpace(4))
	n, oobn, _, _, err := c.ReadMsgUnix(buf, rights)
	if err != nil {
		return 0, nil, err
	}
	if n != 8 {
		return 0, nil, errors.New("short hello")
	}
	pid := int(binary.LittleEndian.Uint64(buf))
	fds, err := passedFDs(rights[:oobn])
	if err != nil || len(fds) == 0 {
		return pid, nil, err
	}
	lf := os.NewFile(uintptr(fds[0]), "sandbox-proxy")
	defer lf.Close()
	ln, err := net.FileListener(lf)
	return pid, ln, err
}

// passedFDs are the descriptors of a control message, if any.
func passedFDs(oob []byte) ([]int, error) {
	if len(oob) == 0 {
		return nil, nil
	}
	msgs, err := unix.ParseSocketControlMessage(oob)
	if err != nil || len(msgs) == 0 {
		return nil, err
	}
	return unix.ParseUnixRights(&msgs[0])
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
