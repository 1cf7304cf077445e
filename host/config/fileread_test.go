package config

import (
	"bytes"
	"io"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"testing/fstest"
	"time"

	"github.com/hashicorp/hcl/v2"
)

// fileConfig is a configuration that passes file(arg) to a server.
func fileConfig(arg string) string {
	return "server \"a\" {\n  command = \"x\"\n  args    = [file(\"" + arg + "\")]\n}\n"
}

// TestFileFunctionOS loads file() of OS files that are not regular or too
// large, through LoadFile as the CLI and the daemon do. Before the checks,
// /dev/zero and a file that never ends ran the loader out of memory, and a
// named pipe blocked it until a writer came.
func TestFileFunctionOS(t *testing.T) {
	dir := t.TempDir()
	write := func(name string, data []byte) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	exact := write("exact.txt", bytes.Repeat([]byte("a"), MaxFileSize))
	large := write("large.txt", nil)
	if err := os.Truncate(large, MaxFileSize+1); err != nil { // sparse: no MiB written
		t.Fatal(err)
	}
	huge := write("huge.txt", nil)
	if err := os.Truncate(huge, 8<<30); err != nil { // 8 GiB, sparse
		t.Fatal(err)
	}
	sub := filepath.Join(dir, "sub")
	if err := os.Mkdir(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "link.txt")
	linkErr := os.Symlink(exact, link)

	tests := []struct {
		name    string
		arg     string
		skip    string // why the case cannot run here, when it cannot
		summary string // "" for none
		detail  []string
	}{
		{name: "exactly the limit", arg: "exact.txt"},
		{name: "a symbolic link to a regular file", arg: "link.txt", skip: errText(linkErr)},
		{name: "one byte over", arg: "large.txt", summary: "File too large", detail: []string{`file("large.txt")`, large, "1048577 bytes", "at most 1048576 bytes (1 MiB)"}},
		{name: "8 GiB", arg: "huge.txt", summary: "File too large", detail: []string{"8589934592 bytes"}},
		{name: "a directory", arg: "sub", summary: "Not a regular file", detail: []string{sub, "is a directory", "only regular files"}},
		{name: "/dev/zero", arg: "/dev/zero", skip: exists("/dev/zero"), summary: "Not a regular file", detail: []string{`file("/dev/zero")`, "a character device"}},
		{name: "a named pipe", arg: "fifo", skip: mkfifo(filepath.Join(dir, "fifo")), summary: "Not a regular file", detail: []string{"a named pipe (FIFO)"}},
		{name: "a socket", arg: "sock", skip: listenUnix(t, filepath.Join(dir, "sock")), summary: "Not a regular file", detail: []string{"a socket"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.skip != "" {
				t.Skip(tt.skip)
			}
			path := write("conf.hcl", []byte(fileConfig(tt.arg)))
			cfg, diags := LoadFile(path, testOptions())
			checkFileDiag(t, diags, tt.summary, tt.detail)
			if tt.summary == "" && (len(cfg.Servers) != 1 || len(cfg.Servers[0].Args) != 1 || len(cfg.Servers[0].Args[0]) != MaxFileSize) {
				t.Errorf("the file was not read whole")
			}
		})
	}
}

