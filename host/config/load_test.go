package config

import (
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/fstest"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/hashicorp/hcl/v2"
	"github.com/mcphost/mcphost/egress"
)

const (
	testHome       = "/home/tester"
	testToken      = "test-0123456789abcdef"
	testExecutable = "/opt/mcphost/bin/mcphost"
)

// testEnv is the only environment the tests see.
func testEnv(extra ...string) func(string) (string, bool) {
	env := map[string]string{"HOME": testHome, "MCPHOST_TEST_TOKEN": testToken}
	for i := 0; i+1 < len(extra); i += 2 {
		env[extra[i]] = extra[i+1]
	}
	return func(name string) (string, bool) {
		v, ok := env[name]
		return v, ok
	}
}

func testOptions() Options {
	return Options{LookupEnv: testEnv(), Executable: testExecutable}
}

func glob(t testing.TB, pattern string) []string {
	t.Helper()
	files, err := filepath.Glob(pattern)
	if err != nil {
		t.Fatal(err)
	}
	if len(files) == 0 {
		t.Fatalf("no files match %s", pattern)
	}
	return files
}

func diagText(diags hcl.Diagnostics) string {
	var b strings.Builder
	for _, d := range diags {
		fmt.Fprintf(&b, "\n\t%s", d.Error())
	}
	return b.String()
}

func TestValidFiles(t *testing.T) {
	for _, path := range glob(t, "testdata/valid/*.hcl") {
		t.Run(filepath.Base(path), func(t *testing.T) {
			cfg, diags := LoadFile(path, testOptions())
			if len(diags) > 0 {
				t.Fatalf("LoadFile(%s) diagnostics:%s", path, diagText(diags))
			}
			if cfg.Files[path] == nil {
				t.Errorf("Files has no entry for %s", path)
			}
		})
	}
}

// ignoreRanges drops what cannot be written down in a test table.
var ignoreRanges = cmp.Options{
	cmpopts.IgnoreFields(Config{}, "Files", "Filename", "PolicySet"),
	cmpopts.IgnoreFields(Server{}, "NameRange", "DeclRange", "CommandRange"),
	cmpopts.IgnoreFields(Principal{}, "NameRange", "DeclRange"),
	cmpopts.IgnoreFields(Policy{}, "NameRange", "DeclRange", "WhenRange"),
	cmpopts.IgnoreFields(Sandbox{}, "DeclRange"),
	cmpopts.IgnoreUnexported(Policy{}),
	cmp.Comparer(func(a, b egress.Rule) bool { return a == b }),
	cmpopts.EquateEmpty(),
}

// rules parses allow_hosts entries for a test's expectations.
func rules(t testing.TB, entries ...string) []egress.Rule {
	t.Helper()
	var out []egress.Rule
	for _, e := range entries {
		r, err := egress.ParseRule(e)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, r)
	}
	return out
}

// defaultSandbox is the top-level sandbox of a file without a sandbox
// block, protecting protected.
func defaultSandbox(protected ...string) Sandbox {
	return Sandbox{Mode: SandboxEnforce, OnUnsupported: UnsupportedRefuse, Network: NetworkNone, UID: DefaultSandboxUID, Protected: protected}
}

