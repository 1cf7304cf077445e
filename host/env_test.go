package host_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/mcphost/mcphost/host"
	"github.com/mcphost/mcphost/host/config"
	"github.com/mcphost/mcphost/internal/testbin"
)

const envreportPkg = "github.com/mcphost/mcphost/testdata/servers/envreport"

// serverEnviron calls the envreport fixture's environ tool on server and
// returns the environment its process was started with.
func serverEnviron(t *testing.T, h *host.Host, server string) map[string]string {
	t.Helper()
	res := call(t, h, server, "environ", `{}`)
	if res.IsError || res.StructuredContent == nil {
		t.Fatalf("environ on %s: isError %v, text %q", server, res.IsError, textOf(res))
	}
	raw, err := json.Marshal(res.StructuredContent)
	if err != nil {
		t.Fatal(err)
	}
	var out struct {
		Env map[string]string `json:"env"`
	}
	if err := json.Unmarshal(raw, &out); err != nil {
		t.Fatal(err)
	}
	return out.Env
}

// TestServerEnvironment: a stdio server gets only the SDKs' six names (those
// set), the names its sandbox blocks add, and its env; never the daemon's
// secrets, whatever the config says.
func TestServerEnvironment(t *testing.T) {
	bin := testbin.Build(t, envreportPkg)
	// What an operator typically has in the daemon's environment.
	t.Setenv("MCPHOST_SECRET_KEY", "c2VhbGluZy1rZXktb2YtdGhlLWRhZW1vbg==")
	t.Setenv("MCPHOST_CLUSTER_SECRET", "cluster-secret")
	t.Setenv("DATABASE_URL", "postgres://mcphost:hunter2@db:5432/mcphost")
	t.Setenv("FOO", "bar")
	t.Setenv("ENVTEST_EVERY_SERVER", "for-all")
	t.Setenv("TERM", "xterm-envtest")
	// One of the six unset: it is not passed at all (not passed empty).
	t.Setenv("SHELL", "")
	os.Unsetenv("SHELL")

	src := `
sandbox {
  inherit_env = ["ENVTEST_EVERY_SERVER"]
}

server "plain" {
  command = "` + bin + `"
  env     = { GIVEN = "by-config", TERM = "dumb" }
}

server "widened" {
  command = "` + bin + `"
  sandbox {
    inherit_env = ["FOO"]
  }
}
`
	cfg, diags := config.Parse([]byte(src), "env.hcl", config.Options{})
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	// A server built in code, not loaded, that asks for mcphost's own
	// variables: the host drops them all the same (a name that is not
	// reserved, DATABASE_URL here, passes when listed).
	sneaky := stdioServer("sneaky", bin)
	sneaky.Env = map[string]string{"MCPHOST_SECRET_KEY": "overridden", "GIVEN": "in-code"}
	sneaky.Sandbox.InheritEnv = []string{"MCPHOST_CLUSTER_SECRET", "DATABASE_URL"}
	h := startHost(t, host.Options{}, append(cfg.Servers, sneaky)...)

	// The six the MCP SDKs pass, those of them that are set here.
	base := map[string]string{}
	for _, name := range []string{"HOME", "LOGNAME", "PATH", "SHELL", "TERM", "USER"} {
		if v, ok := os.LookupEnv(name); ok {
			base[name] = v
		}
	}
	with := func(kv ...string) map[string]string {
		m := map[string]string{}
		for k, v := range base {
			m[k] = v
		}
		for i := 0; i < len(kv); i += 2 {
			m[kv[i]] = kv[i+1]
		}
		return m
	}
	tests := []struct {
		server string
		want   map[string]string
	}{
		// env wins over an inherited variable of the same name (TERM).
		{"plain", with("ENVTEST_EVERY_SERVER", "for-all", "GIVEN", "by-config", "TERM", "dumb")},
		{"widened", with("ENVTEST_EVERY_SERVER", "for-all", "FOO", "bar")},
		{"sneaky", with("GIVEN", "in-code", "DATABASE_URL", "postgres://mcphost:hunter2@db:5432/mcphost")},
	}
	for _, tt := range tests {
		t.Run(tt.server, func(t *testing.T) {
			got := serverEnviron(t, h, tt.server)
			// A contained server has a home and a tmp of its own.
			if home := got["HOME"]; home == os.Getenv("HOME") || !strings.HasSuffix(home, "/home") {
				t.Errorf("HOME = %q, want the server's own home", home)
			}
			if tmp := got["TMPDIR"]; !strings.HasSuffix(tmp, "/tmp") || filepath.Dir(tmp) != filepath.Dir(got["HOME"]) {
				t.Errorf("TMPDIR = %q, want the server's own tmp beside its home %q", tmp, got["HOME"])
			}
			delete(got, "TMPDIR")
			got["HOME"] = os.Getenv("HOME")
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("the server's environment (-want +got):\n%s", diff)
			}
		})
	}
}