// TestFileFunctionFS reads through an fs.FS (Load) files whose type or size
// changes between the check and the read.
func TestFileFunctionFS(t *testing.T) {
	tests := []struct {
		name    string
		file    fs.File // what Open returns for conf/v.txt; fs.Stat says a small regular file
		summary string
		detail  []string
	}{
		{
			name:    "replaced by a named pipe after the check",
			file:    &fakeFile{mode: fs.ModeNamedPipe, r: strings.NewReader("")},
			summary: "Not a regular file",
			detail:  []string{`file("v.txt")`, "conf/v.txt", "a named pipe (FIFO)"},
		},
		{
			name:    "grown past the limit after the check",
			file:    &fakeFile{size: 4, r: io.LimitReader(zeros{}, MaxFileSize+1)},
			summary: "File too large",
			detail:  []string{"grew past the limit while it was read", "at most 1048576 bytes"},
		},
		{
			name:    "endless, with a size of zero like files in /proc",
			file:    &fakeFile{size: 0, r: io.LimitReader(zeros{}, 64<<20)}, // "endless": 64 MiB
			summary: "File too large",
			detail:  []string{"grew past the limit"},
		},
		{
			name: "exactly the limit",
			file: &fakeFile{size: 4, r: bytes.NewReader(bytes.Repeat([]byte("a"), MaxFileSize))},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fsys := swapFS{
				MapFS: fstest.MapFS{"conf/c.hcl": {Data: []byte(fileConfig("v.txt"))}, "conf/v.txt": {Data: []byte("tiny")}},
				swap:  map[string]fs.File{"conf/v.txt": tt.file},
			}
			_, diags := Load(fsys, "conf/c.hcl", testOptions())
			checkFileDiag(t, diags, tt.summary, tt.detail)
		})
	}

	// fs.Stat alone refuses what is not regular or too large: no Open.
	fsys := fstest.MapFS{
		"c.hcl":     {Data: []byte("server \"a\" {\n  command = \"x\"\n  args    = [file(\"pipe\"), file(\"dir\"), file(\"big\")]\n}\n")},
		"pipe":      {Mode: fs.ModeNamedPipe},
		"dir":       {Mode: fs.ModeDir},
		"big":       {Data: make([]byte, MaxFileSize+1)},
		"dir/inner": {Data: []byte("x")},
	}
	_, diags := Load(noOpenFS{fsys, "c.hcl"}, "c.hcl", testOptions())
	var got []string
	for _, d := range diags {
		got = append(got, d.Summary)
	}
	if want := "Not a regular file,Not a regular file,File too large"; strings.Join(got, ",") != want {
		t.Errorf("summaries = %q, want %q%s", got, want, diagText(diags))
	}
}

func checkFileDiag(t *testing.T, diags hcl.Diagnostics, summary string, detail []string) {
	t.Helper()
	if summary == "" {
		if len(diags) > 0 {
			t.Fatalf("diagnostics:%s", diagText(diags))
		}
		return
	}
	if len(diags) != 1 || diags[0].Summary != summary {
		t.Fatalf("want one %q, got:%s", summary, diagText(diags))
	}
	d := diags[0]
	for _, s := range detail {
		if !strings.Contains(d.Detail, s) {
			t.Errorf("detail does not contain %q: %s", s, d.Detail)
		}
	}
	if d.Subject == nil || d.Subject.Start.Line != 3 {
		t.Errorf("subject = %v, want the call on line 3", d.Subject)
	}
}

func errText(err error) string {
	if err != nil {
		return err.Error()
	}
	return ""
}

func exists(path string) string {
	if _, err := os.Stat(path); err != nil {
		return err.Error()
	}
	return ""
}

// listenUnix puts a Unix socket at path for the test, or says why not.
func listenUnix(t *testing.T, path string) string {
	if runtime.GOOS == "windows" {
		return "no socket files on Windows"
	}
	l, err := net.Listen("unix", path)
	if err != nil {
		return err.Error()
	}
	t.Cleanup(func() { l.Close() })
	return ""
}

// swapFS serves the files of swap from Open, whatever fs.Stat said.
type swapFS struct {
	fstest.MapFS
	swap map[string]fs.File
}

func (s swapFS) Open(name string) (fs.File, error) {
	if f, ok := s.swap[name]; ok {
		return f, nil
	}
	return s.MapFS.Open(name)
}

// noOpenFS fails the test's load if a file other than the config is opened.
type noOpenFS struct {
	fstest.MapFS
	config string
}

func (n noOpenFS) Open(name string) (fs.File, error) {
	if name != n.config {
		return nil, &fs.PathError{Op: "open", Path: name, Err: fs.ErrPermission}
	}
	return n.MapFS.Open(name)
}

type fakeFile struct {
	mode fs.FileMode
	size int64
	r    io.Reader
}

func (f *fakeFile) Stat() (fs.FileInfo, error) { return fakeInfo{f}, nil }
func (f *fakeFile) Read(p []byte) (int, error) { return f.r.Read(p) }
func (f *fakeFile) Close() error               { return nil }

type fakeInfo struct{ f *fakeFile }

func (i fakeInfo) Name() string       { return "v.txt" }
func (i fakeInfo) Size() int64        { return i.f.size }
func (i fakeInfo) Mode() fs.FileMode  { return i.f.mode }
func (i fakeInfo) ModTime() time.Time { return time.Time{} }
func (i fakeInfo) IsDir() bool        { return i.f.mode.IsDir() }
func (i fakeInfo) Sys() any           { return nil }

// zeros reads as an endless run of "0".
type zeros struct{}

func (zeros) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = '0'
	}
	return len(p), nil
}
