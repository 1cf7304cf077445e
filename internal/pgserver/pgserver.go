package pgserver

import (
	"context"
	"fmt"
	"net"
	"net/url"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
)

// User is the superuser of every server; it needs no password.
const User = "mcphost"

// startTimeout bounds one start of the server.
const startTimeout = 60 * time.Second

// Server is one running PostgreSQL server.
type Server struct {
	bin  string // the directory of initdb, pg_ctl and postgres
	root string // world-traversable; holds data/ and run/
	data string
	run  string // the socket directory and the log
	port int

	// asPostgres holds the postgres user's ids when the tests run as root.
	asPostgres *syscall.Credential

	mu   sync.Mutex
	proc *exec.Cmd // the postmaster while it runs
	exit chan struct{}
}

// MissingError says that PostgreSQL is not installed.
type MissingError struct{ What string }

func (e *MissingError) Error() string {
	return fmt.Sprintf("pgserver: %s not found (looked in /usr/lib/postgresql/*/bin and on PATH); install PostgreSQL (Debian: apt-get install postgresql) to run the PostgreSQL tests", e.What)
}

// Installed returns a [*MissingError] when the PostgreSQL binaries are not
// found, nil when [Start] can find them.
func Installed() error {
	_, err := binaries()
	return err
}

// binaries finds the directory holding initdb, pg_ctl and postgres.
func binaries() (string, error) {
	dirs, _ := filepath.Glob("/usr/lib/postgresql/*/bin")
	slices.SortFunc(dirs, func(a, b string) int { return version(b) - version(a) })
	for _, d := range dirs {
		if ok(filepath.Join(d, "initdb")) && ok(filepath.Join(d, "pg_ctl")) && ok(filepath.Join(d, "postgres")) {
			return d, nil
		}
	}
	initdb, err := exec.LookPath("initdb")
	if err != nil {
		return "", &MissingError{"initdb"}
	}
	// Debian's /usr/bin/initdb may be a wrapper; prefer the real directory.
	if real, err := filepath.EvalSymlinks(initdb); err == nil {
		initdb = real
	}
	d := filepath.Dir(initdb)
	for _, name := range []string{"pg_ctl", "postgres"} {
		if ok(filepath.Join(d, name)) {
			continue
		}
		if _, err := exec.LookPath(name); err != nil {
			return "", &MissingError{name}
		}
	}
	return d, nil
}

func version(dir string) int {
	n, _ := strconv.Atoi(filepath.Base(filepath.Dir(dir)))
	return n
}

func ok(path string) bool {
	fi, err := os.Stat(path)
	return err == nil && !fi.IsDir() && fi.Mode()&0o111 != 0
}

// tool returns the path of a PostgreSQL program.
func (s *Server) tool(name string) string {
	if p := filepath.Join(s.bin, name); ok(p) {
		return p
	}
	return name
}

// Start initializes a new data directory and starts a server on it, on a
// free port of 127.0.0.1. It returns a [*MissingError] when PostgreSQL is
// not installed.
func Start() (*Server, error) {
	bin, err := binaries()
	if err != nil {
		return nil, err
	}
	s := &Server{bin: bin}
	if os.Geteuid() == 0 {
		u, err := user.Lookup("postgres")
		if err != nil {
			return nil, &MissingError{"the postgres user (running as root, initdb must run as postgres)"}
		}
		if _, err := exec.LookPath("runuser"); err != nil {
			return nil, &MissingError{"runuser"}
		}
		uid, _ := strconv.Atoi(u.Uid)
		gid, _ := strconv.Atoi(u.Gid)
		s.asPostgres = &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}
	}
	if s.root, err = os.MkdirTemp("", "mcphost-pgserver-"); err != nil {
		return nil, fmt.Errorf("pgserver: %w", err)
	}
	fail := func(err error) (*Server, error) {
		os.RemoveAll(s.root)
		return nil, err
	}
	if err := os.Chmod(s.root, 0o755); err != nil {
		return fail(fmt.Errorf("pgserver: %w", err))
	}
	s.data, s.run = filepath.Join(s.root, "data"), filepath.Join(s.root, "run")
	for _, d := range []string{s.data, s.run} {
		if err := os.Mkdir(d, 0o700); err != nil {
			return fail(fmt.Errorf("pgserver: %w", err))
		}
		if s.asPostgres != nil {
			if err := os.Chown(d, int(s.asPostgres.Uid), int(s.asPostgres.Gid)); err != nil {
				return fail(fmt.Errorf("pgserver: %w", err))
			}
		}
	}
	if out, err := s.command(s.tool("initdb"), "-D", s.data, "-A", "trust", "-U", User, "--no-sync",
		"-E", "UTF8", "--locale=C", "--no-instructions").CombinedOutput(); err != nil {
		return fail(fmt.Errorf("pgserver: initdb: %v\n%s", err, out))
	}
	for attempt := 0; ; attempt++ {
		if s.port, err = freePort(); err != nil {
			return fail(err)
		}
		if err = s.Up(); err == nil {
			return s, nil
		}
		if attempt == 2 {
			return fail(err)
		}
	}
}

