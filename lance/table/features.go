package table

// Features is a set of the format's feature flags. A manifest lists those
// a reader must implement to read the version and those a writer must
// implement to write the next one; a library that meets a flag it does
// not know refuses the dataset.
type Features uint64

// The feature flags of the format.
const (
	// FeatureDeletionFiles: fragments may have deletion files.
	FeatureDeletionFiles Features = 1
	// FeatureStableRowIDs: rows keep their ids across moves and updates;
	// fragments carry their row ids.
	FeatureStableRowIDs Features = 2
	// FeatureV2Files marked data files of format 2.x; no longer set, and
	// ignored.
	FeatureV2Files Features = 4
	// FeatureTableConfig: the manifest has table config.
	FeatureTableConfig Features = 8
	// FeatureBasePaths: files may live under other roots (branches,
	// shallow clones).
	FeatureBasePaths Features = 16
	// FeatureNoTransactionFiles: commits store their transaction inline in
	// the manifest only, not under _transactions/.
	FeatureNoTransactionFiles Features = 32
)

// knownFeatures are the flags this package implements, for reading and
// writing alike.
const knownFeatures = FeatureDeletionFiles | FeatureStableRowIDs | FeatureV2Files | FeatureTableConfig | FeatureBasePaths | FeatureNoTransactionFiles

// checkReadable returns an error wrapping ErrUnsupported when m needs a
// feature this package cannot read.
func checkReadable(m *Manifest) error {
	if unknown := m.ReaderFeatures &^ knownFeatures; unknown != 0 {
		return unsupportedf("version %d needs reader features %#x, which this library does not implement", m.Version, uint64(unknown))
	}
	return nil
}

// checkWritable returns an error wrapping ErrUnsupported when m needs a
// feature this package cannot write.
func checkWritable(m *Manifest) error {
	if unknown := m.WriterFeatures &^ knownFeatures; unknown != 0 {
		return unsupportedf("version %d needs writer features %#x, which this library does not implement", m.Version, uint64(unknown))
	}
	return nil
}

// setFeatures sets m's feature flags from its content, as Lance does on
// every commit: deletion files, stable row ids (which the dataset keeps
// once it has them), table config and base paths; a dataset whose writers
// skip transaction files keeps doing so. It returns an error wrapping
// ErrInvalid when some fragments carry row ids and others do not.
func setFeatures(m *Manifest, stableRowIDs, noTransactionFiles bool) error {
	var f Features
	for _, frag := range m.Fragments {
		if frag.Deletion != nil {
			f |= FeatureDeletionFiles
			break
		}
	}
	withIDs := 0
	for _, frag := range m.Fragments {
		if frag.RowIDs != nil {
			withIDs++
		}
	}
	if withIDs > 0 || stableRowIDs {
		if withIDs != len(m.Fragments) {
			return invalidf("%d of %d fragments have stable row ids; all must", withIDs, len(m.Fragments))
		}
		f |= FeatureStableRowIDs
	}
	if len(m.BasePaths) > 0 {
		f |= FeatureBasePaths
	}
	m.ReaderFeatures = f
	m.WriterFeatures = f
	if len(m.Config) > 0 {
		m.WriterFeatures |= FeatureTableConfig
	}
	if noTransactionFiles {
		m.WriterFeatures |= FeatureNoTransactionFiles
	}
	return nil
}
