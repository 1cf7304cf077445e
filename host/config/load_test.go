package config

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"testing/fstest"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/hashicorp/hcl/v2"
)

var update = flag.Bool("update", false, "rewrite testdata/golden from the current output")

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
	cmpopts.IgnoreFields(Server{}, "NameRange", "DeclRange"),
	cmpopts.IgnoreFields(Principal{}, "NameRange", "DeclRange"),
	cmpopts.IgnoreFields(Policy{}, "NameRange", "DeclRange", "WhenRange"),
	cmpopts.IgnoreUnexported(Policy{}),
	cmpopts.EquateEmpty(),
}

func TestLoadFileValues(t *testing.T) {
	path := filepath.Join("testdata", "valid", "full.hcl")
	dir, err := filepath.Abs(filepath.Dir(path))
	if err != nil {
		t.Fatal(err)
	}
	cfg, diags := LoadFile(path, testOptions())
	if len(diags) > 0 {
		t.Fatalf("diagnostics:%s", diagText(diags))
	}
	want := &Config{
		PolicyDefault:   PolicyAllow,
		AppCompactAfter: DefaultAppCompactAfter, AppCompactSessionBytes: DefaultAppCompactSessionBytes,
		Listen:             "0.0.0.0:8080",
		DataDir:            filepath.Join(dir, "state"),
		LogLevel:           slog.LevelDebug,
		WatchConfig:        true,
		ElicitationTimeout: 5 * time.Minute,
		Store:              StoreConfig{Sync: StoreSyncNormal},
		Gateway:            defaultGateway(nil),
		Telemetry:          Telemetry{ServiceName: DefaultServiceName},
		Sandbox:            Sandbox{InheritEnv: []string{"LANG", "TZ"}},
		Servers: []Server{
			{
				Name:      "files",
				Transport: TransportStdio,
				Command:   "npx",
				Args:      []string{"-y", "@modelcontextprotocol/server-filesystem", "/srv/data"},
				Env:       map[string]string{"NODE_ENV": "production", "TOKEN": testToken},
				Cwd:       filepath.Join(dir, "work"),
				Sandbox:   Sandbox{InheritEnv: []string{"LANG", "TZ", "NODE_OPTIONS"}},
				Roots:     []string{"file:///srv/data"},

				VersionNegotiation: NegotiationAuto,
				StdioProbe:         StdioProbeSibling, HTTPProbeTimeout: HTTPProbeTimeoutFallback,
				Apps: AppsAuto, AppResourceMaxBytes: DefaultAppResourceMaxBytes, AppResourceTimeout: DefaultAppResourceTimeout,
				DiscoveryTimeout:  10 * time.Second,
				CallTimeout:       90 * time.Second,
				RestartBackoffMax: DefaultRestartBackoffMax,
				SessionMode:       SessionShared,
				MaxClientSessions: DefaultMaxClientSessions,
				Placement:         PlacementReplica,
				Enabled:           true,
			},
			{
				Name:               "revenue",
				Transport:          TransportStdio,
				Command:            testExecutable,
				Args:               []string{"demo", "revenue"},
				Sandbox:            Sandbox{InheritEnv: []string{"LANG", "TZ"}},
				VersionNegotiation: NegotiationLegacy,
				StdioProbe:         StdioProbeSibling, HTTPProbeTimeout: HTTPProbeTimeoutFallback,
				Apps: AppsAuto, AppResourceMaxBytes: DefaultAppResourceMaxBytes, AppResourceTimeout: DefaultAppResourceTimeout,
				DiscoveryTimeout:  DefaultDiscoveryTimeout,
				CallTimeout:       DefaultCallTimeout,
				RestartBackoffMax: DefaultRestartBackoffMax,
				SessionMode:       SessionShared,
				MaxClientSessions: DefaultMaxClientSessions,
				Placement:         PlacementReplica,
				Enabled:           false,
			},
			{
				Name:               "search",
				Transport:          TransportStreamableHTTP,
				URL:                "https://search.example.com/mcp",
				Headers:            map[string]string{"Authorization": "Bearer no-token-set", "X-Client": "mcphost"},
				VersionNegotiation: NegotiationAuto,
				StdioProbe:         StdioProbeSibling, HTTPProbeTimeout: HTTPProbeTimeoutFallback,
				Apps: AppsAuto, AppResourceMaxBytes: DefaultAppResourceMaxBytes, AppResourceTimeout: DefaultAppResourceTimeout,
				DiscoveryTimeout:  250 * time.Millisecond,
				CallTimeout:       DefaultCallTimeout,
				RestartBackoffMax: DefaultRestartBackoffMax,
				SessionMode:       SessionShared,
				MaxClientSessions: DefaultMaxClientSessions,
				Placement:         PlacementReplica,
				Enabled:           true,
			},
			{
				Name:               "legacy",
				Transport:          TransportSSE,
				URL:                "http://127.0.0.1:3001/sse",
				VersionNegotiation: NegotiationLegacy,
				StdioProbe:         StdioProbeSibling, HTTPProbeTimeout: HTTPProbeTimeoutFallback,
				Apps: AppsAuto, AppResourceMaxBytes: DefaultAppResourceMaxBytes, AppResourceTimeout: DefaultAppResourceTimeout,
				DiscoveryTimeout:  DefaultDiscoveryTimeout,
				CallTimeout:       DefaultCallTimeout,
				RestartBackoffMax: DefaultRestartBackoffMax,
				SessionMode:       SessionShared,
				MaxClientSessions: DefaultMaxClientSessions,
				Placement:         PlacementReplica,
				Enabled:           true,
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
	if s == nil || s.NameRange.Start.Line != 30 || s.DeclRange.Filename != path {
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
		Servers: []Server{{
			Name:               "revenue",
			Transport:          TransportStdio,
			Command:            opts.Executable,
			Args:               []string{"demo", "revenue"},
			VersionNegotiation: NegotiationLegacy,
			StdioProbe:         StdioProbeSibling, HTTPProbeTimeout: HTTPProbeTimeoutFallback,
			Apps: AppsAuto, AppResourceMaxBytes: DefaultAppResourceMaxBytes, AppResourceTimeout: DefaultAppResourceTimeout,
			DiscoveryTimeout:  DefaultDiscoveryTimeout,
			CallTimeout:       DefaultCallTimeout,
			RestartBackoffMax: DefaultRestartBackoffMax,
			SessionMode:       SessionShared,
			MaxClientSessions: DefaultMaxClientSessions,
			Placement:         PlacementReplica,
			Enabled:           true,
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

// markerRE finds `# ERROR: Summary` and `# WARNING: Summary` comments.
var markerRE = regexp.MustCompile(`#\s*(ERROR|WARNING):\s*([^#]*)`)

// expectedDiagnostics maps line numbers to "SEVERITY: Summary" strings.
func expectedDiagnostics(t *testing.T, src []byte) map[int][]string {
	t.Helper()
	want := map[int][]string{}
	for i, line := range strings.Split(string(src), "\n") {
		for _, m := range markerRE.FindAllStringSubmatch(line, -1) {
			want[i+1] = append(want[i+1], m[1]+": "+strings.TrimSpace(m[2]))
		}
	}
	return want
}

func actualDiagnostics(diags hcl.Diagnostics) map[int][]string {
	got := map[int][]string{}
	for _, d := range diags {
		line := 0
		if d.Subject != nil {
			line = d.Subject.Start.Line
		}
		sev := "ERROR"
		if d.Severity == hcl.DiagWarning {
			sev = "WARNING"
		}
		got[line] = append(got[line], sev+": "+d.Summary)
	}
	return got
}

func TestInvalidFiles(t *testing.T) {
	sortLines := cmp.Transformer("sort", func(in []string) []string {
		out := slices.Clone(in)
		slices.Sort(out)
		return out
	})
	for _, path := range glob(t, "testdata/invalid/*.hcl") {
		t.Run(filepath.Base(path), func(t *testing.T) {
			src, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			want := expectedDiagnostics(t, src)
			if len(want) == 0 {
				t.Fatalf("%s has no # ERROR: or # WARNING: markers", path)
			}
			cfg, diags := LoadFile(path, testOptions())
			if cfg == nil || cfg.Files[path] == nil {
				t.Fatalf("Files has no entry for %s", path)
			}
			if !slices.IsSortedFunc(diags, func(a, b *hcl.Diagnostic) int {
				return cmpPos(a.Subject, b.Subject)
			}) {
				t.Errorf("diagnostics are not sorted:%s", diagText(diags))
			}
			for _, d := range diags {
				if d.Subject == nil {
					t.Errorf("diagnostic without subject: %s", d.Error())
					continue
				}
				if d.Subject.Filename != path {
					t.Errorf("subject file %q, want %q: %s", d.Subject.Filename, path, d.Error())
				}
				if d.Detail == "" || !(strings.HasSuffix(d.Detail, ".") || strings.HasSuffix(d.Detail, ".)")) {
					t.Errorf("detail is not a full sentence: %s", d.Error())
				}
			}
			got := actualDiagnostics(diags)
			if diff := cmp.Diff(want, got, sortLines); diff != "" {
				t.Errorf("line -> diagnostics mismatch (-want +got):\n%s\nall:%s", diff, diagText(diags))
			}
		})
	}
}

func cmpPos(a, b *hcl.Range) int {
	switch {
	case a == nil && b == nil:
		return 0
	case a == nil:
		return 1
	case b == nil:
		return -1
	}
	if c := strings.Compare(a.Filename, b.Filename); c != 0 {
		return c
	}
	if a.Start.Line != b.Start.Line {
		return a.Start.Line - b.Start.Line
	}
	return a.Start.Column - b.Start.Column
}

// TestDiagnosticDetails checks details the line markers cannot express.
func TestDiagnosticDetails(t *testing.T) {
	tests := []struct {
		file     string
		summary  string
		contains []string
		excludes []string
	}{
		{
			file:     "servers.hcl",
			summary:  "Duplicate server name",
			contains: []string{`"one"`, filepath.Join("testdata", "invalid", "servers.hcl") + ":2"},
		},
		{
			file:     "principals.hcl",
			summary:  "Duplicate principal name",
			contains: []string{`"alice"`, filepath.Join("testdata", "invalid", "principals.hcl") + ":1"},
		},
		{
			file:     "principals.hcl",
			summary:  "Duplicate token",
			contains: []string{`"copycat"`, `"alice"`, filepath.Join("testdata", "invalid", "principals.hcl") + ":2"},
			excludes: []string{"alice-0123456789abcdef"},
		},
		{
			file:     "principals.hcl",
			summary:  "Token too short",
			contains: []string{"bearer credential", "16"},
			excludes: []string{"hunter2"},
		},
		{
			file:     "functions.hcl",
			summary:  "Environment variable not set",
			contains: []string{`The environment variable "MCPHOST_UNSET_DIR" is not set. Set it, or give a default: env("MCPHOST_UNSET_DIR", "default").`},
		},
		{
			file:     "functions.hcl",
			summary:  "File not found",
			contains: []string{filepath.Join("testdata", "invalid", "missing.txt")},
		},
		{
			file:     "servers.hcl",
			summary:  "Missing transport",
			contains: []string{"command = ", "url = "},
		},
		{
			file:     "servers.hcl",
			summary:  "Invalid server name",
			contains: []string{"SERVER.TOOL", `"tools_search"`},
		},
		{
			file:     "remote.hcl",
			summary:  "Version negotiation not available",
			contains: []string{"the 2024-11-05 HTTP+SSE transport is always legacy"},
		},
		{
			file:     "remote.hcl",
			summary:  "Invalid transport",
			contains: []string{`"streamable_http"`, `"sse"`},
		},
		{
			file:     "remote.hcl",
			summary:  "Invalid version negotiation",
			contains: []string{`"legacy"`, `"auto"`},
		},
		{
			file:     "remote.hcl",
			summary:  "Argument only for stdio servers",
			contains: []string{`"args"`, "command"},
		},
		{
			file:     "remote.hcl",
			summary:  "Argument only for remote servers",
			contains: []string{`"headers"`, "url"},
		},
		{
			file:     "durations.hcl",
			summary:  "Invalid duration",
			contains: []string{`"10s"`, `"1m30s"`, `"250ms"`},
		},
		{
			file:     "durations.hcl",
			summary:  "Discovery timeout clamped",
			contains: []string{"10ms", "100ms is used"},
		},
		{
			file:     "durations.hcl",
			summary:  "Discovery timeout clamped",
			contains: []string{"1h", "5m is used"},
		},
		{
			file:     "policies.hcl",
			summary:  "Effect ask needs the call phase",
			contains: []string{`phase = "call"`, `"list"`},
		},
		{
			file:     "plugins.hcl",
			summary:  "Invalid plugin timeout",
			contains: []string{"250ms", "1m"},
		},
		{
			file:     "top.hcl",
			summary:  "Invalid log level",
			contains: []string{`"debug"`, `"info"`, `"warn"`, `"error"`},
		},
		{
			file:     "store.hcl",
			summary:  "Invalid store sync",
			contains: []string{`"fsync"`, `"full" (the default`, `"normal"`, "power loss"},
		},
		{
			file:     "store.hcl",
			summary:  "Duplicate store block",
			contains: []string{filepath.Join("testdata", "invalid", "store.hcl") + ":1"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.file+"/"+tt.summary, func(t *testing.T) {
			path := filepath.Join("testdata", "invalid", tt.file)
			_, diags := LoadFile(path, testOptions())
			var details []string
			for _, d := range diags {
				if d.Summary == tt.summary {
					details = append(details, d.Detail)
				}
			}
			if len(details) == 0 {
				t.Fatalf("no %q diagnostic:%s", tt.summary, diagText(diags))
			}
			for _, detail := range details {
				ok := true
				for _, s := range tt.contains {
					ok = ok && strings.Contains(detail, s)
				}
				for _, s := range tt.excludes {
					ok = ok && !strings.Contains(detail, s)
				}
				if ok {
					return
				}
			}
			t.Errorf("no %q detail contains %q and excludes %q; details:\n%s",
				tt.summary, tt.contains, tt.excludes, strings.Join(details, "\n"))
		})
	}
}

// TestNoSecretsInDiagnostics checks that token values never reach the
// rendered diagnostics except through the source snippet.
func TestNoSecretsInDiagnostics(t *testing.T) {
	src := []byte(`principal "a" {
  token = env("A_TOKEN")
}
principal "b" {
  token = env("B_TOKEN")
}
server "s" {
  url     = "https://x.example.com/mcp"
  headers = { Authorization = env("A_TOKEN") }
  args    = [env("A_TOKEN")]
}
`)
	secret := "s3cret-s3cret-s3cret"
	cfg, diags := Parse(src, "secrets.hcl", Options{LookupEnv: testEnv("A_TOKEN", secret, "B_TOKEN", secret)})
	if !diags.HasErrors() {
		t.Fatal("want errors")
	}
	var text bytes.Buffer
	if err := hcl.NewDiagnosticTextWriter(&text, cfg.Files, 0, false).WriteDiagnostics(diags); err != nil {
		t.Fatal(err)
	}
	text.Write(DiagnosticsJSON(diags))
	if strings.Contains(text.String(), secret) {
		t.Errorf("the token appears in the diagnostics:\n%s", text.String())
	}
}

func TestGolden(t *testing.T) {
	for _, name := range []string{"several", "functions"} {
		t.Run(name, func(t *testing.T) {
			path := filepath.Join("testdata", "invalid", name+".hcl")
			cfg, diags := LoadFile(path, testOptions())
			var got bytes.Buffer
			if err := hcl.NewDiagnosticTextWriter(&got, cfg.Files, 0, false).WriteDiagnostics(diags); err != nil {
				t.Fatal(err)
			}
			golden := filepath.Join("testdata", "golden", name+".txt")
			if *update {
				if err := os.WriteFile(golden, got.Bytes(), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("%v (run go test -update to create it)", err)
			}
			if diff := cmp.Diff(string(want), got.String()); diff != "" {
				t.Errorf("rendered diagnostics mismatch (-want +got); run go test -update if intended:\n%s", diff)
			}
		})
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

func TestDiagnosticsJSON(t *testing.T) {
	path := filepath.Join("testdata", "invalid", "durations.hcl")
	_, diags := LoadFile(path, testOptions())
	diags = append(diags, &hcl.Diagnostic{Severity: hcl.DiagError, Summary: "No subject", Detail: "None."})

	type pos struct{ Line, Column, Byte int }
	type rng struct {
		Filename   string
		Start, End pos
	}
	type diag struct {
		Severity, Summary, Detail string
		Range                     *rng
	}
	var doc struct {
		Valid        bool `json:"valid"`
		ErrorCount   int  `json:"error_count"`
		WarningCount int  `json:"warning_count"`
		Diagnostics  []diag
	}
	out := DiagnosticsJSON(diags)
	if !bytes.HasSuffix(out, []byte("}\n")) {
		t.Errorf("output does not end with a newline: %q", out)
	}
	if err := json.Unmarshal(out, &doc); err != nil {
		t.Fatal(err)
	}
	if doc.Valid || doc.ErrorCount != 5 || doc.WarningCount != 2 || len(doc.Diagnostics) != 7 {
		t.Errorf("valid=%v errors=%d warnings=%d n=%d", doc.Valid, doc.ErrorCount, doc.WarningCount, len(doc.Diagnostics))
	}
	first := diag{
		Severity: "error",
		Summary:  "Invalid duration",
		Detail:   `The discovery_timeout "10" is not a duration. Write a number followed by a unit, such as "10s", "1m30s" or "250ms".`,
		Range:    &rng{Filename: path, Start: pos{3, 23, 61}, End: pos{3, 27, 65}},
	}
	if diff := cmp.Diff(first, doc.Diagnostics[0]); diff != "" {
		t.Errorf("first diagnostic (-want +got):\n%s", diff)
	}
	if d := doc.Diagnostics[2]; d.Severity != "warning" || d.Summary != "Discovery timeout clamped" {
		t.Errorf("third diagnostic = %+v", d)
	}
	if last := doc.Diagnostics[6]; last.Range != nil || !bytes.Contains(out, []byte(`"summary": "No subject"`)) {
		t.Errorf("diagnostic without subject has a range: %+v", last)
	}
	if bytes.Contains(out[bytes.LastIndex(out, []byte("No subject")):], []byte(`"range"`)) {
		t.Errorf("range not omitted:\n%s", out)
	}

	var empty map[string]any
	if err := json.Unmarshal(DiagnosticsJSON(nil), &empty); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(map[string]any{"valid": true, "error_count": 0.0, "warning_count": 0.0, "diagnostics": []any{}}, empty); diff != "" {
		t.Errorf("DiagnosticsJSON(nil) (-want +got):\n%s", diff)
	}
}

func TestSortDiagnostics(t *testing.T) {
	r := func(file string, line, col int) *hcl.Range {
		return &hcl.Range{Filename: file, Start: hcl.Pos{Line: line, Column: col}, End: hcl.Pos{Line: line, Column: col}}
	}
	diags := hcl.Diagnostics{
		{Summary: "none-1"},
		{Summary: "b-1-1", Subject: r("b", 1, 1)},
		{Summary: "a-2-5", Subject: r("a", 2, 5)},
		{Summary: "a-2-1", Subject: r("a", 2, 1)},
		{Summary: "none-2"},
		{Summary: "a-10-1", Subject: r("a", 10, 1)},
		{Summary: "a-2-1-second", Subject: r("a", 2, 1)},
	}
	SortDiagnostics(diags)
	var got []string
	for _, d := range diags {
		got = append(got, d.Summary)
	}
	want := []string{"a-2-1", "a-2-1-second", "a-2-5", "a-10-1", "b-1-1", "none-1", "none-2"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("order (-want +got):\n%s", diff)
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
