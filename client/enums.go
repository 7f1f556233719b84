package client

// Mode says what a call does when its target exists already (or, for drops
// and unsets, is missing). Every call that takes a mode uses these names;
// each documents which it accepts, and the server answers InvalidInput (13)
// for the others. The zero value lets the call use its default.
type Mode string

// Modes.
const (
	// ModeCreate fails if the target exists: the default of creates and
	// registrations.
	ModeCreate Mode = "Create"
	// ModeExistOK keeps what exists and succeeds.
	ModeExistOK Mode = "ExistOk"
	// ModeOverwrite replaces what exists (for inserts: every row).
	ModeOverwrite Mode = "Overwrite"
	// ModeAppend adds rows: the default of inserts.
	ModeAppend Mode = "Append"
	// ModeFail fails if the target is missing (drops, unsets) or exists
	// (property sets).
	ModeFail Mode = "Fail"
	// ModeSkip does nothing and succeeds.
	ModeSkip Mode = "Skip"
)

// Behavior says what dropping a namespace that is not empty does.
type Behavior string

// Behaviours.
const (
	// BehaviorRestrict fails if the namespace has children (the default).
	BehaviorRestrict Behavior = "Restrict"
	// BehaviorCascade drops its children too.
	BehaviorCascade Behavior = "Cascade"
)

// IndexType names a kind of index, as CreateIndex builds it and
// ListIndices reports it.
type IndexType string

// Index types.
const (
	IndexIVFFlat   IndexType = "IVF_FLAT"
	IndexIVFPQ     IndexType = "IVF_PQ"
	IndexIVFSQ     IndexType = "IVF_SQ"
	IndexIVFHNSWSQ IndexType = "IVF_HNSW_SQ"
	IndexIVFHNSWPQ IndexType = "IVF_HNSW_PQ"
	IndexBTree     IndexType = "BTREE"
	IndexBitmap    IndexType = "BITMAP"
	IndexLabelList IndexType = "LABEL_LIST"
	// IndexFTS is a full-text (inverted) index; servers report it as
	// INVERTED.
	IndexFTS IndexType = "FTS"
)

// DistanceType is the metric of a vector search or vector index.
type DistanceType string

// Distance types.
const (
	DistanceL2      DistanceType = "l2"
	DistanceCosine  DistanceType = "cosine"
	DistanceDot     DistanceType = "dot"
	DistanceHamming DistanceType = "hamming"
)

// TransactionStatus is the state of a transaction.
type TransactionStatus string

// Transaction states.
const (
	StatusQueued    TransactionStatus = "Queued"
	StatusRunning   TransactionStatus = "Running"
	StatusSucceeded TransactionStatus = "Succeeded"
	StatusFailed    TransactionStatus = "Failed"
	StatusCanceled  TransactionStatus = "Canceled"
)

// NamingScheme is how the final manifest file of a version is named.
type NamingScheme string

// Naming schemes.
const (
	// NamingV2 (the default) names manifests so that the newest sorts
	// first.
	NamingV2 NamingScheme = "V2"
	// NamingV1 names them by version number.
	NamingV1 NamingScheme = "V1"
)
