package table

// conflict decides whether transaction t, computed against an older
// version, still applies on top of other, committed meanwhile as version
// v, following Lance's rules for the operations this package writes:
//
//   - Appends and reservations of fragment ids go on top of anything that
//     leaves the schema and the fragments' meaning alone; an overwrite or
//     a restore meanwhile makes them incompatible.
//   - Deletes, updates and compactions touch given fragments: any other change to
//     those fragments (a delete, an update, a compaction, a replacement of
//     their data) is a retryable conflict, as is a merge, which rewrites
//     every fragment. Deletions are not merged into each other: two
//     deletes of the same fragment conflict.
//   - Merges (added columns) replace every fragment, so any change to
//     fragments or schema meanwhile is a conflict.
//   - Projections (dropped or renamed columns) conflict with other schema
//     changes.
//   - Overwrites and restores win over anything except a concurrent
//     change of the same config keys.
//
// It returns nil when t applies, and a *ConflictError otherwise.
// Operations this package does not know (OtherOperation) conflict with
// everything but overwrites and restores, retryably.
func conflict(t, other *Transaction, v uint64) error {
	retry := &ConflictError{Version: v, Operation: t.Operation.Name(), Other: other.Operation.Name(), Retryable: true}
	incompatible := &ConflictError{Version: v, Operation: t.Operation.Name(), Other: other.Operation.Name()}

	switch other.Operation.(type) {
	case *Overwrite, *Restore:
		switch mine := t.Operation.(type) {
		case *Restore:
			return nil
		case *Overwrite:
			if o, ok := other.Operation.(*Overwrite); ok && sharesKey(mine.Config, o.Config) {
				return incompatible
			}
			return nil
		}
		return incompatible
	case *Clone:
		return nil
	case *OtherOperation:
		switch t.Operation.(type) {
		case *Overwrite, *Restore:
			return nil
		}
		return retry
	}

	switch mine := t.Operation.(type) {
	case *Append, *ReserveFragments:
		return nil

	case *Overwrite:
		if uc, ok := other.Operation.(*UpdateConfig); ok && (uc.ReplacesConfig || sharesKeyList(mine.Config, uc.ConfigKeys)) {
			return incompatible
		}
		return nil

	case *Restore:
		return nil

	case *Delete:
		if touches(other.Operation, idSet(mine.Removed, fragmentIDs(mine.Updated))) {
			return retry
		}
		return nil

	case *Update:
		if touches(other.Operation, idSet(mine.Removed, fragmentIDs(mine.Updated))) {
			return retry
		}
		return nil

	case *Rewrite:
		var old []uint64
		for _, g := range mine.Groups {
			old = append(old, fragmentIDs(g.Old)...)
		}
		if touches(other.Operation, idSet(old)) {
			return retry
		}
		return nil

	case *Merge:
		switch other.Operation.(type) {
		case *CreateIndex, *ReserveFragments, *UpdateConfig:
			return nil
		case *Project:
			return incompatible
		}
		return retry

	case *Project:
		switch other.Operation.(type) {
		case *Merge, *Project:
			return retry
		}
		return nil
	}
	return retry
}

// touches reports whether op changes, replaces or removes any of the
// fragments in ids (every fragment, for a merge).
func touches(op Operation, ids map[uint64]bool) bool {
	hit := func(list []uint64) bool {
		for _, id := range list {
			if ids[id] {
				return true
			}
		}
		return false
	}
	switch o := op.(type) {
	case *Delete:
		return hit(o.Removed) || hit(fragmentIDs(o.Updated))
	case *Update:
		return hit(o.Removed) || hit(fragmentIDs(o.Updated))
	case *Rewrite:
		for _, g := range o.Groups {
			if hit(fragmentIDs(g.Old)) {
				return true
			}
		}
	case *DataReplacement:
		return hit(o.Fragments)
	case *Merge:
		return true
	}
	return false
}

func idSet(lists ...[]uint64) map[uint64]bool {
	s := map[uint64]bool{}
	for _, l := range lists {
		for _, id := range l {
			s[id] = true
		}
	}
	return s
}

func sharesKey(a, b map[string]string) bool {
	for k := range a {
		if _, ok := b[k]; ok {
			return true
		}
	}
	return false
}

func sharesKeyList(a map[string]string, keys []string) bool {
	for _, k := range keys {
		if _, ok := a[k]; ok {
			return true
		}
	}
	return false
}
