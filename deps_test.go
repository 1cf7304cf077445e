package mcphost_test

import (
	"bytes"
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"
)

const module = "github.com/mcphost/mcphost"

// leaves are the packages that own one job each. They import neither the host
// package nor each other (../shared/docs/architecture.md).
var leaves = []string{"negotiate", "cache", "apps", "sandbox", "plugins", "policies", "oauth", "cluster", "confine", "egress", "wasmserver", "toolsearch"}

// sharedTypes is the one package every leaf may import: the types of the
// App display record they share. It imports nothing of mcphost's.
const sharedTypes = "appdisplay"

// standalone packages import nothing of mcphost's: the shared types; the
// client of the JSON API, which sees the daemon through the wire only (the
// commands and tests that use it import what they decode into); and what
// the two wasm leaves, plugins and wasmserver, share of hosting a guest.
var standalone = []string{sharedTypes, "internal/apiclient", "internal/wasmguest"}

// ginImporters are the only packages allowed to import gin; leaves may not
// depend on it even indirectly.
var ginImporters = []string{"host/httpapi"}

// hostLayers are the packages of host/internal, each with the ones it may
// import among them: imports point down the layers of the host
// (docs/architecture.md), and nothing under host/internal imports the
// host package, its doors or the shared config and store except where
// listed in hostLayerShared.
var hostLayers = map[string][]string{
	"identity":   {},
	"events":     {"identity"},
	"questions":  {},
	"transport":  {},
	"upstream":   {"identity", "transport"},
	"generation": {"upstream", "identity"},
	"pipeline":   {"generation", "upstream", "identity"},
	"appgate":    {"pipeline", "generation", "upstream", "identity"},
}

// hostLayerShared are the shared host packages each layer may import.
var hostLayerShared = map[string][]string{
	"identity":   {"host/config"},
	"events":     {},
	"questions":  {},
	"transport":  {"host/config"},
	"upstream":   {"host/config", "host/store"},
	"generation": {"host/config"},
	"pipeline":   {"host/config", "host/store"},
	"appgate":    {"host/config", "host/store"},
}

// internalUsesHost names the packages under host/ that an internal package
// may import, for the few that must: the importer checks its output with
// the config loader. Whatever those packages import comes with them;
// nothing else under host/ may.
var internalUsesHost = map[string][]string{
	"internal/importcfg": {"host/config"},
}

type goPackage struct {
	ImportPath string
	Imports    []string
	Deps       []string
}

// TestImportDirection walks `go list -deps` of the whole module and fails with
// the offending chain when the architecture's import direction is broken.
func TestImportDirection(t *testing.T) {
	if testing.Short() {
		t.Skip("runs go list")
	}
	out, err := exec.Command("go", "list", "-deps", "-json=ImportPath,Imports,Deps", "./...").Output()
	if err != nil {
		var stderr []byte
		if ee, ok := err.(*exec.ExitError); ok {
			stderr = ee.Stderr
		}
		t.Fatalf("go list: %v\n%s", err, stderr)
	}
	pkgs := map[string]goPackage{}
	dec := json.NewDecoder(bytes.NewReader(out))
	for {
		var p goPackage
		if err := dec.Decode(&p); err == io.EOF {
			break
		} else if err != nil {
			t.Fatal(err)
		}
		pkgs[p.ImportPath] = p
	}
	if len(pkgs) == 0 {
		t.Fatal("go list returned no packages")
	}
	rel := func(path string) (string, bool) {
		if path == module {
			return ".", true
		}
		r, ok := strings.CutPrefix(path, module+"/")
		return r, ok
	}
	isUnder := func(r, top string) bool { return r == top || strings.HasPrefix(r, top+"/") }
	leafOf := func(r string) string {
		for _, l := range leaves {
			if isUnder(r, l) {
				return l
			}
		}
		return ""
	}
	for path, p := range pkgs {
		r, ok := rel(path)
		if !ok {
			continue
		}
		for _, imp := range p.Imports {
			if strings.HasPrefix(imp, "github.com/gin-gonic/") && !slices.Contains(ginImporters, r) {
				t.Errorf("%s imports %s; only %v may import gin", r, imp, ginImporters)
			}
		}
		for _, dep := range p.Deps {
			if l := leafOf(r); l != "" && strings.HasPrefix(dep, "github.com/gin-gonic/") {
				t.Errorf("leaf %s depends on gin: %s", r, chain(pkgs, path, dep))
			}
			dr, ok := rel(dep)
			if !ok {
				continue
			}
			if l := leafOf(r); l != "" {
				if isUnder(dr, "host") || isUnder(dr, "cmd") {
					t.Errorf("leaf %s imports %s: %s", r, dr, chain(pkgs, path, dep))
				}
				if dl := leafOf(dr); dl != "" && dl != l {
					t.Errorf("leaf %s imports leaf %s: %s", r, dr, chain(pkgs, path, dep))
				}
			}
			if !isUnder(r, "cmd") && isUnder(dr, "cmd") {
				t.Errorf("%s imports the command %s", r, dr)
			}
			// The doors (the JSON API, the gateway) import the host, never
			// the reverse, and never each other.
			if isUnder(r, "host") && !isUnder(r, "host/httpapi") && (isUnder(dr, "host/httpapi") || isUnder(dr, "gateway")) {
				t.Errorf("%s imports the door %s: %s", r, dr, chain(pkgs, path, dep))
			}
			if isUnder(r, "host/httpapi") && isUnder(dr, "gateway") || isUnder(r, "gateway") && isUnder(dr, "host/httpapi") {
				t.Errorf("door %s imports door %s: %s", r, dr, chain(pkgs, path, dep))
			}
			for _, sa := range standalone {
				if isUnder(r, sa) {
					t.Errorf("%s imports %s: it must import nothing of mcphost's: %s", r, dr, chain(pkgs, path, dep))
				}
			}
			if strings.HasPrefix(r, "internal/") && isUnder(dr, "host") && !allowedHost(pkgs, p, r, dep) {
				t.Errorf("internal package %s imports %s: %s", r, dr, chain(pkgs, path, dep))
			}
		}
		if layer, ok := strings.CutPrefix(r, "host/internal/"); ok {
			checkHostLayer(t, layer, p.Imports, rel)
		}
	}
}

