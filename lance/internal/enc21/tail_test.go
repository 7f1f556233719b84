package enc21

// A minimal reader of a Lance file's tail, for tests only: it exists until
// lance/file's container reader lands, and goes then.

import (
	"encoding/binary"
	"fmt"
	"os"
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/anypb"

	"github.com/lancens/lancens/lance/internal/pb/enc21pb"
	"github.com/lancens/lancens/lance/internal/pb/filepb"
	"github.com/lancens/lancens/lance/internal/pb/schemapb"
)

type testFile struct {
	raw     []byte
	major   uint16
	minor   uint16
	fields  []*schemapb.Field
	rows    uint64
	columns []*filepb.ColumnMetadata
}

func openTestFile(t testing.TB, path string) *testFile {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	le := binary.LittleEndian
	f := raw[len(raw)-40:]
	if string(f[36:]) != "LANC" {
		t.Fatalf("%s: no magic", path)
	}
	tf := &testFile{raw: raw, major: le.Uint16(f[32:]), minor: le.Uint16(f[34:])}
	cmOff, gbOff := le.Uint64(f[8:]), le.Uint64(f[16:])
	ncol := le.Uint32(f[28:])
	var fd schemapb.FileDescriptor
	pos, n := le.Uint64(raw[gbOff:]), le.Uint64(raw[gbOff+8:])
	if err := proto.Unmarshal(raw[pos:pos+n], &fd); err != nil {
		t.Fatal(err)
	}
	tf.fields, tf.rows = fd.GetSchema().GetFields(), fd.GetLength()
	for c := uint64(0); c < uint64(ncol); c++ {
		pos, n := le.Uint64(raw[cmOff+16*c:]), le.Uint64(raw[cmOff+16*c+8:])
		cm := &filepb.ColumnMetadata{}
		if err := proto.Unmarshal(raw[pos:pos+n], cm); err != nil {
			t.Fatal(err)
		}
		tf.columns = append(tf.columns, cm)
	}
	return tf
}

// page returns page i of column c: its layout and buffers.
func (tf *testFile) page(t testing.TB, c, i int) (*enc21pb.PageLayout, [][]byte, uint64) {
	t.Helper()
	pg := tf.columns[c].GetPages()[i]
	var raw []byte
	switch l := pg.GetEncoding().GetLocation().(type) {
	case *filepb.Encoding_Direct:
		raw = l.Direct.GetEncoding()
	case *filepb.Encoding_Indirect:
		raw = tf.raw[l.Indirect.GetBufferLocation() : l.Indirect.GetBufferLocation()+l.Indirect.GetBufferLength()]
	default:
		t.Fatalf("column %d page %d: encoding %T", c, i, l)
	}
	var a anypb.Any
	if err := proto.Unmarshal(raw, &a); err != nil {
		t.Fatal(err)
	}
	if !strings.HasSuffix(a.GetTypeUrl(), "lance.encodings21.PageLayout") {
		t.Fatalf("column %d page %d: %s", c, i, a.GetTypeUrl())
	}
	layout := &enc21pb.PageLayout{}
	if err := proto.Unmarshal(a.GetValue(), layout); err != nil {
		t.Fatal(err)
	}
	var bufs [][]byte
	for k, off := range pg.GetBufferOffsets() {
		bufs = append(bufs, tf.raw[off:off+pg.GetBufferSizes()[k]])
	}
	return layout, bufs, pg.GetLength()
}

// readColumn decodes every page of column c into a Column.
func (tf *testFile) readColumn(t testing.TB, c int) (*Column, error) {
	t.Helper()
	col := &Column{}
	for i := range tf.columns[c].GetPages() {
		layout, bufs, rows := tf.page(t, c, i)
		p, err := DecodePage(layout, bufs, rows, DefaultLimits)
		if err != nil {
			return nil, fmt.Errorf("page %d: %w", i, err)
		}
		if err := col.Append(p, 0, p.Rows()); err != nil {
			return nil, fmt.Errorf("page %d: %w", i, err)
		}
	}
	return col, nil
}
