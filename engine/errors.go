package engine

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/lancens/lancens/lance/blob"
	"github.com/lancens/lancens/lance/file"
	"github.com/lancens/lancens/lance/schema"
	"github.com/lancens/lancens/lance/table"
	"github.com/lancens/lancens/store"
)

// dataError turns an error of the Lance packages, met while working on
// table id, into the error for the caller:
//
//   - errors that already carry a code, and a context's end, pass through;
//   - a conflict with a concurrent commit is ConcurrentModification (14);
//   - a malformed or unreadable dataset (a manifest, a deletion or data
//     file that is corrupt, or uses a feature lancens does not implement)
//     is InvalidTableState (19), naming the table;
//   - a type Lance cannot store is TableSchemaValidationError (20), and a
//     read that would need more memory than allowed InvalidInput (13);
//   - the failure of an object store is ServiceUnavailable (17), anything
//     else Internal (18), its details kept for the log.
func dataError(id []string, err error) error {
	var se *store.Error
	var ce *table.ConflictError
	switch {
	case err == nil:
		return nil
	case errors.As(err, &se), errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		return err
	case errors.As(err, &ce):
		return &store.Error{Code: store.CodeConcurrentModification, Cause: err, Message: fmt.Sprintf(
			"table %s changed while this write was being committed (%s against %s); retry it", displayID(id), ce.Operation, ce.Other)}
	case errors.Is(err, table.ErrConflict), errors.Is(err, table.ErrVersionExists):
		return &store.Error{Code: store.CodeConcurrentModification, Cause: err, Message: fmt.Sprintf(
			"table %s changed while this write was being committed; retry it", displayID(id))}
	case errors.Is(err, schema.ErrUnsupportedType):
		return &store.Error{Code: store.CodeTableSchemaValidationError, Cause: err, Message: trimSentinel(err)}
	case errors.Is(err, file.ErrBudget):
		return &store.Error{Code: store.CodeInvalidInput, Cause: err, Message: fmt.Sprintf(
			"reading table %s would take more memory than one read may use: %v", displayID(id), err)}
	case errors.Is(err, table.ErrCorrupt), errors.Is(err, table.ErrUnsupported),
		errors.Is(err, file.ErrCorrupt), errors.Is(err, file.ErrUnsupported):
		return &store.Error{Code: store.CodeInvalidTableState, Cause: err, Message: fmt.Sprintf(
			"the Lance dataset of table %s cannot be used: %v", displayID(id), err)}
	case errors.Is(err, blob.ErrNotFound):
		return &store.Error{Code: store.CodeInvalidTableState, Cause: err, Message: fmt.Sprintf(
			"a file of the Lance dataset of table %s is missing: %v", displayID(id), err)}
	}
	return &store.Error{Code: store.CodeInternal, Message: "reading or writing the table's files failed", Cause: err}
}

// trimSentinel returns the message of err without the generic words of the
// sentinel it wraps.
func trimSentinel(err error) string {
	msg := err.Error()
	for _, s := range []error{schema.ErrUnsupportedType, schema.ErrInvalid} {
		msg = strings.TrimPrefix(msg, s.Error()+": ")
	}
	return msg
}

// displayID writes a table identifier for messages.
func displayID(id []string) string {
	return strings.Join(id, ".")
}

// notDataTable is the error of an operation on rows of a table that has
// none lancens can reach.
func notDataTable(t *store.Table, why string) error {
	return store.Errorf(store.CodeInvalidTableState, "table %s %s", displayID(t.ID), why)
}
