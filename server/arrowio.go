package server

import (
	"context"
	"errors"
	"io"
	"net/http"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/ipc"
	"github.com/labstack/echo/v4"

	"github.com/lancens/lancens/internal/arrowin"
	"github.com/lancens/lancens/store"
)

const (
	mimeArrowStream = "application/vnd.apache.arrow.stream"
	mimeArrowFile   = "application/vnd.apache.arrow.file"
)

// readArrow starts reading the request body, an Arrow IPC stream (its
// batches may be LZ4_FRAME or ZSTD compressed), through arrowin, which
// checks every size the stream declares before anything is allocated and
// validates the decoded data. It reads the schema alone: the write checks
// it against the table, then decodes the batches one at a time as it
// reads them (store.Data), each reserved from the decode budget until the
// write releases it. Call done with the write's error: it returns the
// error to answer (the body's own when the body is what failed) and ends
// the reading. A stream with a schema and no batches is valid. Returns,
// from readArrow or done, InvalidInput (13) for an empty, malformed or
// inconsistent body or one beyond the decoded-bytes or row limits (with
// HTTP 413 when the body itself is larger than MaxArrowBody, or one of its
// batches larger than the decode budget), TableSchemaValidationError (20)
// for columns of a type lancens cannot store, and ServiceUnavailable (17,
// with Retry-After) when the decode budget has no room for long enough.
func (s *Server) readArrow(c echo.Context) (data store.Data, done func(error) error, err error) {
	req := c.Request()
	if req.ContentLength > s.cfg.MaxArrowBody {
		return store.Data{}, nil, bodyTooLarge(s.cfg.MaxArrowBody, flagMaxArrowBody)
	}
	rd, err := arrowin.NewReader(req.Body, arrowin.Limits{
		MaxBodyBytes: s.cfg.MaxArrowBody, MaxDecodedBytes: s.cfg.MaxArrowDecodedBytes, MaxRows: s.cfg.MaxArrowRows,
		Budget: arrowBudget{b: s.decode, ctx: req.Context()},
	})
	if err != nil {
		return store.Data{}, nil, s.arrowRefusal(err)
	}
	body := &arrowBody{rd: rd, s: s}
	done = func(writeErr error) error {
		rd.Close()
		if body.err != nil {
			return body.err
		}
		return writeErr
	}
	return store.Data{Schema: rd.Schema(), Batches: body}, done, nil
}

// arrowBody is the stream of an Arrow request body's batches, decoded as
// a write reads them.
type arrowBody struct {
	rd  *arrowin.Reader
	s   *Server
	err error // the error the body failed with, as answered
}

// Next implements store.RecordStream.
func (b *arrowBody) Next() (arrow.RecordBatch, error) {
	if b.err != nil {
		return nil, b.err
	}
	rec, err := b.rd.Next()
	switch {
	case errors.Is(err, io.EOF):
		return nil, io.EOF
	case err != nil:
		b.err = b.s.arrowRefusal(err)
		return nil, b.err
	}
	return rec, nil
}

// arrowRefusal is the answer to an Arrow body that failed to decode.
func (s *Server) arrowRefusal(err error) error {
	var tooBig *http.MaxBytesError
	var refused *arrowin.Error
	var se *store.Error
	switch {
	case errors.As(err, &tooBig), errors.As(err, &refused) && refused.TooLarge:
		return bodyTooLarge(s.cfg.MaxArrowBody, flagMaxArrowBody)
	case errors.As(err, &refused) && refused.Unsupported:
		return store.Errorf(store.CodeTableSchemaValidationError, "%s", refused.Error())
	case errors.As(err, &refused):
		return invalidInput("%s", err.Error())
	case errors.As(err, &se), errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		return err // the decode budget's refusal, or the client gone
	}
	return invalidInput("%s", err.Error())
}

// writeArrow writes query results as an Arrow IPC file, or as an IPC stream
// when the request's Accept header asks for one.
func writeArrow(c echo.Context, schema *arrow.Schema, batches []arrow.RecordBatch) error {
	stream := strings.Contains(c.Request().Header.Get(echo.HeaderAccept), mimeArrowStream)
	ct := mimeArrowFile
	if stream {
		ct = mimeArrowStream
	}
	res := c.Response()
	res.Header().Set(echo.HeaderContentType, ct)
	res.WriteHeader(http.StatusOK)
	var w interface {
		Write(arrow.RecordBatch) error
		Close() error
	}
	if stream {
		w = ipc.NewWriter(res, ipc.WithSchema(schema))
	} else {
		fw, err := ipc.NewFileWriter(res, ipc.WithSchema(schema))
		if err != nil {
			return err
		}
		w = fw
	}
	for _, b := range batches {
		if err := w.Write(b); err != nil {
			return err
		}
	}
	return w.Close()
}
