package sqlite

import (
	"errors"
	"fmt"
	"io"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/lancens/lancens/store"
)

// Reading a write's rows
//
// A write reads its rows from a store.RecordStream (see store.Data for
// the contract), a chunk of rows at a time (rowSource), and releases each
// batch once the chunk holding its last rows is written: a write holds
// the batches of the chunk being written, of the chunk being converted
// meanwhile (staging.go), and one batch read ahead.
//
// A write that finds the table changed before it took the writer
// (errStale) starts over and reads its rows again. That can only happen
// before its first rows are written: a staged write holds its table from
// then on. So the rows are read through a replay, which keeps the batches
// read until the write settles it (its first chunk committed, or the end
// of the write): a bounded prefix, one chunk and the batch read ahead.

// replay is a RecordStream that keeps the batches it returns until
// settle, so that rewind can return them again.
type replay struct {
	src     store.RecordStream // nil: no rows
	kept    []arrow.RecordBatch
	at      int // the next kept batch to return
	settled bool
}

// replayOf returns a replay reading s; s itself when it is one, rewound,
// so that a write handing its rows on to another (an insert that creates a
// declared table) keeps one prefix, not two.
func replayOf(s store.RecordStream) *replay {
	if r, ok := s.(*replay); ok {
		r.rewind()
		return r
	}
	return &replay{src: s}
}

// Next implements store.RecordStream.
func (r *replay) Next() (arrow.RecordBatch, error) {
	if r.at < len(r.kept) {
		b := r.kept[r.at]
		r.at++
		b.Retain()
		return b, nil
	}
	if r.src == nil {
		return nil, io.EOF
	}
	b, err := r.src.Next()
	if err != nil {
		return nil, err
	}
	if !r.settled {
		b.Retain()
		r.kept = append(r.kept, b)
		r.at++
	}
	return b, nil
}

// rewind makes Next start again from the first batch.
func (r *replay) rewind() { r.at = 0 }

// again readies the rows for a write to table id that starts over. Once
// settled they cannot be read again, and it returns ConcurrentModification
// (14): the table changed under a write that had begun writing (a create
// that found, at its end, that another request had made the table).
func (r *replay) again(id []string) error {
	if r.settled {
		return store.Errorf(store.CodeConcurrentModification, "table %s changed while this write was writing its rows; send it again", displayID(id))
	}
	r.rewind()
	return nil
}

// settle releases the batches kept and keeps no more.
func (r *replay) settle() {
	for _, b := range r.kept {
		b.Release()
	}
	r.kept, r.at, r.settled = nil, 0, true
}

// rowSource converts the rows of a write to SQL values, a chunk at a time:
// up to maxRows rows or about maxBytes bytes of values, whichever comes
// first. It checks each batch for nulls in non-nullable fields as it
// reads it.
type rowSource struct {
	ts        *tableSchema
	in        *replay
	versioned bool
	maxRows   int
	maxBytes  int64

	cur  arrow.RecordBatch // the batch being read, owned
	row  int               // its next row
	cols []columnValue     // its column readers
	eof  bool
	err  error // the error that ended reading
}

// more reads batches until one has rows left to convert, and reports
// whether one has, or whether reading failed (for next to return).
func (s *rowSource) more() bool {
	for s.err == nil && !s.eof && (s.cur == nil || s.row >= int(s.cur.NumRows())) {
		s.close()
		b, err := s.in.Next()
		switch {
		case errors.Is(err, io.EOF):
			s.eof = true
		case err != nil:
			s.err = err
		default:
			if err := checkNulls(s.ts, b); err != nil {
				b.Release()
				s.err = err
				break
			}
			s.cur, s.row, s.cols = b, 0, nil
		}
	}
	return s.err != nil || !s.eof
}

// done reports whether every row has been converted.
func (s *rowSource) done() bool { return !s.more() }

// close releases the batch being read.
func (s *rowSource) close() {
	if s.cur != nil {
		s.cur.Release()
		s.cur, s.cols = nil, nil
	}
}

// settle stops keeping batches for a write that starts over (see replay).
func (s *rowSource) settle() { s.in.settle() }

// next converts the next chunk of rows and reads ahead to the batch after
// it. It returns the stream's error (unchanged), that of a batch with nulls
// where the table allows none (TableSchemaValidationError, 20), of a value
// that cannot be stored, or of a conversion that panicked (corrupt Arrow
// data that decoded). The chunk holds the batches it read from until
// release.
func (s *rowSource) next() (*boundRows, error) {
	width := len(layoutColumns(s.ts.fields))
	if s.versioned {
		width++
	}
	out := &boundRows{versioned: s.versioned, width: width, perStmt: max(1, min(maxStatementRows, maxStatementValues/width))}
	err := s.fill(out)
	if err == nil && s.more() && s.err != nil {
		err = s.err
	}
	if err != nil {
		out.release()
		return nil, err
	}
	return out, nil
}

// fill converts rows into out until it is a full chunk or the rows end.
func (s *rowSource) fill(out *boundRows) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("sqlite: converting rows panicked: %v", r)
		}
	}()
	var args []any
	for out.rows < s.maxRows && out.bytes < s.maxBytes && s.more() {
		if s.err != nil {
			return s.err
		}
		b := s.cur
		if s.cols == nil {
			s.cols = batchColumns(s.ts, b)
		}
		b.Retain()
		out.batches = append(out.batches, b)
		for ; s.row < int(b.NumRows()) && out.rows < s.maxRows && out.bytes < s.maxBytes; s.row++ {
			if args == nil {
				args = make([]any, 0, out.perStmt*out.width)
			}
			if s.versioned {
				args = append(args, nil)
			}
			for _, c := range s.cols {
				v, err := c.value(s.row)
				if err != nil {
					return err
				}
				out.bytes += valueBytes(v)
				args = append(args, v)
			}
			out.rows++
			if len(args) == out.perStmt*out.width {
				out.stmts = append(out.stmts, args)
				args = nil
			}
		}
	}
	if args != nil {
		out.stmts = append(out.stmts, args)
	}
	return nil
}
