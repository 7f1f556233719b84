package table

import (
	"maps"
	"slices"

	"google.golang.org/protobuf/proto"

	"github.com/lancens/lancens/lance/internal/pb/tablepb"
	"github.com/lancens/lancens/lance/internal/schemaproto"
	"github.com/lancens/lancens/lance/schema"
)

// Transaction is what one commit did to a dataset, as Lance records it in
// _transactions/<ReadVersion>-<UUID>.txn and inline in the manifest of
// the version it made. A writer that loses the race for a version number
// reads the transactions committed since its read version to decide
// whether its own still applies (see Commit).
type Transaction struct {
	// ReadVersion is the version the operation was computed against.
	ReadVersion uint64
	// UUID identifies the transaction (hyphenated).
	UUID string
	// Tag is a legacy tag for the version.
	Tag string
	// Properties are free-form; Lance keeps a commit message under
	// "__lance_commit_message".
	Properties map[string]string
	// Operation is what the transaction does.
	Operation Operation
}

// Operation is one of the operations of the format. This package writes
// Append, Delete, Update (rewriting rows), Overwrite, Merge, Project,
// Restore, Rewrite, ReserveFragments and Clone, and reads every kind Lance writes (those it does not
// act on are *OtherOperation) to check its commits against them.
type Operation interface {
	// Name is Lance's name of the operation ("Append", "Delete", …).
	Name() string
}

// Append adds fragments, whose ids the commit assigns.
type Append struct {
	Fragments []*Fragment
}

// Delete gives fragments deletion files (Updated, with their ids) and
// removes fragments whose rows are all deleted.
type Delete struct {
	Updated []*Fragment
	Removed []uint64
	// Predicate is the filter that chose the rows ("" when deleted by
	// offset).
	Predicate string
}

// Overwrite replaces the whole dataset, or creates it.
type Overwrite struct {
	Fragments []*Fragment
	Schema    *schema.Schema
	// Config is merged into the dataset's config.
	Config map[string]string
}

// Merge replaces every fragment (giving them new data files for added
// fields) and the schema.
type Merge struct {
	Fragments []*Fragment
	Schema    *schema.Schema
}

// Project replaces the schema by a subset or a renaming of it; data files
// are untouched (those left with no field of the schema are dropped).
type Project struct {
	Schema *schema.Schema
}

// Restore makes the content of an older version the newest.
type Restore struct {
	Version uint64
}

// Rewrite replaces groups of fragments by new fragments holding the same
// rows (compaction).
type Rewrite struct {
	Groups []RewriteGroup
}

// RewriteGroup replaces Old by New.
type RewriteGroup struct {
	Old, New []*Fragment
}

// ReserveFragments takes fragment ids for a later operation.
type ReserveFragments struct {
	N uint32
}

// CreateIndex adds indexes (replacing those of the same name) and removes
// others.
type CreateIndex struct {
	New, Removed []*Index
}

// Update rewrites rows: Removed fragments go, Updated ones change (new
// deletion files, or new data files for some fields) and New ones hold
// moved rows.
type Update struct {
	Removed        []uint64
	Updated, New   []*Fragment
	FieldsModified []uint32
}

// DataReplacement gives fragments new data files for fields they have.
type DataReplacement struct {
	Fragments []uint64
}

// UpdateConfig edits the config, table metadata, schema metadata or field
// metadata.
type UpdateConfig struct {
	// ConfigKeys are the config keys set or removed; ReplacesConfig says
	// the whole config was replaced.
	ConfigKeys     []string
	ReplacesConfig bool
	// SchemaMetadata says the schema or field metadata changed.
	SchemaMetadata bool
}

// Clone starts a dataset, or a branch, from a version of another: a
// shallow clone refers to the source's files through a base path.
type Clone struct {
	Shallow bool
	// RefName is the source's branch or tag; RefVersion its version and
	// RefPath its root.
	RefName    string
	RefVersion uint64
	RefPath    string
	// Branch is the branch being started, "" for a new dataset.
	Branch string
}

