package confine

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"runtime"
	"syscall"

	seccomp "github.com/elastic/go-seccomp-bpf"
	llsys "github.com/landlock-lsm/go-landlock/landlock/syscall"
	"golang.org/x/sys/unix"
)

// MaybeHelper runs the sandbox helper when the process was started as one
// (os.Args[1] is the helper's marker), and never returns then. Otherwise it
// returns at once. mcphost's main, and the TestMain of every package whose
// tests start sandboxed servers, call it first.
func MaybeHelper() {
	if len(os.Args) < 2 {
		return
	}
	switch os.Args[1] {
	case probeArg:
		if err := loopbackUp(); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		os.Exit(0)
	case execArg:
		if len(os.Args) < 4 {
			helperFail("helper", fmt.Errorf("started without a spec"))
		}
		var hs helperSpec
		if err := json.Unmarshal([]byte(os.Args[2]), &hs); err != nil {
			helperFail("helper", err)
		}
		runHelper(hs)
	}
}

// helperExit is the helper's exit status when a layer fails to apply.
const helperExit = 125

func helperFail(layer string, err error) {
	fmt.Fprintf(os.Stderr, "sandbox: %s: %v\n", layer, err)
	os.Exit(helperExit)
}

// runHelper applies the layers in order and execs the server.
func runHelper(hs helperSpec) {
	runtime.LockOSThread() // never unlocked: the exec happens on this thread
	ctl, rulesetFD, err := dialControl(hs.Control)
	if err != nil {
		helperFail("helper", err)
	}
	var hello []int
	if hs.NetNS {
		if err := loopbackUp(); err != nil {
			helperFail("net", err)
		}
		if hs.Proxy {
			fd, err := proxyListener()
			if err != nil {
				helperFail("net", err)
			}
			hello = append(hello, fd)
		}
	}
	exe := hs.Exe
	if hs.RunBind != "" || len(hs.Masks) > 0 {
		var err error
		if exe, err = mounts(hs); err != nil {
			helperFail("mount", err)
		}
	}
	if err := setLimits(hs.Limits); err != nil {
		helperFail("limits", err)
	}
	if err := sendHello(ctl, hello); err != nil {
		helperFail("helper", err)
	}
	ctl.Close()
	for _, fd := range hello {
		unix.Close(fd)
	}
	if hs.UID > 0 {
		if err := dropUser(hs.UID); err != nil {
			helperFail("uid", err)
		}
	}
	if hs.ClearCap {
		if err := unix.Prctl(unix.PR_CAP_AMBIENT, unix.PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0); err != nil {
			helperFail("privileges", err)
		}
	}
	if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
		helperFail("privileges", err)
	}
	if hs.Landlock {
		if rulesetFD < 0 {
			helperFail("fs", errors.New("no Landlock ruleset came from mcphost"))
		}
		if err := llsys.LandlockRestrictSelf(rulesetFD, hs.Flags); err != nil {
			helperFail("fs", fmt.Errorf("landlock_restrict_self: %w", err))
		}
		unix.Close(rulesetFD)
	}
	if hs.Seccomp {
		if err := seccomp.LoadFilter(filter()); err != nil {
			helperFail("unix", err)
		}
	}
	err = syscall.Exec(exe, hs.Argv, os.Environ())
	helperFail("exec", fmt.Errorf("%s: %w%s", hs.Exe, err, execHint(err)))
}

func execHint(err error) string {
	if err == syscall.EACCES {
		return " (the sandboxed server may not execute it: grant its directory with sandbox { read = [...] })"
	}
	return ""
}

// filter refuses new unix sockets (a pathname socket outside the sandbox
// is reachable below Landlock ABI 9) and io_uring (which bypasses seccomp
// and has been a steady source of kernel bugs).
func filter() seccomp.Filter {
	return seccomp.Filter{
		NoNewPrivs: true,
		Policy: seccomp.Policy{
			DefaultAction: seccomp.ActionAllow,
			Syscalls: []seccomp.SyscallGroup{
				{
					Action: seccomp.ActionErrno,
					NamesWithCondtions: []seccomp.NameWithConditions{{
						Name:       "socket",
						Conditions: []seccomp.Condition{{Argument: 0, Operation: seccomp.Equal, Value: unix.AF_UNIX}},
					}},
				},
				{
					Action: seccomp.ActionErrno,
					Names:  []string{"io_uring_setup", "io_uring_enter", "io_uring_register"},
				},
			},
		},
	}
}

// loopbackUp brings up lo in the helper's new network namespace.
func loopbackUp() error {
	fd, err := unix.Socket(unix.AF_INET, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return fmt.Errorf("socket: %w", err)
	}
	defer unix.Close(fd)
	ifr, err := unix.NewIfreq("lo")
	if err != nil {
		return err
	}
	if err := unix.IoctlIfreq(fd, unix.SIOCGIFFLAGS, ifr); err != nil {
		return fmt.Errorf("reading lo's flags: %w", err)
	}
	ifr.SetUint16(ifr.Uint16() | unix.IFF_UP)
	if err := unix.IoctlIfreq(fd, unix.SIOCSIFFLAGS, ifr); err != nil {
		return fmt.Errorf("bringing lo up: %w", err)
	}
	return nil
}

