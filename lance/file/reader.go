package file

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync"

	"github.com/apache/arrow-go/v18/arrow/memory"
	"google.golang.org/protobuf/proto"

	"github.com/lancens/lancens/lance/blob"
	"github.com/lancens/lancens/lance/file/internal/encoding"
	"github.com/lancens/lancens/lance/internal/pb/schemapb"
	"github.com/lancens/lancens/lance/internal/schemaproto"
	"github.com/lancens/lancens/lance/schema"
)

// Errors of reading, for errors.Is.
var (
	// ErrCorrupt reports a file that contradicts itself, its schema or the
	// format: truncated, offsets out of range, impossible sizes.
	ErrCorrupt = encoding.ErrCorrupt
	// ErrUnsupported reports a valid Lance file using a feature (a format
	// version, an encoding, a type) this package does not read.
	ErrUnsupported = encoding.ErrUnsupported
	// ErrBudget reports a read that would need more memory than
	// ReadOptions allow.
	ErrBudget = encoding.ErrBudget
)

// ReadOptions bound what reading a file may cost. Zero fields take their
// defaults.
type ReadOptions struct {
	// Size is the file's size when the caller knows it (a manifest records
	// it), which saves a Stat.
	Size int64
	// MaxMetadataBytes caps the bytes read for the file's metadata: the
	// schema, the column metadata and their tables (default 64 MiB).
	MaxMetadataBytes int64
	// MaxReadBytes caps the bytes one read (ReadRange, Take or one batch of
	// Scan) may fetch and allocate while decoding (default 1 GiB).
	MaxReadBytes int64
	// Mem allocates the arrays returned (default: Go's allocator).
	Mem memory.Allocator
	// CoalesceGap is the largest gap between two byte ranges of one read
	// that are fetched as one request (default 4 KiB, for local disks;
	// on object storage, where a request costs milliseconds, 1 MiB or
	// more reads fewer times).
	CoalesceGap int64
}

const (
	defaultMaxMetadataBytes = 64 << 20
	defaultMaxReadBytes     = 1 << 30
	defaultCoalesceGap      = 4 << 10
	// tailRead is how much of the file's end Open reads first, hoping for
	// all of its metadata in one request.
	tailRead = 64 << 10
)

// Reader reads one Lance data file. Its methods are safe for concurrent
// use.
type Reader struct {
	store   blob.Store
	path    string
	size    uint64
	opts    ReadOptions
	version Version
	schema  *schema.Schema
	rows    uint64
	dec     encoding.Decoder
	// columnOf maps field ids to the column each owns.
	columnOf map[int32]int
	// meta holds the file's bytes from metaStart to the footer: the column
	// metadata and the offset tables.
	meta      []byte
	metaStart uint64
	// columnMeta locates each column's metadata in the file.
	columnMeta []encoding.Range
	// dataEnd is where the column metadata starts: buffers lie before it.
	dataEnd uint64
	// globals locate the global buffers.
	globals []encoding.Range

	mu      sync.Mutex
	columns []*encoding.Column // parsed on first use
}

// Open reads the metadata of the data file at path in store: the footer,
// the offset tables, the schema (global buffer 0) and the column metadata,
// usually in one or two range reads, and no page. It returns an error
// wrapping blob.ErrNotFound when there is no such file, ErrCorrupt when
// its metadata is malformed or bigger than opts allow, ErrUnsupported for
// a format version this package does not read, or the store's error.
func Open(ctx context.Context, store blob.Store, path string, opts *ReadOptions) (*Reader, error) {
	r := &Reader{store: store, path: path}
	if opts != nil {
		r.opts = *opts
	}
	if r.opts.MaxMetadataBytes <= 0 {
		r.opts.MaxMetadataBytes = defaultMaxMetadataBytes
	}
	if r.opts.MaxReadBytes <= 0 {
		r.opts.MaxReadBytes = defaultMaxReadBytes
	}
	if r.opts.Mem == nil {
		r.opts.Mem = memory.DefaultAllocator
	}
	if r.opts.CoalesceGap <= 0 {
		r.opts.CoalesceGap = defaultCoalesceGap
	}
	if err := r.open(ctx); err != nil {
		return nil, fmt.Errorf("lance file %s: %w", path, err)
	}
	return r, nil
}

