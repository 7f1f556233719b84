package file

import (
	"encoding/binary"

	"github.com/lancens/lancens/lance/file/internal/encoding"
)

// footerSize is the size of a file's fixed footer: three u64 offsets, two
// u32 counts, two u16 version numbers and the magic.
const footerSize = 40

// magic ends every Lance file.
const magic = "LANC"

// footer is the fixed tail of a file.
type footer struct {
	columnMetaStart    uint64 // the first column metadata message
	columnOffsetsStart uint64 // the column metadata offset table
	globalOffsetsStart uint64 // the global buffer offset table
	numGlobals         uint32
	numColumns         uint32
	version            Version
}

// parseFooter decodes the last footerSize bytes of a file of size bytes
// and checks that its sections are in order and inside the file. It
// returns an error wrapping ErrCorrupt (or ErrUnsupported for a version
// this package does not read).
func parseFooter(b []byte, size uint64) (footer, error) {
	if len(b) != footerSize || size < footerSize {
		return footer{}, encoding.Corruptf("the file is %d bytes, too short for a Lance footer", size)
	}
	if string(b[36:40]) != magic {
		return footer{}, encoding.Corruptf("the file does not end with the Lance magic %q", magic)
	}
	le := binary.LittleEndian
	f := footer{
		columnMetaStart:    le.Uint64(b[0:]),
		columnOffsetsStart: le.Uint64(b[8:]),
		globalOffsetsStart: le.Uint64(b[16:]),
		numGlobals:         le.Uint32(b[24:]),
		numColumns:         le.Uint32(b[28:]),
	}
	v, err := versionOfFooter(le.Uint16(b[32:]), le.Uint16(b[34:]))
	if err != nil {
		return footer{}, err
	}
	f.version = v
	end := size - footerSize
	// Sections in file order, each ending where the next may start.
	columnTableEnd := f.columnOffsetsStart + 16*uint64(f.numColumns) // cannot overflow: start is checked first
	globalTableEnd := f.globalOffsetsStart + 16*uint64(f.numGlobals)
	switch {
	case f.columnMetaStart > f.columnOffsetsStart:
		return footer{}, encoding.Corruptf("the column metadata starts at %d, after its offset table at %d", f.columnMetaStart, f.columnOffsetsStart)
	case f.columnOffsetsStart > end || f.globalOffsetsStart > end:
		return footer{}, encoding.Corruptf("the footer's offset tables (%d, %d) lie past the end of the file's %d bytes", f.columnOffsetsStart, f.globalOffsetsStart, size)
	case columnTableEnd > f.globalOffsetsStart:
		return footer{}, encoding.Corruptf("the column metadata offset table (%d columns from %d) overlaps the global buffer table at %d", f.numColumns, f.columnOffsetsStart, f.globalOffsetsStart)
	case globalTableEnd > end:
		return footer{}, encoding.Corruptf("the global buffer table (%d buffers from %d) runs into the footer", f.numGlobals, f.globalOffsetsStart)
	case f.numGlobals == 0:
		return footer{}, encoding.Corruptf("the file has no global buffers, so no schema")
	}
	return f, nil
}

// parseOffsetTable decodes n (position, size) pairs from b and checks that
// each lies inside [lo, hi). It returns an error wrapping ErrCorrupt
// naming what (the table's entries) when one does not.
func parseOffsetTable(b []byte, n int, lo, hi uint64, what string) ([]encoding.Range, error) {
	if len(b) != 16*n {
		return nil, encoding.Corruptf("the %s table is %d bytes, not %d", what, len(b), 16*n)
	}
	out := make([]encoding.Range, n)
	for i := range out {
		r := encoding.Range{Offset: binary.LittleEndian.Uint64(b[16*i:]), Length: binary.LittleEndian.Uint64(b[16*i+8:])}
		if !within(r, lo, hi) {
			return nil, encoding.Corruptf("%s %d (%d bytes at %d) lies outside [%d, %d)", what, i, r.Length, r.Offset, lo, hi)
		}
		out[i] = r
	}
	return out, nil
}

// within reports whether r lies inside [lo, hi), without overflowing.
func within(r encoding.Range, lo, hi uint64) bool {
	return r.Offset >= lo && r.Offset <= hi && r.Length <= hi-r.Offset
}
