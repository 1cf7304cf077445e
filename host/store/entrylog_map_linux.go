package store

import (
	"errors"
	"fmt"
	"os"
	"runtime/debug"
	"syscall"
)

// mapInitial is the length a mapped log starts with, and is cut back to
// when emptied: twice logTruncateBytes, past which it is emptied when the
// applier is idle. It grows by doubling while the applier lags.
const mapInitial = 2 * logTruncateBytes

// mappedWriter writes the log's records into a shared mapping of its
// file, whose blocks are reserved first (fallocate), so that writing a
// page of the mapping never meets a full disk (which would be a SIGBUS).
type mappedWriter struct {
	f *os.File
	m []byte
}

// newMappedWriter maps f, an empty file, at mapInitial bytes;
// errors.ErrUnsupported when its file system cannot reserve the blocks.
func newMappedWriter(f *os.File) (logWriter, error) {
	w := &mappedWriter{f: f}
	if err := w.mapLen(mapInitial); err != nil {
		if errors.Is(err, syscall.EOPNOTSUPP) || errors.Is(err, syscall.ENOSYS) {
			return nil, fmt.Errorf("%w: %w", errors.ErrUnsupported, err)
		}
		return nil, err
	}
	return w, nil
}

// mapLen reserves n bytes of the file and maps them, in place of the
// mapping w had; on an error w keeps its mapping.
func (w *mappedWriter) mapLen(n int64) error {
	fd := int(w.f.Fd())
	if err := syscall.Fallocate(fd, 0, 0, n); err != nil {
		return fmt.Errorf("reserving %d bytes for the entry log: %w", n, err)
	}
	m, err := syscall.Mmap(fd, 0, int(n), syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_SHARED)
	if err != nil {
		return fmt.Errorf("mapping the entry log: %w", err)
	}
	if w.m != nil {
		_ = syscall.Munmap(w.m)
	}
	w.m = m
	return nil
}

func (w *mappedWriter) write(off int64, rec []byte) (err error) {
	end := off + int64(len(rec))
	if end > int64(len(w.m)) {
		n := max(2*int64(len(w.m)), mapInitial)
		for n < end {
			n *= 2
		}
		if err := w.mapLen(n); err != nil {
			return err
		}
	}
	// A file cut short behind the store's back turns the copy into a
	// fault: an error here, not a crash.
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("%w: writing into the mapped entry log faulted (was the file cut short?): %v", errLogBroken, r)
		}
	}()
	copy(w.m[off:end], rec)
	return nil
}

// reset drops the file's contents and maps it afresh at mapInitial (a log
// grown while the applier lagged shrinks back). emptied tells whether the
// contents are gone, even when mapping it again failed (the next write
// tries again).
func (w *mappedWriter) reset() (emptied bool, err error) {
	if err := syscall.Munmap(w.m); err != nil {
		return false, err
	}
	w.m = nil
	if err := w.f.Truncate(0); err != nil {
		return false, errors.Join(err, w.mapLen(mapInitial))
	}
	return true, w.mapLen(mapInitial)
}

func (w *mappedWriter) close() error {
	if w.m == nil {
		return nil
	}
	err := syscall.Munmap(w.m)
	w.m = nil
	return err
}
