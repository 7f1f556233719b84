package table

import (
	"bytes"
	"encoding/hex"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/RoaringBitmap/roaring/v2"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/anypb"
	"google.golang.org/protobuf/types/known/timestamppb"

	"github.com/lancens/lancens/lance/internal/pb/schemapb"
	"github.com/lancens/lancens/lance/internal/pb/tablepb"
	"github.com/lancens/lancens/lance/internal/schemaproto"
	"github.com/lancens/lancens/lance/schema"
)

// This file converts between the Go types of the package and the protocol
// buffer messages of the format. Conversions from messages check what the
// rest of the package relies on (ids unique and ordered, offsets inside
// their files, enum values known) and return errors wrapping ErrCorrupt;
// conversions to messages cannot fail.

// manifestFromProto returns the manifest of p, whose index section is
// section (nil when the version has none).
func manifestFromProto(p *tablepb.Manifest, section *tablepb.IndexSection) (*Manifest, error) {
	sch, err := schemaFromProto(p.GetFields(), p.GetSchemaMetadata())
	if err != nil {
		return nil, err
	}
	m := &Manifest{
		Version:         p.GetVersion(),
		Branch:          p.GetBranch(),
		Schema:          sch,
		NextRowID:       p.GetNextRowId(),
		ReaderFeatures:  Features(p.GetReaderFeatureFlags()),
		WriterFeatures:  Features(p.GetWriterFeatureFlags()),
		Config:          p.GetConfig(),
		TableMetadata:   p.GetTableMetadata(),
		TransactionFile: p.GetTransactionFile(),
		Tag:             p.GetTag(),
		versionAuxData:  p.GetVersionAuxData(),
	}
	if p.Timestamp != nil {
		if err := p.Timestamp.CheckValid(); err != nil {
			return nil, corruptf("manifest timestamp: %v", err)
		}
		m.Timestamp = p.Timestamp.AsTime()
	}
	if wv := p.GetWriterVersion(); wv != nil {
		m.WriterVersion = WriterVersion{Library: wv.GetLibrary(), Version: wv.GetVersion(), Prerelease: wv.GetPrerelease(), BuildMetadata: wv.GetBuildMetadata()}
	}
	if df := p.GetDataFormat(); df != nil {
		m.DataFormat = DataFormat{FileFormat: df.GetFileFormat(), Version: df.GetVersion()}
	}
	if p.MaxFragmentId != nil {
		m.NextFragmentID = uint64(p.GetMaxFragmentId()) + 1
	}
	for _, bp := range p.GetBasePaths() {
		m.BasePaths = append(m.BasePaths, BasePath{ID: bp.GetId(), Name: bp.GetName(), IsDatasetRoot: bp.GetIsDatasetRoot(), Path: bp.GetPath()})
	}
	m.Fragments, err = fragmentsFromProto(p.GetFragments(), true)
	if err != nil {
		return nil, err
	}
	for _, f := range m.Fragments {
		if f.ID >= m.NextFragmentID {
			// Manifests written before max_fragment_id existed lack it.
			m.NextFragmentID = f.ID + 1
		}
	}
	for _, ip := range section.GetIndices() {
		ix, err := indexFromProto(ip)
		if err != nil {
			return nil, err
		}
		m.Indexes = append(m.Indexes, ix)
	}
	return m, nil
}