func TestLoadFileValues(t *testing.T) {
	path := filepath.Join("testdata", "valid", "full.hcl")
	dir, err := filepath.Abs(filepath.Dir(path))
	if err != nil {
		t.Fatal(err)
	}
	real, err := filepath.EvalSymlinks(dir)
	if err != nil {
		t.Fatal(err)
	}
	cfg, diags := LoadFile(path, testOptions())
	if len(diags) > 0 {
		t.Fatalf("diagnostics:%s", diagText(diags))
	}
	protected := []string{filepath.Join(real, "state"), filepath.Join(real, "full.hcl"), filepath.Join(real, "secrets", "bob.token")}
	top := Sandbox{
		Mode: SandboxEnforce, OnUnsupported: UnsupportedWarn, Network: NetworkNone,
		InheritEnv: []string{"LANG", "TZ"}, UID: 60000, Protected: protected,
	}
	want := &Config{
		PolicyDefault:   PolicyAllow,
		AppCompactAfter: DefaultAppCompactAfter, AppCompactSessionBytes: DefaultAppCompactSessionBytes,
		Listen:             "0.0.0.0:8080",
		DataDir:            filepath.Join(dir, "state"),
		LogLevel:           slog.LevelDebug,
		WatchConfig:        true,
		ElicitationTimeout: 5 * time.Minute,
		ApprovalTimeout:    90 * time.Second,
		Store:              StoreConfig{Sync: StoreSyncNormal},
		Gateway:            defaultGateway(nil),
		Telemetry:          Telemetry{ServiceName: DefaultServiceName},
		Sandbox:            top,
		Servers: []Server{
			{
				Name:      "files",
				Transport: TransportStdio,
				Command:   "npx",
				Args:      []string{"-y", "@modelcontextprotocol/server-filesystem", "/srv/data"},
				Env:       map[string]string{"NODE_ENV": "production", "TOKEN": testToken},
				Cwd:       filepath.Join(dir, "work"),
				Sandbox: Sandbox{
					Mode: SandboxEnforce, OnUnsupported: UnsupportedWarn, Network: NetworkProxy, Runtime: RuntimeNode,
					Read:       []string{filepath.Join(real, "grants", "reference.txt")},
					Write:      []string{filepath.Join(real, "grants", "inbox")},
					AllowHosts: rules(t, "api.github.com:443", "*.example.com:443", "registry.npmjs.org:443"),
					InheritEnv: []string{"LANG", "TZ", "NODE_OPTIONS"},
					UID:        60000,
					Limits:     SandboxLimits{OpenFiles: 1024, Memory: 1 << 30, Pids: 256, CPU: 3600},
					Protected:  protected,
				},
				Roots: []string{"file:///srv/data"},

				VersionNegotiation: NegotiationAuto,
				StdioProbe:         StdioProbeSibling, HTTPProbeTimeout: HTTPProbeTimeoutFallback,
				Apps: AppsAuto, AppResourceMaxBytes: DefaultAppResourceMaxBytes, AppResourceTimeout: DefaultAppResourceTimeout,
				DiscoveryTimeout:              10 * time.Second,
				CallTimeout:                   90 * time.Second,
				RestartBackoffMax:             DefaultRestartBackoffMax,
				SessionMode:                   SessionShared,
				MaxClientSessions:             DefaultMaxClientSessions,
				MaxClientSessionsPerPrincipal: DefaultClientSessionsPerPrincipal(DefaultMaxClientSessions),
				LogMessages:                   LogMessagesOwn,
				Placement:                     PlacementReplica,
				Enabled:                       true,
			},
			{
				Name:               "revenue",
				Transport:          TransportStdio,
				Command:            testExecutable,
				Args:               []string{"demo", "revenue"},
				Sandbox:            Sandbox{Mode: SandboxEnforce, OnUnsupported: UnsupportedWarn, Network: NetworkNone, InheritEnv: []string{"LANG", "TZ"}, UID: 60000, Protected: protected},
				VersionNegotiation: NegotiationLegacy,
				StdioProbe:         StdioProbeSibling, HTTPProbeTimeout: HTTPProbeTimeoutFallback,
				Apps: AppsAuto, AppResourceMaxBytes: DefaultAppResourceMaxBytes, AppResourceTimeout: DefaultAppResourceTimeout,
				DiscoveryTimeout:              DefaultDiscoveryTimeout,
				CallTimeout:                   DefaultCallTimeout,
				RestartBackoffMax:             DefaultRestartBackoffMax,
				SessionMode:                   SessionShared,
				MaxClientSessions:             DefaultMaxClientSessions,
				MaxClientSessionsPerPrincipal: DefaultClientSessionsPerPrincipal(DefaultMaxClientSessions),
				LogMessages:                   LogMessagesOwn,
				Placement:                     PlacementReplica,
				Enabled:                       false,
			},
			{
				Name:               "search",
				Transport:          TransportStreamableHTTP,
				URL:                "https://search.example.com/mcp",
				Headers:            map[string]string{"Authorization": "Bearer no-token-set", "X-Client": "mcphost"},
				VersionNegotiation: NegotiationAuto,
				StdioProbe:         StdioProbeSibling, HTTPProbeTimeout: HTTPProbeTimeoutFallback,
				Apps: AppsAuto, AppResourceMaxBytes: DefaultAppResourceMaxBytes, AppResourceTimeout: DefaultAppResourceTimeout,
				DiscoveryTimeout:              250 * time.Millisecond,
				CallTimeout:                   DefaultCallTimeout,
				RestartBackoffMax:             DefaultRestartBackoffMax,
				SessionMode:                   SessionShared,
				MaxClientSessions:             DefaultMaxClientSessions,
				MaxClientSessionsPerPrincipal: DefaultClientSessionsPerPrincipal(DefaultMaxClientSessions),
				LogMessages:                   LogMessagesOwn,
				Placement:                     PlacementReplica,
				Enabled:                       true,
			},
			{
				Name:               "legacy",
				Transport:          TransportSSE,
				URL:                "http://127.0.0.1:3001/sse",
				VersionNegotiation: NegotiationLegacy,
				StdioProbe:         StdioProbeSibling, HTTPProbeTimeout: HTTPProbeTimeoutFallback,
				Apps: AppsAuto, AppResourceMaxBytes: DefaultAppResourceMaxBytes, AppResourceTimeout: DefaultAppResourceTimeout,
				DiscoveryTimeout:              DefaultDiscoveryTimeout,
				CallTimeout:                   DefaultCallTimeout,
				RestartBackoffMax:             DefaultRestartBackoffMax,
				SessionMode:                   SessionShared,
				MaxClientSessions:             DefaultMaxClientSessions,
				MaxClientSessionsPerPrincipal: DefaultClientSessionsPerPrincipal(DefaultMaxClientSessions),
				LogMessages:                   LogMessagesOwn,
				Placement:                     PlacementReplica,
				Enabled:                       true,
			},
			{
				Name:      "echo",
				Transport: TransportWasm,
				Wasm:      filepath.Join(real, "grants", "echo.wasm"),
				Args:      []string{"--verbose"},
				Env:       map[string]string{"MODE": "test"},
				// No network, runtime or uid for a module.
				Sandbox: Sandbox{
					Mode: SandboxOff, OnUnsupported: UnsupportedWarn,
					Write:      []string{filepath.Join(real, "grants", "inbox")},
					AllowHosts: rules(t, "api.example.com:443"),
					InheritEnv: []string{"LANG", "TZ"},
					Limits:     SandboxLimits{Memory: 128 << 20, CPU: 60},
					Protected:  protected,
				},
				VersionNegotiation: NegotiationLegacy,
				StdioProbe:         StdioProbeSibling, HTTPProbeTimeout: HTTPProbeTimeoutFallback,
				Apps: AppsAuto, AppResourceMaxBytes: DefaultAppResourceMaxBytes, AppResourceTimeout: DefaultAppResourceTimeout,
				DiscoveryTimeout:              DefaultDiscoveryTimeout,
				CallTimeout:                   DefaultCallTimeout,
				RestartBackoffMax:             DefaultRestartBackoffMax,
				SessionMode:                   SessionShared,
				MaxClientSessions:             DefaultMaxClientSessions,
				MaxClientSessionsPerPrincipal: DefaultClientSessionsPerPrincipal(DefaultMaxClientSessions),
				LogMessages:                   LogMessagesOwn,
				Placement:                     PlacementReplica,
				Enabled:                       true,
			},
		},
		Principals: []Principal{
			{Name: "alice", Token: testToken, Groups: []string{"analysts", "admins"}, RateLimit: DefaultRateLimit},
			{Name: "bob", Token: "bob-0123456789abcdef", APIOnly: true, RateLimit: RateLimit{CallsPerSecond: 0.5, Burst: 1, ConcurrentCalls: 2}},
		},
		Admins: []string{"admins"},
	}
	if diff := cmp.Diff(want, cfg, ignoreRanges); diff != "" {
		t.Errorf("LoadFile(%s) mismatch (-want +got):\n%s", path, diff)
	}
	if cfg.Filename != path {
		t.Errorf("Filename = %q, want %q", cfg.Filename, path)
	}
	s := cfg.Server("search")
	if s == nil || s.NameRange.Start.Line != 40 || s.DeclRange.Filename != path {
		t.Errorf("Server(search) ranges = %+v", s)
	}
}

