package store

import (
	"errors"
	"fmt"
	"os"
)

// How the entry log's records reach its file. On Linux the file is mapped
// (entrylog_map_linux.go): an append copies its record into the mapping,
// which is the operating system's page cache, and a kill -9 of the process
// loses nothing so written, exactly the promise of one write(2), without
// a system call per append (the write, its mtime update and its block
// reservation were a tenth of a gateway call's pipeline in a profile of
// the bake-off). Elsewhere, or where the file system cannot reserve the
// file's blocks, each record is one write(2) (fileWriter).
//
// A mapped log is longer than what it holds: its tail is zeros, which
// nextRecord reads as the log's end.

// A logWriter writes the entry log's records. Under entryLog.mu.
type logWriter interface {
	// write writes rec at off, the end of what the log holds. On an error
	// nothing of rec counts; an error that wraps errLogBroken means the
	// log may hold part of it, and no record may follow.
	write(off int64, rec []byte) error
	// reset empties the log (every record in it is applied); emptied
	// tells whether it is empty, even with an error.
	reset() (emptied bool, err error)
	// close releases what the writer holds (not the file).
	close() error
}

// errLogBroken marks a write that left the log in a state no record may
// follow.
var errLogBroken = errors.New("the entry log is left with a partial record")

// newLogWriter returns the writer of f, an empty log file: mapped where
// it can be.
func newLogWriter(f *os.File) (logWriter, error) {
	w, err := newMappedWriter(f)
	if err == nil {
		return w, nil
	}
	if !errors.Is(err, errors.ErrUnsupported) {
		return nil, err
	}
	return fileWriter{f}, nil
}

// fileWriter writes each record with one write(2) to a file opened for
// appending.
type fileWriter struct{ f *os.File }

func (w fileWriter) write(off int64, rec []byte) error {
	n, err := w.f.Write(rec)
	if err == nil {
		return nil
	}
	// Cut off what was written of it, or the next records would follow a
	// torn one and be lost at replay.
	if n > 0 {
		if terr := w.f.Truncate(off); terr != nil {
			return fmt.Errorf("%w that could not be cut off: %w (writing it: %w)", errLogBroken, terr, err)
		}
	}
	return err
}

func (w fileWriter) reset() (bool, error) {
	err := w.f.Truncate(0)
	return err == nil, err
}

func (fileWriter) close() error { return nil }