// checkHostLayer checks the direct imports of one host/internal package
// against hostLayers.
func checkHostLayer(t *testing.T, layer string, imports []string, rel func(string) (string, bool)) {
	t.Helper()
	top, _, _ := strings.Cut(layer, "/")
	allowed, known := hostLayers[top]
	if !known {
		t.Errorf("host/internal/%s is not in hostLayers: give it its row of allowed imports", top)
		return
	}
	for _, imp := range imports {
		dr, ok := rel(imp)
		if !ok || !strings.HasPrefix(dr, "host") {
			continue
		}
		if other, ok := strings.CutPrefix(dr, "host/internal/"); ok {
			o, _, _ := strings.Cut(other, "/")
			if o != top && !slices.Contains(allowed, o) {
				t.Errorf("host/internal/%s imports host/internal/%s, which is not below it (allowed: %v)", layer, other, allowed)
			}
			continue
		}
		if !slices.Contains(hostLayerShared[top], dr) {
			t.Errorf("host/internal/%s imports %s: a layer of the host imports none of the host's other packages but %v", layer, dr, hostLayerShared[top])
		}
	}
}

// allowedHost reports whether the internal package p (r, relative) may
// depend on dep, a package under host/: dep is one internalUsesHost grants
// r, or, when p does not import it itself, one of their dependencies.
func allowedHost(pkgs map[string]goPackage, p goPackage, r, dep string) bool {
	for _, h := range internalUsesHost[r] {
		if dep == module+"/"+h {
			return true
		}
		if !slices.Contains(p.Imports, dep) && slices.Contains(pkgs[module+"/"+h].Deps, dep) {
			return true
		}
	}
	return false
}

// chain returns the shortest import chain from one package to a dependency.
func chain(pkgs map[string]goPackage, from, to string) string {
	prev := map[string]string{from: ""}
	queue := []string{from}
	for len(queue) > 0 {
		cur := queue[0]
		queue = queue[1:]
		if cur == to {
			var path []string
			for n := to; n != ""; n = prev[n] {
				path = append([]string{strings.TrimPrefix(n, module+"/")}, path...)
			}
			return strings.Join(path, " -> ")
		}
		for _, imp := range pkgs[cur].Imports {
			if _, seen := prev[imp]; !seen {
				prev[imp] = cur
				queue = append(queue, imp)
			}
		}
	}
	return from + " -> ... -> " + to
}

// TestArchitectureTable checks that docs/architecture.md's import table of
// the host's layers says what hostLayers enforces.
func TestArchitectureTable(t *testing.T) {
	doc, err := os.ReadFile("docs/architecture.md")
	if err != nil {
		t.Fatal(err)
	}
	_, rest, ok := strings.Cut(string(doc), "<!-- host-layers -->")
	table, _, ok2 := strings.Cut(rest, "<!-- /host-layers -->")
	if !ok || !ok2 {
		t.Fatal("docs/architecture.md has no <!-- host-layers --> table")
	}
	got := map[string][]string{}
	for _, line := range strings.Split(strings.TrimSpace(table), "\n")[2:] {
		cells := strings.Split(strings.Trim(line, "| "), "|")
		if len(cells) != 2 {
			t.Fatalf("a row of the host-layers table is not | layer | imports |: %q", line)
		}
		layer := strings.Trim(cells[0], " `")
		var imports []string
		for _, imp := range strings.Split(cells[1], ",") {
			if imp = strings.Trim(imp, " `"); imp != "" && imp != "—" {
				imports = append(imports, imp)
			}
		}
		got[layer] = imports
	}
	for layer, want := range hostLayers {
		if g, ok := got[layer]; !ok || !slices.Equal(slices.Sorted(slices.Values(g)), slices.Sorted(slices.Values(want))) {
			t.Errorf("docs/architecture.md says %s may import %v; deps_test.go's hostLayers says %v", layer, g, want)
		}
	}
	for layer := range got {
		if _, ok := hostLayers[layer]; !ok {
			t.Errorf("docs/architecture.md lists the layer %s, which hostLayers does not", layer)
		}
	}
}

// TestProjectLayout checks that the "Project layout" of docs/architecture.md
// (which the README links) names every package of the module.
func TestProjectLayout(t *testing.T) {
	if testing.Short() {
		t.Skip("runs go list")
	}
	doc, err := os.ReadFile("docs/architecture.md")
	if err != nil {
		t.Fatal(err)
	}
	_, section, ok := strings.Cut(string(doc), "## Project layout")
	if !ok {
		t.Fatal("docs/architecture.md has no Project layout section")
	}
	section, _, _ = strings.Cut(section, "\n## ")
	out, err := exec.Command("go", "list", "./...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	for _, path := range strings.Fields(string(out)) {
		r := strings.TrimPrefix(strings.TrimPrefix(path, module), "/")
		if r == "" || strings.HasPrefix(r, "testdata/") || strings.Contains(r, "/testdata/") {
			continue
		}
		if !strings.Contains(section, "`"+r+"`") {
			t.Errorf("docs/architecture.md's Project layout does not name the package %s", r)
		}
	}
}