// manifestToProto returns the message of m, without its sections (the
// caller places them).
func manifestToProto(m *Manifest) *tablepb.Manifest {
	fields, md := schemaproto.ToProto(m.Schema)
	p := &tablepb.Manifest{
		Fields:             fields,
		SchemaMetadata:     md,
		Fragments:          fragmentsToProto(m.Fragments),
		Version:            m.Version,
		VersionAuxData:     m.versionAuxData,
		Tag:                m.Tag,
		ReaderFeatureFlags: uint64(m.ReaderFeatures),
		WriterFeatureFlags: uint64(m.WriterFeatures),
		TransactionFile:    m.TransactionFile,
		NextRowId:          m.NextRowID,
		Config:             m.Config,
		TableMetadata:      m.TableMetadata,
		WriterVersion: &tablepb.Manifest_WriterVersion{
			Library: m.WriterVersion.Library,
			Version: m.WriterVersion.Version,
		},
		DataFormat: &tablepb.Manifest_DataStorageFormat{FileFormat: m.DataFormat.FileFormat, Version: m.DataFormat.Version},
	}
	if m.WriterVersion.Prerelease != "" {
		p.WriterVersion.Prerelease = proto.String(m.WriterVersion.Prerelease)
	}
	if m.WriterVersion.BuildMetadata != "" {
		p.WriterVersion.BuildMetadata = proto.String(m.WriterVersion.BuildMetadata)
	}
	if !m.Timestamp.IsZero() {
		p.Timestamp = timestamppb.New(m.Timestamp)
	}
	if m.NextFragmentID > 0 {
		p.MaxFragmentId = proto.Uint32(uint32(m.NextFragmentID - 1))
	}
	if m.Branch != "" {
		p.Branch = proto.String(m.Branch)
	}
	for _, bp := range m.BasePaths {
		pb := &tablepb.BasePath{Id: bp.ID, IsDatasetRoot: bp.IsDatasetRoot, Path: bp.Path}
		if bp.Name != "" {
			pb.Name = proto.String(bp.Name)
		}
		p.BasePaths = append(p.BasePaths, pb)
	}
	return p
}

// schemaFromProto returns the schema of a manifest's or a transaction's
// fields, or an error wrapping ErrCorrupt.
func schemaFromProto(fields []*schemapb.Field, md map[string][]byte) (*schema.Schema, error) {
	s, err := schemaproto.FromProto(fields, md)
	if err != nil {
		return nil, fmt.Errorf("%w: schema: %w", ErrCorrupt, err)
	}
	return s, nil
}

// fragmentsFromProto returns the fragments of ps. When ordered is set (a
// manifest's list) the ids must be strictly increasing; transactions list
// new fragments with unassigned (zero) ids.
func fragmentsFromProto(ps []*tablepb.DataFragment, ordered bool) ([]*Fragment, error) {
	out := make([]*Fragment, 0, len(ps))
	for i, p := range ps {
		if ordered && i > 0 && p.GetId() <= out[i-1].ID {
			return nil, corruptf("fragment ids are not increasing: %d after %d", p.GetId(), out[i-1].ID)
		}
		f, err := fragmentFromProto(p)
		if err != nil {
			return nil, err
		}
		out = append(out, f)
	}
	return out, nil
}

func fragmentFromProto(p *tablepb.DataFragment) (*Fragment, error) {
	f := &Fragment{ID: p.GetId(), PhysicalRows: p.GetPhysicalRows(), unknown: p.ProtoReflect().GetUnknown()}
	if p.GetId() > 1<<32-1 {
		return nil, corruptf("fragment id %d does not fit in 32 bits", p.GetId())
	}
	for _, dp := range p.GetFiles() {
		if dp.GetPath() == "" {
			return nil, corruptf("fragment %d has a data file without a path", f.ID)
		}
		if len(dp.GetColumnIndices()) != 0 && len(dp.GetColumnIndices()) != len(dp.GetFields()) {
			return nil, corruptf("data file %s has %d fields and %d column indices", dp.GetPath(), len(dp.GetFields()), len(dp.GetColumnIndices()))
		}
		f.Files = append(f.Files, DataFile{
			Path:          dp.GetPath(),
			Fields:        dp.GetFields(),
			ColumnIndices: dp.GetColumnIndices(),
			MajorVersion:  dp.GetFileMajorVersion(),
			MinorVersion:  dp.GetFileMinorVersion(),
			Size:          dp.GetFileSizeBytes(),
			BaseID:        dp.BaseId,
			unknown:       dp.ProtoReflect().GetUnknown(),
		})
	}
	if dp := p.GetDeletionFile(); dp != nil {
		kind := DeletionKind(dp.GetFileType())
		if kind != DeletionArrow && kind != DeletionBitmap {
			return nil, unsupportedf("fragment %d has a deletion file of kind %d", f.ID, kind)
		}
		if dp.GetNumDeletedRows() > f.PhysicalRows {
			return nil, corruptf("fragment %d of %d rows deletes %d", f.ID, f.PhysicalRows, dp.GetNumDeletedRows())
		}
		f.Deletion = &DeletionFile{Kind: kind, ReadVersion: dp.GetReadVersion(), ID: dp.GetId(), NumDeleted: dp.GetNumDeletedRows(), BaseID: dp.BaseId}
	}
	f.RowIDs = sequenceFromProto(p.GetInlineRowIds(), p.GetExternalRowIds())
	f.LastUpdated = sequenceFromProto(p.GetInlineLastUpdatedAtVersions(), p.GetExternalLastUpdatedAtVersions())
	f.Created = sequenceFromProto(p.GetInlineCreatedAtVersions(), p.GetExternalCreatedAtVersions())
	return f, nil
}

