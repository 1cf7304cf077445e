package pgtest

import (
	"errors"
	"fmt"
	"os"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/mcphost/mcphost/internal/pgserver"
)

// User is the superuser of every server; it needs no password.
const User = pgserver.User

// Server is one running PostgreSQL server.
type Server struct {
	*pgserver.Server
	dbs atomic.Int64
}

// unavailable skips tb, or fails it when CI is set.
func unavailable(tb testing.TB, err error) {
	tb.Helper()
	var m *pgserver.MissingError
	if errors.As(err, &m) && os.Getenv("CI") == "" {
		tb.Skip(err.Error())
	}
	if errors.As(err, &m) {
		tb.Fatalf("%v (CI is set: PostgreSQL tests must not be skipped)", err)
	}
	tb.Fatal(err)
}

func start() (*Server, error) {
	s, err := pgserver.Start()
	if err != nil {
		return nil, err
	}
	return &Server{Server: s}, nil
}

// Start starts a new server for tb and stops it in tb's cleanup.
func Start(tb testing.TB) *Server {
	tb.Helper()
	s, err := start()
	if err != nil {
		unavailable(tb, err)
	}
	tb.Cleanup(s.Stop)
	return s
}

var shared struct {
	once sync.Once
	main atomic.Bool
	srv  *Server
	err  error
}

// Shared returns the server every test of this test binary shares,
// starting it on first use. The binary's TestMain must run the tests
// through [Main], which stops it.
func Shared(tb testing.TB) *Server {
	tb.Helper()
	if !shared.main.Load() {
		tb.Fatal("pgtest.Shared needs TestMain to call pgtest.Main(m), which stops the shared server")
	}
	shared.once.Do(func() { shared.srv, shared.err = start() })
	if shared.err != nil {
		unavailable(tb, shared.err)
	}
	return shared.srv
}

// Main runs m's tests and then stops the shared server, if one was
// started; it returns m.Run's exit code.
func Main(m *testing.M) int {
	shared.main.Store(true)
	code := m.Run()
	if shared.srv != nil {
		shared.srv.Stop()
	}
	return code
}

// NewDatabase creates an empty database for tb and returns its DSN.
func (s *Server) NewDatabase(tb testing.TB) string {
	tb.Helper()
	name := fmt.Sprintf("t%d_%d", os.Getpid(), s.dbs.Add(1))
	dsn, err := s.CreateDatabase(tb.Context(), name)
	if err != nil {
		tb.Fatalf("pgtest: %v", err)
	}
	return dsn
}

// Down stops the server at once, as a crash would, keeping its data; a
// later [Server.Up] starts it again on the same port.
func (s *Server) Down(tb testing.TB) {
	tb.Helper()
	if err := s.Server.Down(); err != nil {
		tb.Fatal(err)
	}
}

// Up starts a server stopped by [Server.Down] again, on the same port and
// with the same data, and returns once it accepts connections.
func (s *Server) Up(tb testing.TB) {
	tb.Helper()
	if err := s.Server.Up(); err != nil {
		tb.Fatal(err)
	}
}

// Restart is Down then Up.
func (s *Server) Restart(tb testing.TB) {
	tb.Helper()
	s.Down(tb)
	s.Up(tb)
}