// OtherOperation is an operation of a kind this package reads only to
// know it happened (UpdateMemWalState, UpdateBases, or a kind newer than
// this package).
type OtherOperation struct {
	Kind string
}

func (*Append) Name() string           { return "Append" }
func (*Delete) Name() string           { return "Delete" }
func (*Overwrite) Name() string        { return "Overwrite" }
func (*Merge) Name() string            { return "Merge" }
func (*Project) Name() string          { return "Project" }
func (*Restore) Name() string          { return "Restore" }
func (*Rewrite) Name() string          { return "Rewrite" }
func (*ReserveFragments) Name() string { return "ReserveFragments" }
func (*CreateIndex) Name() string      { return "CreateIndex" }
func (*Update) Name() string           { return "Update" }
func (*DataReplacement) Name() string  { return "DataReplacement" }
func (*UpdateConfig) Name() string     { return "UpdateConfig" }
func (*Clone) Name() string            { return "Clone" }
func (o *OtherOperation) Name() string { return o.Kind }

// maxTransactionBytes bounds a transaction file.
const maxTransactionBytes = 64 << 20

// EncodeTransaction returns the serialized transaction, as stored in a
// transaction file. It returns an error wrapping ErrInvalid for an
// operation this package does not write.
func EncodeTransaction(t *Transaction) ([]byte, error) {
	p, err := transactionToProto(t)
	if err != nil {
		return nil, err
	}
	return deterministic.Marshal(p)
}

// DecodeTransaction returns the transaction serialized in data (a
// transaction file, or a manifest's transaction section). It returns an
// error wrapping ErrCorrupt when data is not a well-formed transaction.
func DecodeTransaction(data []byte) (*Transaction, error) {
	if len(data) > maxTransactionBytes {
		return nil, corruptf("transaction of %d bytes", len(data))
	}
	var p tablepb.Transaction
	if err := proto.Unmarshal(data, &p); err != nil {
		return nil, corruptf("transaction: %v", err)
	}
	return transactionFromProto(&p)
}