func sequenceFromProto(inline []byte, ext *tablepb.ExternalFile) *Sequence {
	switch {
	case ext != nil:
		return &Sequence{External: &ExternalFile{Path: ext.GetPath(), Offset: ext.GetOffset(), Size: ext.GetSize()}}
	case inline != nil:
		return &Sequence{Inline: inline}
	}
	return nil
}

func fragmentsToProto(fs []*Fragment) []*tablepb.DataFragment {
	out := make([]*tablepb.DataFragment, len(fs))
	for i, f := range fs {
		out[i] = fragmentToProto(f)
	}
	return out
}

func fragmentToProto(f *Fragment) *tablepb.DataFragment {
	p := &tablepb.DataFragment{Id: f.ID, PhysicalRows: f.PhysicalRows}
	p.ProtoReflect().SetUnknown(f.unknown)
	for _, df := range f.Files {
		dp := &tablepb.DataFile{
			Path:             df.Path,
			Fields:           df.Fields,
			ColumnIndices:    df.ColumnIndices,
			FileMajorVersion: df.MajorVersion,
			FileMinorVersion: df.MinorVersion,
			FileSizeBytes:    df.Size,
			BaseId:           df.BaseID,
		}
		dp.ProtoReflect().SetUnknown(df.unknown)
		p.Files = append(p.Files, dp)
	}
	if d := f.Deletion; d != nil {
		p.DeletionFile = &tablepb.DeletionFile{
			FileType:       tablepb.DeletionFile_DeletionFileType(d.Kind),
			ReadVersion:    d.ReadVersion,
			Id:             d.ID,
			NumDeletedRows: d.NumDeleted,
			BaseId:         d.BaseID,
		}
	}
	if s := f.RowIDs; s != nil {
		if s.External != nil {
			p.RowIdSequence = &tablepb.DataFragment_ExternalRowIds{ExternalRowIds: externalToProto(s.External)}
		} else {
			p.RowIdSequence = &tablepb.DataFragment_InlineRowIds{InlineRowIds: s.Inline}
		}
	}
	if s := f.LastUpdated; s != nil {
		if s.External != nil {
			p.LastUpdatedAtVersionSequence = &tablepb.DataFragment_ExternalLastUpdatedAtVersions{ExternalLastUpdatedAtVersions: externalToProto(s.External)}
		} else {
			p.LastUpdatedAtVersionSequence = &tablepb.DataFragment_InlineLastUpdatedAtVersions{InlineLastUpdatedAtVersions: s.Inline}
		}
	}
	if s := f.Created; s != nil {
		if s.External != nil {
			p.CreatedAtVersionSequence = &tablepb.DataFragment_ExternalCreatedAtVersions{ExternalCreatedAtVersions: externalToProto(s.External)}
		} else {
			p.CreatedAtVersionSequence = &tablepb.DataFragment_InlineCreatedAtVersions{InlineCreatedAtVersions: s.Inline}
		}
	}
	return p
}

func externalToProto(e *ExternalFile) *tablepb.ExternalFile {
	return &tablepb.ExternalFile{Path: e.Path, Offset: e.Offset, Size: e.Size}
}

