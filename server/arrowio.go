package server

import (
	"errors"
	"io"
	"net/http"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/ipc"
	"github.com/labstack/echo/v4"

	"github.com/lancens/lancens/store"
)

const (
	mimeArrowStream = "application/vnd.apache.arrow.stream"
	mimeArrowFile   = "application/vnd.apache.arrow.file"
)

// readArrow reads the request body, an Arrow IPC stream (its batches may be
// LZ4_FRAME or ZSTD compressed), up to MaxArrowBody bytes. A stream with a
// schema and no batches is valid. Returns InvalidInput (13) for an empty
// body, a body that is not an IPC stream, or one too large.
func (s *Server) readArrow(c echo.Context) (store.Data, error) {
	body := http.MaxBytesReader(c.Response(), c.Request().Body, s.cfg.MaxArrowBody)
	r, err := ipc.NewReader(body)
	if err != nil {
		return store.Data{}, arrowBodyError(err, s.cfg.MaxArrowBody)
	}
	defer r.Release()
	d := store.Data{Schema: r.Schema()}
	for r.Next() {
		rec := r.RecordBatch()
		rec.Retain()
		d.Batches = append(d.Batches, rec)
	}
	if err := r.Err(); err != nil {
		return store.Data{}, arrowBodyError(err, s.cfg.MaxArrowBody)
	}
	return d, nil
}

func arrowBodyError(err error, limit int64) error {
	var tooBig *http.MaxBytesError
	switch {
	case errors.As(err, &tooBig):
		return invalidInput("the request body is larger than %d bytes", limit)
	case errors.Is(err, io.EOF):
		return invalidInput("the request body is empty; send an Arrow IPC stream (a schema, then record batches)")
	}
	return invalidInput("the request body is not a valid Arrow IPC stream: %v", err)
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
