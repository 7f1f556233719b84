package tabletest

import (
	"context"
	"encoding/binary"
	"fmt"
	"slices"
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"

	"github.com/lancens/lancens/lance/blob"
	"github.com/lancens/lancens/lance/internal/pb/tablepb"
	"github.com/lancens/lancens/lance/table"
)

// sdkHistory is what node/lance/write-history.mjs reports about the
// dataset it wrote.
type sdkHistory struct {
	Versions []struct {
		Version uint64
		Rows    uint64
		IDSum   int64
		Fields  []string
	}
	Indexes []struct {
		Name    string
		Columns []string
		UUID    string
		Type    string
	}
	Tags []struct {
		Name    string
		Version uint64
	}
	Branches []struct {
		Name          string
		ParentVersion uint64
		Version       uint64
		Rows          uint64
	}
}

// The operations write-history.mjs performs, by version.
var historyOperations = []string{
	"Overwrite", "Append", "Delete", "Delete", "Merge", "CreateIndex", "Append",
	"CreateIndex", "Project", "Project", "ReserveFragments", "Rewrite", "CreateIndex",
}

// ReadSDKWritten has the SDK write datasets (in newDataset's places) in
// each data storage version, with V1 manifest names and with stable row
// ids, and checks what Go reads in every version against what the SDK
// reports: row counts (which need every deletion file), schemas, the
// operation of each version, indexes, tags and branches; and that
// re-encoding each manifest keeps every field.
func ReadSDKWritten(t *testing.T, newDataset NewDataset) {
	for _, tc := range []struct {
		name    string
		options map[string]string
		format  string
		naming  table.Naming
		stable  bool
	}{
		{"2.0", map[string]string{"new_table_data_storage_version": "2.0"}, "2.0", table.NamingV2, false},
		{"2.1", map[string]string{"new_table_data_storage_version": "2.1"}, "2.1", table.NamingV2, false},
		{"2.2", map[string]string{"new_table_data_storage_version": "2.2"}, "2.2", table.NamingV2, false},
		{"V1 names", map[string]string{"new_table_enable_v2_manifest_paths": "false", "new_table_data_storage_version": "2.0"}, "2.0", table.NamingV1, false},
		{"stable row ids", map[string]string{"new_table_enable_stable_row_ids": "true", "new_table_data_storage_version": "2.0"}, "2.0", table.NamingV2, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			ds := newDataset(t)
			var want sdkHistory
			runNodeJSON(t, &want, "write-history.mjs", ds.DB, ds.Name, mustJSON(t, merged(ds.Options, tc.options)))
			uri := ds.URI()
			root := ds.Store
			d, err := table.Open(ctx, root, table.Options{URI: uri})
			if err != nil {
				t.Fatal(err)
			}
			last := want.Versions[len(want.Versions)-1]
			if d.Version() != last.Version {
				t.Errorf("latest version %d, SDK says %d", d.Version(), last.Version)
			}
			versions, err := d.Versions(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if len(versions) != len(want.Versions) {
				t.Fatalf("%d versions, SDK lists %d", len(versions), len(want.Versions))
			}
			sawKinds := map[table.DeletionKind]bool{}
			for i, w := range want.Versions {
				if versions[i].Version != w.Version || versions[i].Naming != tc.naming {
					t.Errorf("version %d listed as %+v", w.Version, versions[i])
				}
				v, err := d.Checkout(ctx, w.Version)
				if err != nil {
					t.Fatalf("version %d: %v", w.Version, err)
				}
				m := v.Manifest()
				if m.Rows() != w.Rows {
					t.Errorf("version %d: %d rows, SDK counts %d", w.Version, m.Rows(), w.Rows)
				}
				var names []string
				for _, f := range m.Schema.Fields {
					names = append(names, f.Name)
				}
				if !slices.Equal(names, w.Fields) {
					t.Errorf("version %d: fields %v, SDK has %v", w.Version, names, w.Fields)
				}
				if m.DataFormat.FileFormat != "lance" || m.DataFormat.Version != tc.format {
					t.Errorf("version %d: data format %+v", w.Version, m.DataFormat)
				}
				if m.WriterVersion.Library != "lance" || m.WriterVersion.Version != "12.0.0" {
					t.Errorf("version %d: writer %+v", w.Version, m.WriterVersion)
				}
				if got := (m.ReaderFeatures & table.FeatureStableRowIDs) != 0; got != tc.stable {
					t.Errorf("version %d: reader features %v", w.Version, m.ReaderFeatures)
				}
				if m.Transaction == nil || m.Transaction.Operation.Name() != historyOperations[i] {
					t.Errorf("version %d: transaction %+v, want a %s", w.Version, m.Transaction, historyOperations[i])
				}
				checkTransactionFile(t, ctx, root, m)
				if readsData(m) {
					ids := scanIDs(t, v)
					var sum int64
					for _, id := range ids {
						sum += id
					}
					if uint64(len(ids)) != w.Rows || sum != w.IDSum {
						t.Errorf("version %d: Go reads %d rows summing to %d, the SDK %d summing to %d", w.Version, len(ids), sum, w.Rows, w.IDSum)
					}
				}
				for _, f := range m.Fragments {
					dels, err := v.Deletions(ctx, f)
					if err != nil {
						t.Fatalf("version %d fragment %d: %v", w.Version, f.ID, err)
					}
					if f.Deletion != nil {
						sawKinds[f.Deletion.Kind] = true
						if dels.GetCardinality() != f.Deletion.NumDeleted {
							t.Errorf("version %d fragment %d: %d deletions read, %d recorded", w.Version, f.ID, dels.GetCardinality(), f.Deletion.NumDeleted)
						}
					}
				}
				checkManifestRoundTrip(t, ctx, root, versions[i])
			}
			if !sawKinds[table.DeletionArrow] || !sawKinds[table.DeletionBitmap] {
				t.Errorf("deletion file kinds seen: %v, want both", sawKinds)
			}

			m := d.Manifest()
			names := map[string]bool{}
			for _, ix := range m.Indexes {
				names[ix.Name] = true
			}
			if len(names) != len(want.Indexes) {
				t.Errorf("indexes %v, SDK lists %+v", names, want.Indexes)
			}
			for _, w := range want.Indexes {
				// The SDK lists one index per name, with the uuid of one of
				// its deltas.
				i := slices.IndexFunc(m.Indexes, func(ix *table.Index) bool { return ix.UUID == w.UUID })
				if i < 0 {
					t.Errorf("index %s (%s) missing", w.Name, w.UUID)
					continue
				}
				ix := m.Indexes[i]
				cols, err := m.IndexColumns(ix)
				if err != nil {
					t.Fatal(err)
				}
				if ix.Name != w.Name || !slices.Equal(cols, w.Columns) || ix.Type != strings.TrimPrefix(w.Type, "/") {
					t.Errorf("index %+v (columns %v), SDK lists %+v", ix, cols, w)
				}
				if ix.Fragments == nil || ix.Fragments.IsEmpty() {
					t.Errorf("index %s covers no fragment", ix.Name)
				}
				// The history's last step optimizes the indexes: every
				// fragment is covered again.
				if un, ok := m.Unindexed(ix.Name); !ok || len(un) != 0 {
					t.Errorf("index %s leaves fragments %v unindexed", ix.Name, un)
				}
			}

			tags, err := d.Tags(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if len(tags) != len(want.Tags) {
				t.Errorf("tags %+v, SDK lists %+v", tags, want.Tags)
			}
			for _, w := range want.Tags {
				tagged, err := d.CheckoutTag(ctx, w.Name)
				if err != nil {
					t.Fatalf("tag %s: %v", w.Name, err)
				}
				if tagged.Version() != w.Version {
					t.Errorf("tag %s is version %d, SDK says %d", w.Name, tagged.Version(), w.Version)
				}
			}

			branches, err := d.Branches(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if len(branches) != len(want.Branches) {
				t.Fatalf("branches %+v, SDK lists %+v", branches, want.Branches)
			}
			for i, w := range want.Branches {
				if branches[i].Name != w.Name || branches[i].ParentVersion != w.ParentVersion || branches[i].Parent != "" {
					t.Errorf("branch %+v, SDK lists %+v", branches[i], w)
				}
				b, err := table.OpenBranch(ctx, root, w.Name, table.Options{URI: uri})
				if err != nil {
					t.Fatal(err)
				}
				if b.Version() != w.Version || b.Manifest().Rows() != w.Rows || b.Branch() != w.Name {
					t.Errorf("branch %s: version %d with %d rows, SDK says %d with %d", w.Name, b.Version(), b.Manifest().Rows(), w.Version, w.Rows)
				}
				if readsData(b.Manifest()) {
					if ids := scanIDs(t, b); uint64(len(ids)) != w.Rows {
						t.Errorf("branch %s: Go reads %d rows, the SDK %d", w.Name, len(ids), w.Rows)
					}
				}
				for _, f := range b.Manifest().Fragments {
					if _, err := b.Deletions(ctx, f); err != nil {
						t.Errorf("branch %s fragment %d: %v", w.Name, f.ID, err)
					}
					for _, df := range f.Files {
						s, p, err := b.DataFile(ctx, &df)
						if err != nil {
							t.Fatal(err)
						}
						if info, err := s.Stat(ctx, p); err != nil || (df.Size != 0 && uint64(info.Size) != df.Size) {
							t.Errorf("branch %s data file %s: %+v, %v", w.Name, df.Path, info, err)
						}
					}
				}
				if _, err := table.OpenBranch(ctx, root, w.Name, table.Options{}); err != nil {
					t.Errorf("opening a branch without a URI: %v", err)
				}
			}
		})
	}
}

// checkTransactionFile checks that the transaction file m names holds the
// transaction inline in m.
func checkTransactionFile(t *testing.T, ctx context.Context, root blob.Store, m *table.Manifest) {
	t.Helper()
	store := root
	if m.Branch != "" {
		store = blob.Sub(root, "tree/"+m.Branch)
	}
	data, err := blob.ReadAll(ctx, store, "_transactions/"+m.TransactionFile, 64<<20)
	if err != nil {
		t.Fatalf("version %d: %v", m.Version, err)
	}
	txn, err := table.DecodeTransaction(data)
	if err != nil {
		t.Fatalf("version %d: %v", m.Version, err)
	}
	if txn.UUID != m.Transaction.UUID || txn.ReadVersion != m.Transaction.ReadVersion || txn.Operation.Name() != m.Transaction.Operation.Name() {
		t.Errorf("version %d: transaction file %+v, inline %+v", m.Version, txn, m.Transaction)
	}
	if name := fmt.Sprintf("%d-%s.txn", txn.ReadVersion, txn.UUID); m.TransactionFile != name {
		t.Errorf("version %d: transaction file %s for transaction %s", m.Version, m.TransactionFile, name)
	}
}

// checkManifestRoundTrip checks that re-encoding a manifest Lance wrote
// keeps every field of it: the manifest, its index section and its
// transaction compare equal as protocol buffer messages (the positions of
// the sections aside).
func checkManifestRoundTrip(t *testing.T, ctx context.Context, root blob.Store, info table.VersionInfo) {
	t.Helper()
	orig, err := blob.ReadAll(ctx, root, info.Path, table.DefaultMaxManifestBytes)
	if err != nil {
		t.Fatal(err)
	}
	m, err := table.DecodeManifest(orig)
	if err != nil {
		t.Fatal(err)
	}
	compared := []string{"manifest", "index section", "transaction"}
	switch m.Transaction.Operation.(type) {
	case *table.Append, *table.Delete, *table.Overwrite, *table.Merge, *table.Restore, *table.ReserveFragments, *table.Clone:
	default:
		// Operations this package does not write, or writes without all
		// that Lance 12 records for them (a projection's field 2, a
		// rewrite's remapped indexes): only the manifest must survive.
		compared = compared[:2]
		m.Transaction = nil
	}
	again, err := table.EncodeManifest(m)
	if err != nil {
		t.Fatalf("version %d: %v", info.Version, err)
	}
	a, b := manifestSections(t, orig), manifestSections(t, again)
	for i, what := range compared {
		if !proto.Equal(a[i], b[i]) {
			t.Errorf("version %d: the re-encoded %s differs:\nLance: %v\nGo:    %v", info.Version, what, a[i], b[i])
		}
	}
}

// manifestSections returns the messages of a manifest file: the manifest
// (with its section positions cleared), the index section and the
// transaction (nil when absent).
func manifestSections(t *testing.T, data []byte) [3]proto.Message {
	t.Helper()
	n := len(data)
	pos := binary.LittleEndian.Uint64(data[n-16:])
	body := data[:n-16]
	msg := section(t, body, pos)
	var m tablepb.Manifest
	if err := proto.Unmarshal(msg, &m); err != nil {
		t.Fatal(err)
	}
	out := [3]proto.Message{&m, (*tablepb.IndexSection)(nil), (*tablepb.Transaction)(nil)}
	if m.IndexSection != nil {
		raw := section(t, body, m.GetIndexSection())
		s := &tablepb.IndexSection{}
		if err := proto.Unmarshal(raw, s); err != nil {
			t.Fatal(err)
		}
		out[1] = s
	}
	if m.TransactionSection != nil {
		raw := section(t, body, m.GetTransactionSection())
		s := &tablepb.Transaction{}
		if err := proto.Unmarshal(raw, s); err != nil {
			t.Fatal(err)
		}
		out[2] = s
	}
	m.IndexSection, m.TransactionSection = nil, nil
	return out
}

// section returns the length-prefixed message at pos of body.
func section(t *testing.T, body []byte, pos uint64) []byte {
	t.Helper()
	if pos+4 > uint64(len(body)) {
		t.Fatalf("a section at %d is past the end (%d)", pos, len(body))
	}
	n := uint64(binary.LittleEndian.Uint32(body[pos:]))
	if pos+4+n > uint64(len(body)) {
		t.Fatalf("a section of %d bytes at %d overruns the manifest (%d)", n, pos, len(body))
	}
	return body[pos+4 : pos+4+n]
}

// readsData reports whether lance/file reads m's data files: format 2.0
// for now (2.1 and 2.2 come with their page encodings).
func readsData(m *table.Manifest) bool { return m.DataFormat.Version == "2.0" }
