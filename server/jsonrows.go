package server

import (
	"bufio"
	"encoding/json"
	"math"
	"mime"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/labstack/echo/v4"
)

// Query results as JSON, for clients without Arrow (curl, scripts): a query
// whose Accept header asks for application/json (before any Arrow type)
// answers a JSON array with one object per row, its members the result's
// columns in order. Values: numbers and booleans as such (decimals as
// strings, to keep their digits; NaN and ±Inf as the strings "NaN",
// "Infinity", "-Infinity"), strings as strings, binary as base64,
// timestamps as RFC 3339 (in the column's time zone, UTC when it has
// none), dates as YYYY-MM-DD, times of day as hh:mm:ss[.fraction],
// durations as Go durations ("1.5s"), lists and vectors as arrays, structs
// as objects, maps as arrays of {"key", "value"}. The rows are those an
// Arrow answer would carry: the same query, limits and version.

// wantsJSON reports whether the request's Accept header lists
// application/json before any Arrow type.
func wantsJSON(r *http.Request) bool {
	for _, part := range strings.Split(r.Header.Get(echo.HeaderAccept), ",") {
		mt, _, err := mime.ParseMediaType(strings.TrimSpace(part))
		if err != nil {
			continue
		}
		switch {
		case mt == echo.MIMEApplicationJSON:
			return true
		case mt == mimeArrowFile || mt == mimeArrowStream:
			return false
		}
	}
	return false
}

// writeJSONRows writes query results as a JSON array of row objects.
func writeJSONRows(c echo.Context, schema *arrow.Schema, batches []arrow.RecordBatch) error {
	res := c.Response()
	res.Header().Set(echo.HeaderContentType, echo.MIMEApplicationJSONCharsetUTF8)
	res.WriteHeader(http.StatusOK)
	w := bufio.NewWriter(res)
	w.WriteByte('[')
	first := true
	for _, b := range batches {
		for i := range int(b.NumRows()) {
			if !first {
				w.WriteByte(',')
			}
			first = false
			w.WriteByte('{')
			for j, f := range schema.Fields() {
				if j > 0 {
					w.WriteByte(',')
				}
				writeJSONString(w, f.Name)
				w.WriteByte(':')
				writeJSONValue(w, b.Column(j), i)
			}
			w.WriteByte('}')
		}
	}
	w.WriteString("]\n")
	return w.Flush()
}

func writeJSONString(w *bufio.Writer, s string) {
	b, _ := json.Marshal(s) // a string always encodes
	w.Write(b)
}

// writeJSONValue writes value i of arr (see above for the encoding).
func writeJSONValue(w *bufio.Writer, arr arrow.Array, i int) {
	if arr.IsNull(i) {
		w.WriteString("null")
		return
	}
	switch a := arr.(type) {
	case *array.Float16:
		writeFloat(w, float64(a.Value(i).Float32()), 32)
	case *array.Float32:
		writeFloat(w, float64(a.Value(i)), 32)
	case *array.Float64:
		writeFloat(w, a.Value(i), 64)
	case *array.Timestamp:
		unit := a.DataType().(*arrow.TimestampType)
		loc, err := unit.GetZone()
		if err != nil || loc == nil {
			loc = time.UTC
		}
		writeJSONString(w, a.Value(i).ToTime(unit.Unit).In(loc).Format(time.RFC3339Nano))
	case *array.Date32:
		writeJSONString(w, a.Value(i).ToTime().Format(time.DateOnly))
	case *array.Date64:
		writeJSONString(w, a.Value(i).ToTime().Format(time.DateOnly))
	case *array.Time32:
		writeJSONString(w, a.Value(i).ToTime(a.DataType().(*arrow.Time32Type).Unit).Format("15:04:05.999999999"))
	case *array.Time64:
		writeJSONString(w, a.Value(i).ToTime(a.DataType().(*arrow.Time64Type).Unit).Format("15:04:05.999999999"))
	case *array.Duration:
		d := time.Duration(a.Value(i)) * a.DataType().(*arrow.DurationType).Unit.Multiplier()
		writeJSONString(w, d.String())
	case *array.Decimal32, *array.Decimal64, *array.Decimal128, *array.Decimal256:
		writeJSONString(w, arr.ValueStr(i))
	case array.ListLike:
		start, end := a.ValueOffsets(i)
		values := a.ListValues()
		if m, ok := arr.(*array.Map); ok {
			keys, items := m.Keys(), m.Items()
			w.WriteByte('[')
			for k := int(start); k < int(end); k++ {
				if k > int(start) {
					w.WriteByte(',')
				}
				w.WriteString(`{"key":`)
				writeJSONValue(w, keys, k)
				w.WriteString(`,"value":`)
				writeJSONValue(w, items, k)
				w.WriteByte('}')
			}
			w.WriteByte(']')
			return
		}
		w.WriteByte('[')
		for k := int(start); k < int(end); k++ {
			if k > int(start) {
				w.WriteByte(',')
			}
			writeJSONValue(w, values, k)
		}
		w.WriteByte(']')
	case *array.Struct:
		st := a.DataType().(*arrow.StructType)
		w.WriteByte('{')
		for j, f := range st.Fields() {
			if j > 0 {
				w.WriteByte(',')
			}
			writeJSONString(w, f.Name)
			w.WriteByte(':')
			writeJSONValue(w, a.Field(j), i)
		}
		w.WriteByte('}')
	case *array.Dictionary:
		writeJSONValue(w, a.Dictionary(), a.GetValueIndex(i))
	default:
		// Integers, booleans, strings and binary (base64) encode as
		// encoding/json encodes their Go values.
		b, err := json.Marshal(arr.GetOneForMarshal(i))
		if err != nil {
			b, _ = json.Marshal(arr.ValueStr(i))
		}
		w.Write(b)
	}
}

// writeFloat writes a float of the given bit size; NaN and the infinities,
// which JSON has no numbers for, as strings.
func writeFloat(w *bufio.Writer, f float64, bits int) {
	switch {
	case math.IsNaN(f):
		w.WriteString(`"NaN"`)
	case math.IsInf(f, 1):
		w.WriteString(`"Infinity"`)
	case math.IsInf(f, -1):
		w.WriteString(`"-Infinity"`)
	default:
		w.WriteString(strconv.FormatFloat(f, 'g', -1, bits))
	}
}