// proxyListener listens at ProxyAddr inside the namespace and returns the
// listening socket's descriptor, to be sent to mcphost.
func proxyListener() (int, error) {
	ln, err := net.Listen("tcp4", ProxyAddr)
	if err != nil {
		return -1, err
	}
	f, err := ln.(*net.TCPListener).File()
	if err != nil {
		return -1, err
	}
	ln.Close()
	return int(f.Fd()), nil
}

// dialControl connects to mcphost's control socket and receives the
// Landlock ruleset (-1 when none comes).
func dialControl(path string) (*net.UnixConn, int, error) {
	c, err := net.DialUnix("unix", nil, &net.UnixAddr{Name: path, Net: "unix"})
	if err != nil {
		return nil, -1, fmt.Errorf("the control socket: %w", err)
	}
	buf, oob := make([]byte, 1), make([]byte, unix.CmsgSpace(4))
	_, oobn, _, _, err := c.ReadMsgUnix(buf, oob)
	if err != nil {
		c.Close()
		return nil, -1, fmt.Errorf("the control socket: %w", err)
	}
	fds, err := passedFDs(oob[:oobn])
	if err != nil || len(fds) == 0 {
		return c, -1, err
	}
	return c, fds[0], nil
}

func sendHello(c *net.UnixConn, fds []int) error {
	buf := make([]byte, 8)
	binary.LittleEndian.PutUint64(buf, uint64(os.Getpid()))
	var oob []byte
	if len(fds) > 0 {
		oob = unix.UnixRights(fds...)
	}
	_, _, err := c.WriteMsgUnix(buf, oob, nil)
	return err
}

// mounts makes the helper's mount namespace private, hides the masked
// paths, and gives a server that runs as another uid its own directory
// at runDir. It returns the path to exec.
func mounts(hs helperSpec) (string, error) {
	if err := unix.Mount("", "/", "", unix.MS_REC|unix.MS_PRIVATE, ""); err != nil {
		return "", fmt.Errorf("making mounts private: %w", err)
	}
	for _, m := range hs.Masks {
		fi, err := os.Stat(m)
		if err != nil {
			continue
		}
		if fi.IsDir() {
			err = unix.Mount("tmpfs", m, "tmpfs", unix.MS_RDONLY|unix.MS_NOSUID|unix.MS_NODEV|unix.MS_NOEXEC, "size=4k,mode=000")
		} else {
			err = unix.Mount("/dev/null", m, "", unix.MS_BIND, "")
		}
		if err != nil {
			return "", fmt.Errorf("hiding %s: %w", m, err)
		}
	}
	exe := hs.Exe
	if hs.RunBind == "" {
		return exe, nil
	}
	if err := unix.Mount("tmpfs", "/run", "tmpfs", unix.MS_NOSUID|unix.MS_NODEV, "size=64k,mode=755"); err != nil {
		return "", fmt.Errorf("a private /run: %w", err)
	}
	if err := os.Mkdir(runDir, 0o755); err != nil {
		return "", err
	}
	if err := unix.Mount(hs.RunBind, runDir, "", unix.MS_BIND, ""); err != nil {
		return "", fmt.Errorf("binding %s: %w", hs.RunBind, err)
	}
	if hs.ExeBind {
		if err := os.WriteFile(runExe, nil, 0o755); err != nil {
			return "", err
		}
		if err := unix.Mount(hs.Exe, runExe, "", unix.MS_BIND, ""); err != nil {
			return "", fmt.Errorf("binding %s: %w", filepath.Base(hs.Exe), err)
		}
		exe = runExe
	}
	return exe, nil
}

// dropUser makes the helper uid and gid uid, with no supplementary groups.
func dropUser(uid int) error {
	if err := syscall.Setgroups(nil); err != nil {
		return fmt.Errorf("setgroups: %w", err)
	}
	if err := syscall.Setresgid(uid, uid, uid); err != nil {
		return fmt.Errorf("setgid %d: %w", uid, err)
	}
	if err := syscall.Setresuid(uid, uid, uid); err != nil {
		return fmt.Errorf("setuid %d: %w", uid, err)
	}
	return nil
}

func setLimits(l Limits) error {
	set := func(res int, v uint64) error {
		return unix.Setrlimit(res, &unix.Rlimit{Cur: v, Max: v})
	}
	if err := set(unix.RLIMIT_CORE, 0); err != nil {
		return err
	}
	for _, r := range []struct {
		res int
		v   int64
	}{{unix.RLIMIT_NOFILE, int64(l.OpenFiles)}, {unix.RLIMIT_AS, l.Memory}, {unix.RLIMIT_NPROC, int64(l.Pids)}, {unix.RLIMIT_CPU, int64(l.CPU)}} {
		if r.v > 0 {
			if err := set(r.res, uint64(r.v)); err != nil {
				return err
			}
		}
	}
	return nil
}