func TestLoadFS(t *testing.T) {
	fsys := fstest.MapFS{
		"conf/mcphost.hcl": {Data: []byte(`
server "a" {
  command = "a"
  cwd     = "sub"
  env     = { TOKEN = file("token.txt") }
}
`)},
		"conf/token.txt": {Data: []byte("from-fs")},
		"defaults.hcl":   {Data: []byte(`server "a" { command = "a" }`)},
		"home.hcl":       {Data: []byte("data_dir = \"~/state\"\nserver \"a\" {\n  cwd     = \"~\"\n  command = \"a\"\n}\n")},
		"abs.hcl":        {Data: []byte(`data_dir = "/var/lib/mcphost"`)},
		"escape.hcl":     {Data: []byte(`server "a" { command = file("../x") }`)},
	}
	tests := []struct {
		name    string
		file    string
		opts    Options
		dataDir string
		cwd     string
		env     map[string]string
		summary []string
	}{
		{
			name: "relative to the fs directory",
			file: "conf/mcphost.hcl", opts: Options{LookupEnv: testEnv()},
			dataDir: filepath.Join(testHome, ".local", "state", "mcphost"),
			cwd:     filepath.Join("conf", "sub"),
			env:     map[string]string{"TOKEN": "from-fs"},
		},
		{
			name: "relative to BaseDir",
			file: "conf/mcphost.hcl", opts: Options{LookupEnv: testEnv(), BaseDir: "/etc/mcphost"},
			dataDir: filepath.Join(testHome, ".local", "state", "mcphost"),
			cwd:     filepath.Join("/etc/mcphost", "sub"),
			env:     map[string]string{"TOKEN": "from-fs"},
		},
		{
			name: "XDG_STATE_HOME",
			file: "defaults.hcl", opts: Options{LookupEnv: testEnv("XDG_STATE_HOME", "/state")},
			dataDir: filepath.Join("/state", "mcphost"),
		},
		{
			name: "relative XDG_STATE_HOME is ignored",
			file: "defaults.hcl", opts: Options{LookupEnv: testEnv("XDG_STATE_HOME", "state")},
			dataDir: filepath.Join(testHome, ".local", "state", "mcphost"),
		},
		{
			name: "no HOME",
			file: "defaults.hcl", opts: Options{LookupEnv: func(string) (string, bool) { return "", false }},
			summary: []string{"No data directory"},
		},
		{
			name: "tilde",
			file: "home.hcl", opts: Options{LookupEnv: testEnv()},
			dataDir: filepath.Join(testHome, "state"),
			cwd:     testHome,
		},
		{
			name: "tilde without HOME",
			file: "home.hcl", opts: Options{LookupEnv: func(string) (string, bool) { return "", false }},
			summary: []string{"Home directory unknown", "Home directory unknown"},
		},
		{
			name: "absolute",
			file: "abs.hcl", opts: Options{LookupEnv: testEnv(), BaseDir: "/elsewhere"},
			dataDir: filepath.FromSlash("/var/lib/mcphost"),
		},
		{
			name: "file outside the fs",
			file: "escape.hcl", opts: Options{LookupEnv: testEnv()},
			dataDir: filepath.Join(testHome, ".local", "state", "mcphost"),
			summary: []string{"Cannot read file"},
		},
		{
			name: "missing config file",
			file: "nope.hcl", opts: Options{LookupEnv: testEnv()},
			summary: []string{"Cannot read configuration file"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg, diags := Load(fsys, tt.file, tt.opts)
			if cfg == nil || cfg.Files == nil {
				t.Fatal("Load returned a nil Config or nil Files")
			}
			var summaries []string
			for _, d := range diags {
				summaries = append(summaries, d.Summary)
			}
			if diff := cmp.Diff(tt.summary, summaries, cmpopts.EquateEmpty()); diff != "" {
				t.Fatalf("summaries (-want +got):\n%s%s", diff, diagText(diags))
			}
			if tt.summary != nil {
				return
			}
			if cfg.DataDir != tt.dataDir {
				t.Errorf("DataDir = %q, want %q", cfg.DataDir, tt.dataDir)
			}
			if len(cfg.Servers) > 0 {
				s := cfg.Servers[0]
				if s.Cwd != tt.cwd {
					t.Errorf("Cwd = %q, want %q", s.Cwd, tt.cwd)
				}
				if diff := cmp.Diff(tt.env, s.Env, cmpopts.EquateEmpty()); diff != "" {
					t.Errorf("Env (-want +got):\n%s", diff)
				}
			}
		})
	}
}

