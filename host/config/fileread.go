package config

import (
	"fmt"
	"io"
	"io/fs"
	"os"
)

// MaxFileSize is the largest file file() reads, in bytes (1 MiB). A value
// that large belongs in a file the server reads itself; the bound keeps a
// file() of a huge or endless file (a log, /dev/zero) from exhausting the
// memory of `mcphost validate` or of a daemon reloading on SIGHUP.
const MaxFileSize = 1 << 20

// statOpener is what file() reads through: the fs.FS of Load, or the OS for
// LoadFile.
type statOpener interface {
	Stat(name string) (fs.FileInfo, error)
	Open(name string) (fs.File, error)
}

// fsStatOpener reads from an fs.FS.
type fsStatOpener struct{ fsys fs.FS }

func (s fsStatOpener) Stat(name string) (fs.FileInfo, error) { return fs.Stat(s.fsys, name) }
func (s fsStatOpener) Open(name string) (fs.File, error)     { return s.fsys.Open(name) }

// osStatOpener reads OS files. Stat follows symbolic links, so a link to a
// regular file (a mounted secret, say) reads like the file.
type osStatOpener struct{}

func (osStatOpener) Stat(name string) (fs.FileInfo, error) { return os.Stat(name) }
func (osStatOpener) Open(name string) (fs.File, error) {
	f, err := openNonblocking(name)
	if err != nil {
		return nil, err
	}
	return f, nil
}

// notRegularError is the cause of a fileError for a directory, a device, a
// named pipe, a socket or anything else that is not a regular file.
type notRegularError struct{ mode fs.FileMode }

func (e *notRegularError) Error() string {
	return fmt.Sprintf("it is %s, not a regular file", fileKind(e.mode))
}

// tooLargeError is the cause of a fileError for a file over MaxFileSize.
type tooLargeError struct {
	size int64 // from stat; -1 when the file grew past the bound while it was read
}

func (e *tooLargeError) Error() string {
	if e.size < 0 {
		return fmt.Sprintf("it grew past %d bytes while it was read", MaxFileSize)
	}
	return fmt.Sprintf("it has %d bytes, more than %d", e.size, MaxFileSize)
}

// readRegularFile reads the regular file name through sys, at most
// MaxFileSize bytes. It checks the file's type and size before it opens it,
// because opening a named pipe waits for a writer, and again on the open
// file, in case the name was replaced in between. It reads at most one byte
// more than the bound, so a file that grows while it is read, or that lies
// about its size (as files in /proc do), is still bounded.
func readRegularFile(sys statOpener, name string) ([]byte, error) {
	fi, err := sys.Stat(name)
	if err != nil {
		return nil, err
	}
	if err := checkRegular(fi); err != nil {
		return nil, err
	}
	f, err := sys.Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if fi, err = f.Stat(); err != nil {
		return nil, err
	}
	if err := checkRegular(fi); err != nil {
		return nil, err
	}
	data, err := io.ReadAll(io.LimitReader(f, MaxFileSize+1))
	if err != nil {
		return nil, err
	}
	if len(data) > MaxFileSize {
		return nil, &tooLargeError{size: -1}
	}
	return data, nil
}

func checkRegular(fi fs.FileInfo) error {
	if !fi.Mode().IsRegular() {
		return &notRegularError{mode: fi.Mode()}
	}
	if fi.Size() > MaxFileSize {
		return &tooLargeError{size: fi.Size()}
	}
	return nil
}

// fileKind names the type of a file that is not regular.
func fileKind(m fs.FileMode) string {
	switch {
	case m.IsDir():
		return "a directory"
	case m&fs.ModeNamedPipe != 0:
		return "a named pipe (FIFO)"
	case m&fs.ModeSocket != 0:
		return "a socket"
	case m&fs.ModeCharDevice != 0:
		return "a character device"
	case m&fs.ModeDevice != 0:
		return "a device"
	case m&fs.ModeSymlink != 0:
		return "a symbolic link"
	default:
		return fmt.Sprintf("a special file (mode %v)", m)
	}
}
