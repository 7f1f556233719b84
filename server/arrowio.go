package server

import (
	"errors"
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

// readArrow reads the request body, an Arrow IPC stream (its batches may be
// LZ4_FRAME or ZSTD compressed), through arrowin, which checks every size
// the stream declares before anything is allocated and validates the
// decoded data. A stream with a schema and no batches is valid. Returns
// InvalidInput (13) for an empty, malformed or inconsistent body or one
// beyond the decoded-bytes or row limits (with HTTP 413 when the body
// itself is larger than MaxArrowBody), and TableSchemaValidationError (20)
// for columns of a type lancens cannot store.
func (s *Server) readArrow(c echo.Context) (store.Data, error) {
	req := c.Request()
	if req.ContentLength > s.cfg.MaxArrowBody {
		return store.Data{}, bodyTooLarge(s.cfg.MaxArrowBody)
	}
	schema, batches, err := arrowin.Decode(req.Body, arrowin.Limits{
		MaxBodyBytes: s.cfg.MaxArrowBody, MaxDecodedBytes: s.cfg.MaxArrowDecodedBytes, MaxRows: s.cfg.MaxArrowRows,
	})
	var tooBig *http.MaxBytesError
	var refused *arrowin.Error
	switch {
	case err == nil:
		return store.NewData(schema, batches...), nil
	case errors.As(err, &tooBig), errors.As(err, &refused) && refused.TooLarge:
		return store.Data{}, bodyTooLarge(s.cfg.MaxArrowBody)
	case errors.As(err, &refused) && refused.Unsupported:
		return store.Data{}, store.Errorf(store.CodeTableSchemaValidationError, "%s", refused.Error())
	}
	return store.Data{}, invalidInput("%s", err.Error())
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