func (r *Reader) open(ctx context.Context) error {
	size := r.opts.Size
	if size <= 0 {
		info, err := r.store.Stat(ctx, r.path)
		if err != nil {
			return err
		}
		size = info.Size
	}
	r.size = uint64(size)
	if r.size < footerSize {
		return encoding.Corruptf("the file is %d bytes, too short for a Lance footer", r.size)
	}
	tailStart := r.size - min(r.size, tailRead)
	tail, err := r.readAt(ctx, tailStart, r.size-tailStart)
	if err != nil {
		return err
	}
	f, err := parseFooter(tail[len(tail)-footerSize:], r.size)
	if err != nil {
		return err
	}
	r.version = f.version
	r.dec = decoderFor(f.version)
	if r.dec == nil {
		return encoding.Unsupportedf("no decoder for format version %s", f.version)
	}
	// The metadata proper: column metadata messages, then both tables.
	metaEnd := r.size - footerSize
	if metaEnd-f.columnMetaStart > uint64(r.opts.MaxMetadataBytes) {
		return encoding.Corruptf("the file's metadata is %d bytes, more than the %d accepted", metaEnd-f.columnMetaStart, r.opts.MaxMetadataBytes)
	}
	if f.columnMetaStart >= tailStart {
		r.meta = tail[f.columnMetaStart-tailStart : len(tail)-footerSize]
	} else if r.meta, err = r.readAt(ctx, f.columnMetaStart, metaEnd-f.columnMetaStart); err != nil {
		return err
	}
	r.metaStart = f.columnMetaStart
	r.dataEnd = f.columnMetaStart
	slice := func(start, n uint64) []byte { return r.meta[start-r.metaStart : start-r.metaStart+n] }
	r.columnMeta, err = parseOffsetTable(slice(f.columnOffsetsStart, 16*uint64(f.numColumns)), int(f.numColumns),
		f.columnMetaStart, f.columnOffsetsStart, "column metadata")
	if err != nil {
		return err
	}
	globals, err := parseOffsetTable(slice(f.globalOffsetsStart, 16*uint64(f.numGlobals)), int(f.numGlobals),
		0, metaEnd, "global buffer")
	if err != nil {
		return err
	}
	// Global buffer 0 is the schema; Lance writes it just before the
	// column metadata, often inside the tail already read.
	r.globals = globals
	gb := globals[0]
	if gb.Length > uint64(r.opts.MaxMetadataBytes) {
		return encoding.Corruptf("the schema is %d bytes, more than the %d accepted", gb.Length, r.opts.MaxMetadataBytes)
	}
	var descBytes []byte
	if gb.Offset >= tailStart {
		descBytes = tail[gb.Offset-tailStart : gb.Offset-tailStart+gb.Length]
	} else if descBytes, err = r.readAt(ctx, gb.Offset, gb.Length); err != nil {
		return err
	}
	var desc schemapb.FileDescriptor
	if err := proto.Unmarshal(descBytes, &desc); err != nil {
		return encoding.Corruptf("the file descriptor: %v", err)
	}
	s, err := schemaproto.FromProto(desc.GetSchema().GetFields(), desc.GetSchema().GetMetadata())
	if err != nil {
		return encoding.Corruptf("the file's schema: %v", err)
	}
	r.schema, r.rows = s, desc.GetLength()
	if r.columnOf, err = r.dec.Columns(s, int(f.numColumns)); err != nil {
		return err
	}
	r.columns = make([]*encoding.Column, f.numColumns)
	return nil
}

// readAt reads n bytes at off, for metadata.
func (r *Reader) readAt(ctx context.Context, off, n uint64) ([]byte, error) {
	b, err := r.store.ReadRange(ctx, r.path, int64(off), int64(n))
	if errors.Is(err, io.ErrUnexpectedEOF) {
		return nil, encoding.Corruptf("the file is shorter than its size %d: %v", r.size, err)
	}
	return b, err
}

// Version returns the file's format version.
func (r *Reader) Version() Version { return r.version }

// Schema returns the file's schema (a copy: changing it changes nothing).
func (r *Reader) Schema() *schema.Schema { return r.schema.Clone() }

// NumRows returns the number of rows in the file.
func (r *Reader) NumRows() uint64 { return r.rows }

// Size returns the file's size in bytes.
func (r *Reader) Size() int64 { return int64(r.size) }

// column returns column i, parsing its metadata on first use.
func (r *Reader) column(i int) (*encoding.Column, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if c := r.columns[i]; c != nil {
		return c, nil
	}
	m := r.columnMeta[i]
	c, err := parseColumn(i, r.meta[m.Offset-r.metaStart:m.Offset-r.metaStart+m.Length], r.dataEnd)
	if err != nil {
		return nil, err
	}
	r.columns[i] = c
	return c, nil
}