func TestParse(t *testing.T) {
	src := []byte(`server "a" {
  command = executable()
  args    = [file("x.txt")]
}
`)
	cfg, diags := Parse(src, "inline.hcl", testOptions())
	if len(diags) != 1 || diags[0].Summary != "File not available" {
		t.Fatalf("diagnostics:%s", diagText(diags))
	}
	if got := diags[0].Subject; got == nil || got.Start.Line != 3 || got.Start.Column != 14 || got.End.Column != 27 {
		t.Errorf("subject = %v, want the whole call on line 3", got)
	}
	if cfg.Files["inline.hcl"] == nil || cfg.Servers[0].Command != testExecutable {
		t.Errorf("config = %+v", cfg)
	}
}

func TestDefault(t *testing.T) {
	opts := testOptions()
	cfg, diags := Default(opts)
	if len(diags) > 0 {
		t.Fatalf("Default diagnostics:%s", diagText(diags))
	}
	if cfg.Filename != DefaultFilename || cfg.Files[DefaultFilename] == nil {
		t.Errorf("Filename = %q, Files = %v", cfg.Filename, cfg.Files)
	}
	want := &Config{
		PolicyDefault:   PolicyAllow,
		AppCompactAfter: DefaultAppCompactAfter, AppCompactSessionBytes: DefaultAppCompactSessionBytes,
		Listen:    DefaultListen,
		DataDir:   filepath.Join(testHome, ".local", "state", "mcphost"),
		LogLevel:  slog.LevelInfo,
		Store:     StoreConfig{Sync: StoreSyncFull},
		Gateway:   defaultGateway(nil),
		Telemetry: Telemetry{ServiceName: DefaultServiceName},
		Sandbox:   defaultSandbox(realPath(filepath.Join(testHome, ".local", "state", "mcphost"))),
		Servers: []Server{{
			Name:               "revenue",
			Transport:          TransportStdio,
			Command:            opts.Executable,
			Args:               []string{"demo", "revenue"},
			Sandbox:            defaultSandbox(realPath(filepath.Join(testHome, ".local", "state", "mcphost"))),
			VersionNegotiation: NegotiationLegacy,
			StdioProbe:         StdioProbeSibling, HTTPProbeTimeout: HTTPProbeTimeoutFallback,
			Apps: AppsAuto, AppResourceMaxBytes: DefaultAppResourceMaxBytes, AppResourceTimeout: DefaultAppResourceTimeout,
			DiscoveryTimeout:              DefaultDiscoveryTimeout,
			CallTimeout:                   DefaultCallTimeout,
			RestartBackoffMax:             DefaultRestartBackoffMax,
			SessionMode:                   SessionShared,
			MaxClientSessions:             DefaultMaxClientSessions,
			MaxClientSessionsPerPrincipal: DefaultClientSessionsPerPrincipal(DefaultMaxClientSessions),
			LogMessages:                   LogMessagesOwn,
			Placement:                     PlacementReplica,
			Enabled:                       true,
		}},
		Policies: []Policy{{
			Name:    "approve-destructive",
			Phase:   "call",
			Effect:  PolicyAsk,
			When:    "tool.annotations.destructiveHint && !tool.annotations.readOnlyHint",
			Message: "This tool may change or delete data. Run it?",
		}},
	}
	if cfg.PolicySet == nil || cfg.PolicySet.Rules() != 1 {
		t.Errorf("the default policy set is not compiled: %v", cfg.PolicySet)
	}
	if diff := cmp.Diff(want, cfg, ignoreRanges); diff != "" {
		t.Errorf("Default mismatch (-want +got):\n%s", diff)
	}
}

