package table

import (
	"errors"
	"testing"
	"time"

	"github.com/RoaringBitmap/roaring/v2"

	"github.com/lancens/lancens/lance/schema"
)

// sampleManifest returns a manifest using every part of the format this
// package writes: nested fields, fragments with several data files and
// deletion files, stable row ids, indexes, base paths, config and an
// inline transaction.
func sampleManifest() *Manifest {
	sch := &schema.Schema{
		Fields: []*schema.Field{
			{Name: "id", ID: 0, LogicalType: "int64"},
			{Name: "vec", ID: 1, LogicalType: "fixed_size_list:float:4", Nullable: true},
			{Name: "s", ID: 2, LogicalType: "struct", Nullable: true, Children: []*schema.Field{
				{Name: "a", ID: 3, LogicalType: "string", Nullable: true, Metadata: map[string]string{"k": "v"}},
			}},
		},
		Metadata: map[string]string{"owner": "me"},
	}
	base := uint32(0)
	frags := []*Fragment{
		{ID: 0, PhysicalRows: 100, Files: []DataFile{
			{Path: "a.lance", Fields: []int32{0, 1, 2, 3}, ColumnIndices: []int32{0, 1, -1, 2}, MajorVersion: 2, MinorVersion: 2, Size: 1234},
			{Path: "b.lance", Fields: []int32{FieldTombstone}, ColumnIndices: []int32{0}, MajorVersion: 2, MinorVersion: 2},
		}, Deletion: &DeletionFile{Kind: DeletionArrow, ReadVersion: 2, ID: 77, NumDeleted: 3},
			RowIDs: &Sequence{Inline: encodeRowIDRange(0, 100)}, LastUpdated: &Sequence{Inline: encodeVersionRun(100, 1)}, Created: &Sequence{Inline: encodeVersionRun(100, 1)}},
		{ID: 4, PhysicalRows: 10, Files: []DataFile{{Path: "c.lance", Fields: []int32{0, 1, 3}, ColumnIndices: []int32{0, 1, 2}, MajorVersion: 2, MinorVersion: 2, BaseID: &base}},
			Deletion: &DeletionFile{Kind: DeletionBitmap, ReadVersion: 3, ID: 9, NumDeleted: 10, BaseID: &base},
			RowIDs:   &Sequence{External: &ExternalFile{Path: "ids.bin", Offset: 8, Size: 20}}},
	}
	m := &Manifest{
		Version: 5, Branch: "dev", Timestamp: time.Date(2026, 1, 2, 3, 4, 5, 6, time.UTC), Schema: sch, Fragments: frags,
		Indexes: []*Index{{UUID: newUUID(), Name: "vec_idx", Fields: []int32{1}, DatasetVersion: 4, Fragments: roaring.BitmapOf(0),
			Type: "lance.table.VectorIndexDetails", typeURL: "/lance.table.VectorIndexDetails", IndexVersion: 1, hasIdxVer: true,
			CreatedAt: time.UnixMilli(1700000000000).UTC()}},
		NextFragmentID: 7, NextRowID: 110,
		ReaderFeatures: FeatureDeletionFiles | FeatureStableRowIDs | FeatureBasePaths,
		WriterFeatures: FeatureDeletionFiles | FeatureStableRowIDs | FeatureBasePaths | FeatureTableConfig,
		WriterVersion:  WriterVersion{Library: "lancens", Version: "1.2.3", Prerelease: "rc.1"},
		DataFormat:     DataFormat{FileFormat: "lance", Version: "2.2"},
		Config:         map[string]string{"lance.x": "1"}, TableMetadata: map[string]string{"t": "u"},
		BasePaths:       []BasePath{{ID: 0, IsDatasetRoot: true, Path: "s3://b/t.lance", Name: "origin"}},
		TransactionFile: "4-x.txn",
	}
	m.Transaction = &Transaction{ReadVersion: 4, UUID: newUUID(), Operation: &Delete{Updated: []*Fragment{frags[0]}, Removed: []uint64{2}, Predicate: "id < 3"}}
	return m
}

func TestManifestRoundTrip(t *testing.T) {
	m := sampleManifest()
	data, err := EncodeManifest(m)
	if err != nil {
		t.Fatal(err)
	}
	got, err := DecodeManifest(data)
	if err != nil {
		t.Fatal(err)
	}
	again, err := EncodeManifest(got)
	if err != nil {
		t.Fatal(err)
	}
	if string(again) != string(data) {
		t.Error("a decoded manifest does not encode to the same bytes")
	}
	if got.Version != 5 || got.Branch != "dev" || !got.Timestamp.Equal(m.Timestamp) || got.NextFragmentID != 7 || got.NextRowID != 110 {
		t.Errorf("decoded %+v", got)
	}
	if got.Rows() != 97 || got.Fragment(4) == nil || got.Fragment(3) != nil {
		t.Errorf("rows %d, fragments %v", got.Rows(), fragmentIDs(got.Fragments))
	}
	if ix := got.Indexes[0]; ix.Name != "vec_idx" || !ix.IsVector() || !ix.Fragments.Equals(roaring.BitmapOf(0)) || ix.UUID != m.Indexes[0].UUID {
		t.Errorf("index %+v", ix)
	}
	if d, ok := got.Transaction.Operation.(*Delete); !ok || d.Predicate != "id < 3" || len(d.Updated) != 1 {
		t.Errorf("transaction %+v", got.Transaction)
	}
	if f, _ := got.Schema.Field("s.a"); f == nil || f.ID != 3 || f.Metadata["k"] != "v" {
		t.Errorf("schema %+v", got.Schema)
	}
}

