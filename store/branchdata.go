package store

// BranchedData serves the rows of managed tables on their branches.
type BranchedData interface {
	// OnBranch returns the data operations of managed tables on branch
	// (as NormalizeBranch returns it; "" is main). Reads see the branch's
	// versions; writes make new versions of the branch and leave every
	// other branch as it was. Besides their usual errors, its operations
	// return TableBranchNotFound (22) for a table without the branch and
	// InvalidTableState (19) for a table whose rows lancens does not keep.
	// CreateTable, Backfill and QueueBackfill act on main whatever the
	// branch: a branch is made by CreateBranch, and backfills follow main.
	OnBranch(branch string) ManagedData
}
