package confine

import (
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// serverEnv is the server's environment: base (the allowlist and the
// server's env), with HOME and TMPDIR its own, a runtime preset's
// variables, and, with a proxy at host:port, the variables that
// proxy-aware clients read.
func serverEnv(runtime string, base []string, home, tmp, proxy string) []string {
	set := map[string]string{"HOME": home, "TMPDIR": tmp}
	for k, v := range runtimeEnv[runtime] {
		if slices.ContainsFunc(base, func(kv string) bool { return strings.HasPrefix(kv, k+"=") }) {
			continue // the server's own env wins over the preset
		}
		if rest, ok := strings.CutPrefix(v, "~"); ok {
			v = home + rest
		}
		set[k] = v
	}
	if proxy != "" {
		u := "http://" + proxy
		for _, k := range []string{"HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy", "all_proxy"} {
			set[k] = u
		}
		set["NO_PROXY"], set["no_proxy"] = "", ""
		set["NODE_USE_ENV_PROXY"] = "1"
	}
	env := slices.DeleteFunc(slices.Clone(base), func(kv string) bool {
		k, _, _ := strings.Cut(kv, "=")
		_, ours := set[k]
		return ours
	})
	for _, k := range slices.Sorted(maps.Keys(set)) {
		env = append(env, k+"="+set[k])
	}
	return env
}

// ownDirs creates the server's home and tmp under spec.Dir, owned by
// spec.UID when chown is set.
func ownDirs(spec Spec, chown bool) (home, tmp string, err error) {
	if spec.Dir == "" {
		return "", "", fmt.Errorf("sandbox: server %q has no directory of its own", spec.Server)
	}
	home, tmp = filepath.Join(spec.Dir, "home"), filepath.Join(spec.Dir, "tmp")
	for _, d := range []string{spec.Dir, home, tmp} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			return "", "", fmt.Errorf("sandbox: the directory of server %q: %w", spec.Server, err)
		}
		if chown {
			if err := os.Chown(d, spec.UID, spec.UID); err != nil {
				return "", "", fmt.Errorf("sandbox: the directory of server %q: %w", spec.Server, err)
			}
		}
	}
	return home, tmp, nil
}