func TestDefaultExecutable(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Skip(err)
	}
	cfg, diags := Default(Options{LookupEnv: testEnv()})
	if len(diags) > 0 {
		t.Fatalf("diagnostics:%s", diagText(diags))
	}
	if got := cfg.Server("revenue").Command; got != exe {
		t.Errorf("Command = %q, want os.Executable() %q", got, exe)
	}
}

// exampleEnv supplies every variable the examples read with env().
func exampleEnv() func(string) (string, bool) {
	return testEnv(
		"GITHUB_TOKEN", "ghp_example_token_value",
		"SEARCH_TOKEN", "search-example-token",
		"ALICE_TOKEN", "alice-0123456789abcdef",
		"BOB_TOKEN", "bob-0123456789abcdef",
		"CI_TOKEN", "ci-0123456789abcdef0",
		"AGENT_TOKEN", "agent-0123456789abcdef",
	)
}

func TestExamples(t *testing.T) {
	for _, path := range glob(t, "../../examples/hcl/*.hcl") {
		t.Run(filepath.Base(path), func(t *testing.T) {
			_, diags := LoadFile(path, Options{LookupEnv: exampleEnv(), Executable: testExecutable})
			if len(diags) > 0 {
				t.Fatalf("LoadFile(%s) diagnostics:%s", path, diagText(diags))
			}
			// On a fresh checkout nothing the examples read is set:
			// `mcphost validate examples/hcl/*.hcl` must still pass.
			bare := func(name string) (string, bool) {
				if name == "HOME" {
					return testHome, true
				}
				return "", false
			}
			if _, diags := LoadFile(path, Options{LookupEnv: bare, Executable: testExecutable}); diags.HasErrors() {
				t.Fatalf("LoadFile(%s) with an empty environment:%s", path, diagText(diags))
			}
			src, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			formatted, diags := Format(src, path)
			if diags.HasErrors() {
				t.Fatal(diagText(diags))
			}
			if diff := cmp.Diff(string(src), string(formatted)); diff != "" {
				t.Errorf("%s is not formatted (-file +formatted):\n%s", path, diff)
			}
		})
	}
}