// maxIndexBitmapBytes bounds an index's serialized fragment bitmap: a
// bitmap of every possible fragment id is smaller.
const maxIndexBitmapBytes = 1 << 20

func indexFromProto(p *tablepb.IndexMetadata) (*Index, error) {
	raw := p.GetUuid().GetUuid()
	if len(raw) != 16 {
		return nil, corruptf("index %q has a %d-byte uuid", p.GetName(), len(raw))
	}
	ix := &Index{
		UUID:           formatUUID(raw),
		Name:           p.GetName(),
		Fields:         p.GetFields(),
		DatasetVersion: p.GetDatasetVersion(),
		IndexVersion:   p.GetIndexVersion(),
		BaseID:         p.BaseId,
		hasIdxVer:      p.IndexVersion != nil,
		unknown:        p.ProtoReflect().GetUnknown(),
	}
	if bm := p.GetFragmentBitmap(); bm != nil {
		if len(bm) > maxIndexBitmapBytes {
			return nil, corruptf("index %q has a fragment bitmap of %d bytes", ix.Name, len(bm))
		}
		ix.Fragments = roaring.New()
		n, err := ix.Fragments.ReadFrom(bytes.NewReader(bm))
		if err == nil && n != int64(len(bm)) {
			err = fmt.Errorf("%d bytes after the bitmap", int64(len(bm))-n)
		}
		if err == nil {
			err = ix.Fragments.Validate()
		}
		if err != nil {
			return nil, corruptf("index %q fragment bitmap: %v", ix.Name, err)
		}
	}
	if d := p.GetIndexDetails(); d != nil {
		ix.typeURL = d.GetTypeUrl()
		ix.details = d.GetValue()
		ix.Type = ix.typeURL[strings.LastIndexByte(ix.typeURL, '/')+1:]
	}
	if p.CreatedAt != nil {
		ms := p.GetCreatedAt()
		if ms > math.MaxInt64 {
			return nil, corruptf("index %q creation time %d ms is out of range", ix.Name, ms)
		}
		ix.CreatedAt = time.UnixMilli(int64(ms)).UTC()
	}
	return ix, nil
}

func indexToProto(ix *Index) *tablepb.IndexMetadata {
	raw, _ := parseUUID(ix.UUID)
	p := &tablepb.IndexMetadata{
		Uuid:           &tablepb.UUID{Uuid: raw},
		Fields:         ix.Fields,
		Name:           ix.Name,
		DatasetVersion: ix.DatasetVersion,
		BaseId:         ix.BaseID,
	}
	p.ProtoReflect().SetUnknown(ix.unknown)
	if ix.Fragments != nil {
		p.FragmentBitmap, _ = ix.Fragments.ToBytes()
	}
	if ix.typeURL != "" {
		p.IndexDetails = &anypb.Any{TypeUrl: ix.typeURL, Value: ix.details}
	}
	if ix.hasIdxVer {
		p.IndexVersion = proto.Int32(ix.IndexVersion)
	}
	if !ix.CreatedAt.IsZero() {
		p.CreatedAt = proto.Uint64(uint64(ix.CreatedAt.UnixMilli()))
	}
	return p
}

// formatUUID spells 16 bytes as a hyphenated UUID.
func formatUUID(b []byte) string {
	h := hex.EncodeToString(b)
	return h[0:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:32]
}

// parseUUID returns the 16 bytes of a hyphenated (or plain hex) UUID.
func parseUUID(s string) ([]byte, error) {
	b, err := hex.DecodeString(strings.ReplaceAll(s, "-", ""))
	if err != nil || len(b) != 16 {
		return nil, invalidf("%q is not a UUID", s)
	}
	return b, nil
}

// fragmentIDs returns the ids of fs, sorted.
func fragmentIDs(fs []*Fragment) []uint64 {
	ids := make([]uint64, len(fs))
	for i, f := range fs {
		ids[i] = f.ID
	}
	slices.Sort(ids)
	return ids
}