func TestDecodeManifestRefuses(t *testing.T) {
	good, err := EncodeManifest(sampleManifest())
	if err != nil {
		t.Fatal(err)
	}
	withFlags := func(reader, writer Features) []byte {
		m := sampleManifest()
		m.ReaderFeatures, m.WriterFeatures = reader, writer
		data, err := EncodeManifest(m)
		if err != nil {
			t.Fatal(err)
		}
		return data
	}
	outOfOrder := sampleManifest()
	outOfOrder.Fragments[0], outOfOrder.Fragments[1] = outOfOrder.Fragments[1], outOfOrder.Fragments[0]
	disordered, _ := EncodeManifest(outOfOrder)
	tooManyDeleted := sampleManifest()
	tooManyDeleted.Fragments[1].Deletion.NumDeleted = 11
	overDeleted, _ := EncodeManifest(tooManyDeleted)

	for _, tc := range []struct {
		name string
		data []byte
		want error
	}{
		{"empty", nil, ErrCorrupt},
		{"no magic", append(append([]byte{}, good[:len(good)-4]...), "LANX"...), ErrCorrupt},
		{"truncated", good[len(good)/2:], ErrCorrupt},
		{"manifest position past the end", withPos(good, uint64(len(good))), ErrCorrupt},
		{"manifest position huge", withPos(good, 1<<63), ErrCorrupt},
		{"unknown reader feature", withFlags(FeatureDeletionFiles|64, FeatureDeletionFiles), ErrUnsupported},
		{"fragments out of order", disordered, ErrCorrupt},
		{"more deleted rows than rows", overDeleted, ErrCorrupt},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := DecodeManifest(tc.data); !errors.Is(err, tc.want) {
				t.Errorf("DecodeManifest: %v, want %v", err, tc.want)
			}
		})
	}
	// An unknown writer feature does not stop reading, only writing.
	m, err := DecodeManifest(withFlags(0, 64))
	if err != nil {
		t.Fatal(err)
	}
	if err := checkWritable(m); !errors.Is(err, ErrUnsupported) {
		t.Errorf("checkWritable: %v, want ErrUnsupported", err)
	}
}

// withPos returns data with its footer's manifest position replaced.
func withPos(data []byte, pos uint64) []byte {
	out := append([]byte{}, data...)
	n := len(out)
	for i := range 8 {
		out[n-16+i] = byte(pos >> (8 * i))
	}
	return out
}

func FuzzDecodeManifest(f *testing.F) {
	data, err := EncodeManifest(sampleManifest())
	if err != nil {
		f.Fatal(err)
	}
	f.Add(data)
	m := sampleManifest()
	m.Indexes, m.Transaction, m.Branch = nil, nil, ""
	small, _ := EncodeManifest(m)
	f.Add(small)
	f.Fuzz(func(t *testing.T, data []byte) {
		m, err := DecodeManifest(data)
		if err != nil {
			return
		}
		again, err := EncodeManifest(m)
		if err != nil {
			if _, ok := m.Transaction.Operation.(*OtherOperation); ok || errors.Is(err, ErrInvalid) {
				return // a transaction this package reads but does not write
			}
			t.Fatal(err)
		}
		back, err := DecodeManifest(again)
		if err != nil {
			t.Fatalf("a re-encoded manifest does not decode: %v", err)
		}
		if back.Version != m.Version || len(back.Fragments) != len(m.Fragments) || back.Rows() != m.Rows() {
			t.Fatalf("a re-encoded manifest decodes differently")
		}
	})
}

func FuzzDecodeTransaction(f *testing.F) {
	for _, op := range []Operation{
		&Append{Fragments: sampleManifest().Fragments},
		sampleManifest().Transaction.Operation,
		&Overwrite{Schema: sampleManifest().Schema, Fragments: sampleManifest().Fragments, Config: map[string]string{"a": "b"}},
		&Rewrite{Groups: []RewriteGroup{{Old: sampleManifest().Fragments, New: sampleManifest().Fragments[:1]}}},
		&Project{Schema: sampleManifest().Schema},
		&Restore{Version: 3},
	} {
		data, err := EncodeTransaction(&Transaction{ReadVersion: 9, UUID: newUUID(), Operation: op})
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		txn, err := DecodeTransaction(data)
		if err != nil {
			return
		}
		again, err := EncodeTransaction(txn)
		if err != nil {
			return // an operation this package reads but does not write
		}
		back, err := DecodeTransaction(again)
		if err != nil {
			t.Fatalf("a re-encoded transaction does not decode: %v", err)
		}
		if back.Operation.Name() != txn.Operation.Name() || back.UUID != txn.UUID || back.ReadVersion != txn.ReadVersion {
			t.Fatalf("a re-encoded transaction decodes differently")
		}
	})
}

func TestIndexCoverage(t *testing.T) {
	m := sampleManifest()
	cols, err := m.IndexColumns(m.Indexes[0])
	if err != nil || len(cols) != 1 || cols[0] != "vec" {
		t.Errorf("IndexColumns = %v, %v", cols, err)
	}
	if un, ok := m.Unindexed("vec_idx"); !ok || len(un) != 1 || un[0] != 4 {
		t.Errorf("Unindexed = %v, %v; want fragment 4", un, ok)
	}
	if _, ok := m.Unindexed("nope"); ok {
		t.Error("Unindexed of a missing index")
	}
	m.Indexes[0].Fields = []int32{42}
	if _, err := m.IndexColumns(m.Indexes[0]); !errors.Is(err, ErrCorrupt) {
		t.Errorf("an index on a missing field: %v", err)
	}
}