func transactionFromProto(p *tablepb.Transaction) (*Transaction, error) {
	t := &Transaction{ReadVersion: p.GetReadVersion(), UUID: p.GetUuid(), Tag: p.GetTag(), Properties: p.GetTransactionProperties()}
	var err error
	switch op := p.GetOperation().(type) {
	case *tablepb.Transaction_Append_:
		a := &Append{}
		a.Fragments, err = fragmentsFromProto(op.Append.GetFragments(), false)
		t.Operation = a
	case *tablepb.Transaction_Delete_:
		d := &Delete{Removed: op.Delete.GetDeletedFragmentIds(), Predicate: op.Delete.GetPredicate()}
		d.Updated, err = fragmentsFromProto(op.Delete.GetUpdatedFragments(), false)
		t.Operation = d
	case *tablepb.Transaction_Overwrite_:
		o := &Overwrite{Config: op.Overwrite.GetConfigUpsertValues()}
		if o.Fragments, err = fragmentsFromProto(op.Overwrite.GetFragments(), false); err == nil {
			o.Schema, err = schemaFromProto(op.Overwrite.GetSchema(), op.Overwrite.GetSchemaMetadata())
		}
		t.Operation = o
	case *tablepb.Transaction_Merge_:
		m := &Merge{}
		if m.Fragments, err = fragmentsFromProto(op.Merge.GetFragments(), false); err == nil {
			m.Schema, err = schemaFromProto(op.Merge.GetSchema(), op.Merge.GetSchemaMetadata())
		}
		t.Operation = m
	case *tablepb.Transaction_Project_:
		pr := &Project{}
		pr.Schema, err = schemaFromProto(op.Project.GetSchema(), nil)
		t.Operation = pr
	case *tablepb.Transaction_Restore_:
		t.Operation = &Restore{Version: op.Restore.GetVersion()}
	case *tablepb.Transaction_Rewrite_:
		t.Operation, err = rewriteFromProto(op.Rewrite)
	case *tablepb.Transaction_ReserveFragments_:
		t.Operation = &ReserveFragments{N: op.ReserveFragments.GetNumFragments()}
	case *tablepb.Transaction_CreateIndex_:
		ci := &CreateIndex{}
		for _, ip := range op.CreateIndex.GetNewIndices() {
			ix, e := indexFromProto(ip)
			if e != nil {
				return nil, e
			}
			ci.New = append(ci.New, ix)
		}
		for _, ip := range op.CreateIndex.GetRemovedIndices() {
			ix, e := indexFromProto(ip)
			if e != nil {
				return nil, e
			}
			ci.Removed = append(ci.Removed, ix)
		}
		t.Operation = ci
	case *tablepb.Transaction_Update_:
		u := &Update{Removed: op.Update.GetRemovedFragmentIds(), FieldsModified: op.Update.GetFieldsModified()}
		if u.Updated, err = fragmentsFromProto(op.Update.GetUpdatedFragments(), false); err == nil {
			u.New, err = fragmentsFromProto(op.Update.GetNewFragments(), false)
		}
		t.Operation = u
	case *tablepb.Transaction_DataReplacement_:
		dr := &DataReplacement{}
		for _, g := range op.DataReplacement.GetReplacements() {
			dr.Fragments = append(dr.Fragments, g.GetFragmentId())
		}
		t.Operation = dr
	case *tablepb.Transaction_UpdateConfig_:
		t.Operation = updateConfigFromProto(op.UpdateConfig)
	case *tablepb.Transaction_Clone_:
		c := op.Clone
		t.Operation = &Clone{Shallow: c.GetIsShallow(), RefName: c.GetRefName(), RefVersion: c.GetRefVersion(), RefPath: c.GetRefPath(), Branch: c.GetBranchName()}
	case *tablepb.Transaction_UpdateMemWalState_:
		t.Operation = &OtherOperation{Kind: "UpdateMemWalState"}
	case *tablepb.Transaction_UpdateBases_:
		t.Operation = &OtherOperation{Kind: "UpdateBases"}
	case nil:
		t.Operation = &OtherOperation{Kind: "unknown"}
	}
	if err != nil {
		return nil, err
	}
	return t, nil
}

func rewriteFromProto(p *tablepb.Transaction_Rewrite) (*Rewrite, error) {
	r := &Rewrite{}
	add := func(old, new []*tablepb.DataFragment) error {
		o, err := fragmentsFromProto(old, false)
		if err != nil {
			return err
		}
		n, err := fragmentsFromProto(new, false)
		if err != nil {
			return err
		}
		r.Groups = append(r.Groups, RewriteGroup{Old: o, New: n})
		return nil
	}
	if len(p.GetOldFragments()) > 0 || len(p.GetNewFragments()) > 0 {
		if err := add(p.GetOldFragments(), p.GetNewFragments()); err != nil {
			return nil, err
		}
	}
	for _, g := range p.GetGroups() {
		if err := add(g.GetOldFragments(), g.GetNewFragments()); err != nil {
			return nil, err
		}
	}
	return r, nil
}

func updateConfigFromProto(p *tablepb.Transaction_UpdateConfig) *UpdateConfig {
	u := &UpdateConfig{}
	if cu := p.GetConfigUpdates(); cu != nil {
		u.ReplacesConfig = cu.GetReplace()
		for _, e := range cu.GetUpdateEntries() {
			u.ConfigKeys = append(u.ConfigKeys, e.GetKey())
		}
	}
	u.ConfigKeys = append(u.ConfigKeys, slices.Sorted(maps.Keys(p.GetUpsertValues()))...)
	u.ConfigKeys = append(u.ConfigKeys, p.GetDeleteKeys()...)
	u.SchemaMetadata = p.GetSchemaMetadataUpdates() != nil || len(p.GetFieldMetadataUpdates()) > 0 ||
		len(p.GetSchemaMetadata()) > 0 || len(p.GetFieldMetadata()) > 0
	return u
}