// command runs a PostgreSQL program as the postgres user when we are root.
func (s *Server) command(name string, args ...string) *exec.Cmd {
	if s.asPostgres != nil {
		return exec.Command("runuser", append([]string{"-u", "postgres", "--", name}, args...)...)
	}
	return exec.Command(name, args...)
}

// freePort returns a port on 127.0.0.1 that was free a moment ago.
func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("pgserver: free port: %w", err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// Up starts the postmaster (again, after [Server.Down]: same port, same
// data) and waits until it accepts connections.
func (s *Server) Up() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.proc != nil {
		return nil
	}
	logf, err := os.OpenFile(filepath.Join(s.run, "postgres.log"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return fmt.Errorf("pgserver: %w", err)
	}
	defer logf.Close()
	cmd := exec.Command(s.tool("postgres"), "-D", s.data,
		"-c", "listen_addresses=127.0.0.1", "-p", strconv.Itoa(s.port), "-k", s.run,
		"-c", "fsync=off", "-c", "full_page_writes=off", "-c", "max_connections=200")
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL, Credential: s.asPostgres}
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("pgserver: start postgres: %w", err)
	}
	exit := make(chan struct{})
	go func() { cmd.Wait(); close(exit) }()
	ctx, cancel := context.WithTimeout(context.Background(), startTimeout)
	defer cancel()
	for {
		c, err := pgconn.Connect(ctx, s.DSN("postgres"))
		if err == nil {
			c.Close(ctx)
			s.proc, s.exit = cmd, exit
			return nil
		}
		select {
		case <-exit:
			log, _ := os.ReadFile(filepath.Join(s.run, "postgres.log"))
			return fmt.Errorf("pgserver: postgres exited at start:\n%s", tail(log))
		case <-ctx.Done():
			cmd.Process.Kill()
			<-exit
			return fmt.Errorf("pgserver: postgres did not accept connections within %v: %v", startTimeout, err)
		case <-time.After(20 * time.Millisecond):
		}
	}
}

func tail(b []byte) string {
	if len(b) > 4000 {
		b = b[len(b)-4000:]
	}
	return string(b)
}

// Down stops the postmaster at once (pg_ctl -m immediate stop), as a crash
// would, keeping its data, and waits for it to exit.
func (s *Server) Down() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.proc == nil {
		return nil
	}
	out, err := s.command(s.tool("pg_ctl"), "-D", s.data, "-m", "immediate", "-w", "stop").CombinedOutput()
	if err != nil {
		s.proc.Process.Kill()
	}
	select {
	case <-s.exit:
	case <-time.After(30 * time.Second):
		s.proc.Process.Kill()
		<-s.exit
	}
	s.proc = nil
	if err != nil {
		return fmt.Errorf("pgserver: pg_ctl stop: %v\n%s", err, out)
	}
	return nil
}

// PID is the postmaster's process id while it runs, else 0.
func (s *Server) PID() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.proc == nil {
		return 0
	}
	return s.proc.Process.Pid
}

// Port is the server's TCP port on 127.0.0.1.
func (s *Server) Port() int { return s.port }

// DSN returns the URL of database db on the server, as the superuser.
func (s *Server) DSN(db string) string {
	u := url.URL{Scheme: "postgres", User: url.User(User), Host: net.JoinHostPort("127.0.0.1", strconv.Itoa(s.port)),
		Path: "/" + db, RawQuery: "sslmode=disable"}
	return u.String()
}

// Exec runs sql (one or more statements, no parameters) in database db.
func (s *Server) Exec(ctx context.Context, db, sql string) error {
	c, err := pgconn.Connect(ctx, s.DSN(db))
	if err != nil {
		return err
	}
	defer c.Close(context.WithoutCancel(ctx))
	_, err = c.Exec(ctx, sql).ReadAll()
	return err
}

// Restart is Down then Up.
func (s *Server) Restart() error {
	if err := s.Down(); err != nil {
		return err
	}
	return s.Up()
}

// CreateDatabase creates the empty database name and returns its DSN.
func (s *Server) CreateDatabase(ctx context.Context, name string) (string, error) {
	if err := s.Exec(ctx, "postgres", `CREATE DATABASE "`+strings.ReplaceAll(name, `"`, `""`)+`"`); err != nil {
		return "", fmt.Errorf("pgserver: create database %s: %w", name, err)
	}
	return s.DSN(name), nil
}

// Stop stops the server and removes its directory. It is safe to call
// more than once.
func (s *Server) Stop() {
	s.Down()
	if s.root != "" && strings.Contains(s.root, "mcphost-pgserver-") {
		os.RemoveAll(s.root)
	}
}
