package store

import (
	"fmt"
	"strconv"
	"strings"
)

// ValidateID checks every name of identifier id (see ValidateName); kind
// says what it identifies in the message. It returns InvalidInput (13).
func ValidateID(kind string, id []string) error {
	for _, name := range id {
		if err := ValidateName(kind, name); err != nil {
			return err
		}
	}
	return nil
}

// ValidateTableID checks a table identifier: at least one name, each
// valid. It returns InvalidInput (13) otherwise.
func ValidateTableID(id []string) error {
	if len(id) == 0 {
		return Errorf(CodeInvalidInput, "a table identifier needs at least one name")
	}
	return ValidateID("table", id)
}

// ValidateBatch rejects a malformed batch before anything is applied: every
// operation must set exactly one kind and name a table, and no table may be
// declared twice nor one version committed twice. It returns InvalidInput
// (13) naming the operation.
func ValidateBatch(ops []BatchOperation) error {
	seen := map[string]int{}
	for i, op := range ops {
		kinds := 0
		for _, set := range []bool{op.Declare != nil, op.CommitVersion != nil, op.DeleteVersions != nil, op.Deregister} {
			if set {
				kinds++
			}
		}
		if kinds != 1 {
			return Errorf(CodeInvalidInput, "operation %d must set exactly one operation, not %d", i, kinds)
		}
		if err := ValidateTableID(op.ID); err != nil {
			return fmt.Errorf("operation %d: %w", i, err)
		}
		key := ""
		switch {
		case op.Declare != nil:
			key = "declare"
		case op.CommitVersion != nil:
			key = "version:" + op.CommitVersion.Branch + ":" + strconv.FormatInt(op.CommitVersion.Version, 10)
		default:
			continue
		}
		key += "\x00" + strings.Join(op.ID, "\x00")
		if j, dup := seen[key]; dup {
			return Errorf(CodeInvalidInput, "operations %d and %d do the same thing to table %s", j, i, strings.Join(op.ID, "$"))
		}
		seen[key] = i
	}
	return nil
}

// Apply applies one action to t in place. It returns
// ConcurrentModification (14) when a Fail-mode set meets an existing key,
// InvalidInput (13) when a Fail-mode unset meets a missing key, an empty
// key is set, or the action sets no change.
func (t *Transaction) Apply(a TransactionAction) error {
	switch {
	case a.SetStatus != nil:
		t.Status = *a.SetStatus
	case a.SetProperty != nil:
		p := a.SetProperty
		if p.Key == "" {
			return Errorf(CodeInvalidInput, "property key must not be empty")
		}
		if _, exists := t.Properties[p.Key]; exists {
			switch p.Mode {
			case PropertyFail:
				return Errorf(CodeConcurrentModification, "property %q is already set", p.Key)
			case PropertySkip:
				return nil
			}
		}
		if t.Properties == nil {
			t.Properties = map[string]string{}
		}
		t.Properties[p.Key] = p.Value
	case a.Unset != nil:
		if _, exists := t.Properties[a.Unset.Key]; !exists && a.Unset.Mode == PropertyFail {
			return Errorf(CodeInvalidInput, "property %q is not set", a.Unset.Key)
		}
		delete(t.Properties, a.Unset.Key)
	default:
		return Errorf(CodeInvalidInput, "an action must set exactly one of setStatusAction, setPropertyAction, unsetPropertyAction")
	}
	return nil
}