func transactionToProto(t *Transaction) (*tablepb.Transaction, error) {
	p := &tablepb.Transaction{ReadVersion: t.ReadVersion, Uuid: t.UUID, Tag: t.Tag, TransactionProperties: t.Properties}
	switch op := t.Operation.(type) {
	case *Append:
		p.Operation = &tablepb.Transaction_Append_{Append: &tablepb.Transaction_Append{Fragments: fragmentsToProto(op.Fragments)}}
	case *Delete:
		p.Operation = &tablepb.Transaction_Delete_{Delete: &tablepb.Transaction_Delete{
			UpdatedFragments: fragmentsToProto(op.Updated), DeletedFragmentIds: op.Removed, Predicate: op.Predicate,
		}}
	case *Overwrite:
		fields, md := schemaproto.ToProto(op.Schema)
		p.Operation = &tablepb.Transaction_Overwrite_{Overwrite: &tablepb.Transaction_Overwrite{
			Fragments: fragmentsToProto(op.Fragments), Schema: fields, SchemaMetadata: md, ConfigUpsertValues: op.Config,
		}}
	case *Merge:
		fields, md := schemaproto.ToProto(op.Schema)
		p.Operation = &tablepb.Transaction_Merge_{Merge: &tablepb.Transaction_Merge{
			Fragments: fragmentsToProto(op.Fragments), Schema: fields, SchemaMetadata: md,
		}}
	case *Project:
		fields, _ := schemaproto.ToProto(op.Schema)
		p.Operation = &tablepb.Transaction_Project_{Project: &tablepb.Transaction_Project{Schema: fields}}
	case *Restore:
		p.Operation = &tablepb.Transaction_Restore_{Restore: &tablepb.Transaction_Restore{Version: op.Version}}
	case *Rewrite:
		rw := &tablepb.Transaction_Rewrite{}
		for _, g := range op.Groups {
			rw.Groups = append(rw.Groups, &tablepb.Transaction_Rewrite_RewriteGroup{
				OldFragments: fragmentsToProto(g.Old), NewFragments: fragmentsToProto(g.New),
			})
		}
		p.Operation = &tablepb.Transaction_Rewrite_{Rewrite: rw}
	case *ReserveFragments:
		p.Operation = &tablepb.Transaction_ReserveFragments_{ReserveFragments: &tablepb.Transaction_ReserveFragments{NumFragments: op.N}}
	case *Update:
		p.Operation = &tablepb.Transaction_Update_{Update: &tablepb.Transaction_Update{
			RemovedFragmentIds: op.Removed, UpdatedFragments: fragmentsToProto(op.Updated),
			NewFragments: fragmentsToProto(op.New), FieldsModified: op.FieldsModified,
			UpdateMode: tablepb.Transaction_REWRITE_ROWS,
		}}
	case *Clone:
		c := &tablepb.Transaction_Clone{IsShallow: op.Shallow, RefVersion: op.RefVersion, RefPath: op.RefPath}
		if op.RefName != "" {
			c.RefName = proto.String(op.RefName)
		}
		if op.Branch != "" {
			c.BranchName = proto.String(op.Branch)
		}
		p.Operation = &tablepb.Transaction_Clone_{Clone: c}
	default:
		return nil, invalidf("this library does not write %s transactions", t.Operation.Name())
	}
	return p, nil
}

// transactionPath returns the path of t's transaction file below the
// dataset (or branch) root.
func transactionPath(t *Transaction) string {
	return "_transactions/" + transactionName(t)
}

// transactionName returns the name of t's transaction file, as the
// manifest records it.
func transactionName(t *Transaction) string {
	return formatUint(t.ReadVersion) + "-" + t.UUID + ".txn"
}