func TestFormat(t *testing.T) {
	tests := []struct {
		name    string
		src     string
		want    string
		summary string
	}{
		{
			name: "aligns and indents",
			src:  "listen=\"127.0.0.1:7777\"\nserver \"a\" {\ncommand=\"a\"\n    args = [\"x\",\"y\"]\n}\n",
			want: "listen = \"127.0.0.1:7777\"\nserver \"a\" {\n  command = \"a\"\n  args    = [\"x\", \"y\"]\n}\n",
		},
		{
			name: "already formatted",
			src:  "server \"a\" {\n  command = \"a\"\n}\n",
			want: "server \"a\" {\n  command = \"a\"\n}\n",
		},
		{
			name:    "syntax error",
			src:     "server \"a\" {\n  command = \n}\n",
			summary: "Invalid expression",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, diags := Format([]byte(tt.src), "fmt.hcl")
			if tt.summary != "" {
				if got != nil || len(diags) == 0 || diags[0].Summary != tt.summary {
					t.Fatalf("Format = %q,%s; want no output and %q", got, diagText(diags), tt.summary)
				}
				return
			}
			if len(diags) > 0 {
				t.Fatalf("diagnostics:%s", diagText(diags))
			}
			if diff := cmp.Diff(tt.want, string(got)); diff != "" {
				t.Errorf("Format (-want +got):\n%s", diff)
			}
		})
	}
}
