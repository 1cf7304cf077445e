package store

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"hash/crc32"
	"math"
	"time"
)

// The entry log's record format. A record is a frame:
//
//	length  uint32, little endian: the payload's length
//	crc     uint32, little endian: CRC-32C of the payload
//	payload
//
// and the payload is a format byte (recordFormat), then the entry's
// fields in a fixed order: each string or JSON field as a uvarint length
// and its bytes, each integer as a varint, the duration as the uvarint of
// its float64 bits, then the time it was logged, and last the entry's audit records as JSON (empty when
// it has none). A frame that is cut short or whose CRC does not match ends
// the log: it is the tail of a write that a crash interrupted. A frame
// header of zeros ends it too, cleanly: a mapped log's unwritten tail.

const (
	recordFormat = 1
	// frameHeader is the length and the CRC.
	frameHeader = 8
	// maxRecord bounds a payload read back: more is a corrupt length.
	maxRecord = 1 << 30
)

var crcTable = crc32.MakeTable(crc32.Castagnoli)

// errLogEnd is what nextRecord reads at a frame header of zeros (no
// record has an empty payload): the end of a mapped log, whose tail is
// zeros.
var errLogEnd = errors.New("end of the log")

// errTornRecord is the error of a frame that is cut short or fails its
// CRC.
var errTornRecord = errors.New("torn record")

// appendRecord appends r's frame to buf. r.logged is the seq assigned, and
// its entry's audit records carry their times.
func appendRecord(buf []byte, r *appendReq) ([]byte, error) {
	start := len(buf)
	buf = append(buf, make([]byte, frameHeader)...)
	buf = append(buf, recordFormat)
	e := r.e
	var started int64
	if !e.StartedAt.IsZero() {
		started = e.StartedAt.UnixNano()
	}
	for _, f := range [...]string{r.id, r.kind, e.SessionID, e.Principal} {
		buf = appendField(buf, f)
	}
	buf = binary.AppendVarint(buf, r.logged)
	for _, f := range [...]string{e.CallID, e.Origin, e.Server, e.Tool} {
		buf = appendField(buf, f)
	}
	buf = appendField(buf, e.Arguments)
	buf = appendField(buf, e.Status)
	buf = appendField(buf, e.Result)
	for _, f := range [...]string{e.Error, e.Era, e.ProtocolVersion} {
		buf = appendField(buf, f)
	}
	buf = binary.AppendVarint(buf, started)
	buf = binary.AppendUvarint(buf, math.Float64bits(e.DurationMs))
	buf = appendField(buf, e.Display)
	buf = appendField(buf, e.Trail)
	buf = appendField(buf, e.AppEntryID)
	buf = appendField(buf, e.Message)
	buf = binary.AppendVarint(buf, r.htmlBytes)
	buf = binary.AppendVarint(buf, r.at)
	var audit []byte
	if len(e.Audit) > 0 {
		var err error
		if audit, err = json.Marshal(e.Audit); err != nil {
			return buf[:start], fmt.Errorf("encoding its audit records: %w", err)
		}
	}
	buf = appendField(buf, audit)
	payload := buf[start+frameHeader:]
	if len(payload) > maxRecord {
		return buf[:start], fmt.Errorf("the record is %d bytes, over the log's bound of %d", len(payload), maxRecord)
	}
	binary.LittleEndian.PutUint32(buf[start:], uint32(len(payload)))
	binary.LittleEndian.PutUint32(buf[start+4:], crc32.Checksum(payload, crcTable))
	return buf, nil
}

func appendField[T string | []byte | json.RawMessage](buf []byte, f T) []byte {
	buf = binary.AppendUvarint(buf, uint64(len(f)))
	return append(buf, f...)
}

