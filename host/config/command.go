package config

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/hashicorp/hcl/v2"
)

// CommandProblem says why this machine cannot start the program of s, an
// enabled stdio server, where it would start it: a bare name is looked up
// on PATH (which names whose PATH, such as "the daemon's PATH"), a path is
// taken relative to the server's cwd. It is "" when the program is there,
// or when s runs no command.
func (s *Server) CommandProblem(which string) string {
	if s.Transport != TransportStdio || s.Command == "" || !s.Enabled {
		return ""
	}
	if !strings.ContainsRune(s.Command, filepath.Separator) {
		if _, err := exec.LookPath(s.Command); err != nil {
			return fmt.Sprintf("command %q is not on %s", s.Command, which)
		}
		return ""
	}
	path := s.Command
	if !filepath.IsAbs(path) && s.Cwd != "" {
		path = filepath.Join(s.Cwd, path)
	}
	if st, err := os.Stat(path); err != nil || st.IsDir() || st.Mode().Perm()&0o111 == 0 {
		return fmt.Sprintf("command %q is not an executable file", s.Command)
	}
	return ""
}

// CommandWarnings has a warning at the `command` of each server of cfg
// whose program this machine cannot start (CommandProblem). They are
// warnings: a config may be checked on a machine it is not meant for.
func CommandWarnings(cfg *Config) hcl.Diagnostics {
	var diags hcl.Diagnostics
	for i := range cfg.Servers {
		s := &cfg.Servers[i]
		problem := s.CommandProblem("this machine's PATH")
		if problem == "" {
			continue
		}
		subject := s.CommandRange
		if subject.Filename == "" {
			subject = s.DeclRange
		}
		diags = append(diags, &hcl.Diagnostic{
			Severity: hcl.DiagWarning,
			Summary:  "Command not found here",
			Detail: fmt.Sprintf("Server %q: %s, so it would not start here. "+
				"Install it, give its full path, or ignore this if the config is meant for another machine.", s.Name, problem),
			Subject: subject.Ptr(),
		})
	}
	return diags
}