// nextRecord decodes the frame at the start of b: the request it holds
// and the frame's length. A frame cut short or failing its CRC is
// errTornRecord; a payload that passes its CRC but does not decode is
// another error (a record of a newer format, or a bug).
func nextRecord(b []byte) (*appendReq, int, error) {
	if len(b) < frameHeader {
		return nil, 0, errTornRecord
	}
	n := binary.LittleEndian.Uint32(b)
	if n == 0 && binary.LittleEndian.Uint32(b[4:]) == 0 {
		return nil, 0, errLogEnd
	}
	if n > maxRecord || uint64(len(b)-frameHeader) < uint64(n) {
		return nil, 0, errTornRecord
	}
	payload := b[frameHeader : frameHeader+int(n)]
	if crc32.Checksum(payload, crcTable) != binary.LittleEndian.Uint32(b[4:]) {
		return nil, 0, errTornRecord
	}
	r, err := decodeRecord(payload)
	if err != nil {
		return nil, 0, err
	}
	return r, frameHeader + int(n), nil
}

// recordReader reads a payload's fields in order; the first error sticks.
type recordReader struct {
	b   []byte
	err error
}

func (d *recordReader) bytes() []byte {
	n, k := binary.Uvarint(d.b)
	if d.err != nil || k <= 0 || n > uint64(len(d.b)-k) {
		d.fail()
		return nil
	}
	v := d.b[k : k+int(n)]
	d.b = d.b[k+int(n):]
	return v
}

func (d *recordReader) str() string { return string(d.bytes()) }

func (d *recordReader) raw() json.RawMessage {
	v := d.bytes()
	if len(v) == 0 {
		return nil
	}
	return json.RawMessage(append([]byte(nil), v...))
}

func (d *recordReader) varint() int64 {
	v, k := binary.Varint(d.b)
	if d.err != nil || k <= 0 {
		d.fail()
		return 0
	}
	d.b = d.b[k:]
	return v
}

func (d *recordReader) uvarint() uint64 {
	v, k := binary.Uvarint(d.b)
	if d.err != nil || k <= 0 {
		d.fail()
		return 0
	}
	d.b = d.b[k:]
	return v
}

func (d *recordReader) fail() {
	if d.err == nil {
		d.err = errors.New("a field runs past the record's end")
	}
	d.b = nil
}

// decodeRecord decodes a payload that passed its CRC.
func decodeRecord(p []byte) (*appendReq, error) {
	if len(p) == 0 || p[0] != recordFormat {
		return nil, fmt.Errorf("unknown record format (first byte %v)", p[:min(len(p), 1)])
	}
	d := &recordReader{b: p[1:]}
	e := &Entry{}
	r := &appendReq{e: e}
	r.id, r.kind, e.SessionID, e.Principal = d.str(), d.str(), d.str(), d.str()
	r.logged = d.varint()
	e.CallID, e.Origin, e.Server, e.Tool = d.str(), d.str(), d.str(), d.str()
	e.Arguments, e.Status, e.Result = d.raw(), d.str(), d.raw()
	e.Error, e.Era, e.ProtocolVersion = d.str(), d.str(), d.str()
	if started := d.varint(); started != 0 {
		e.StartedAt = time.Unix(0, started).UTC()
	}
	e.DurationMs = math.Float64frombits(d.uvarint())
	e.Display, e.Trail, e.AppEntryID, e.Message = d.raw(), d.raw(), d.str(), d.raw()
	r.htmlBytes, r.at = d.varint(), d.varint()
	audit := d.bytes()
	if d.err != nil {
		return nil, d.err
	}
	if len(d.b) != 0 {
		return nil, fmt.Errorf("%d bytes after the last field", len(d.b))
	}
	if len(audit) > 0 {
		if err := json.Unmarshal(audit, &e.Audit); err != nil {
			return nil, fmt.Errorf("its audit records: %w", err)
		}
	}
	e.Kind = r.kind
	if err := e.check(); err != nil {
		return nil, err
	}
	r.size = len(e.Arguments) + len(e.Result) + len(e.Display) + len(e.Trail) + len(e.Message)
	return r, nil
}
