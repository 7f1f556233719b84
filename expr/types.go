package expr

import "fmt"

// Kind is the kind of a value; the physical SQLite storage of each kind is
// fixed by the server (see Type).
type Kind int

// The kinds of values.
const (
	KindNull      Kind = iota // the type of a NULL literal
	KindBool                  // INTEGER 0/1
	KindInt                   // INTEGER
	KindFloat                 // REAL
	KindDecimal               // INTEGER unscaled value when Precision ≤ 18, else TEXT
	KindString                // TEXT
	KindBinary                // BLOB
	KindDate32                // INTEGER days since 1970-01-01
	KindDate64                // INTEGER milliseconds since the epoch
	KindTimestamp             // INTEGER count of Unit since the epoch, UTC
	KindTime                  // INTEGER count of Unit since midnight
	KindDuration              // INTEGER count of Unit
	KindList                  // TEXT JSON array
	KindStruct                // INTEGER, NULL when the struct is null
	KindMap                   // TEXT JSON
	KindVector                // BLOB
)

var kindNames = [...]string{
	"null", "boolean", "integer", "float", "decimal", "string", "binary",
	"date32", "date64", "timestamp", "time", "duration", "list", "struct", "map", "vector",
}

// String returns the kind's name as used in error messages.
func (k Kind) String() string {
	if k >= 0 && int(k) < len(kindNames) {
		return kindNames[k]
	}
	return fmt.Sprintf("Kind(%d)", int(k))
}

// TimeUnit is the resolution of a timestamp, time or duration.
type TimeUnit int

// The time units.
const (
	Second TimeUnit = iota
	Milli
	Micro
	Nano
)

// perSecond returns how many u make one second.
func (u TimeUnit) perSecond() int64 {
	switch u {
	case Milli:
		return 1e3
	case Micro:
		return 1e6
	case Nano:
		return 1e9
	}
	return 1
}

// Type describes a value.
type Type struct {
	Kind      Kind
	Unit      TimeUnit // KindTimestamp, KindTime, KindDuration; KindDate64 is always Milli
	Scale     int      // KindDecimal
	Precision int      // KindDecimal
	Elem      *Type    // element of KindList and KindVector
}

// maxIntPrecision is the largest decimal precision stored as an INTEGER.
const maxIntPrecision = 18

// String returns a readable name of t, for error messages.
func (t Type) String() string {
	switch t.Kind {
	case KindDecimal:
		return fmt.Sprintf("decimal(%d,%d)", t.Precision, t.Scale)
	case KindList:
		if t.Elem != nil {
			return "list<" + t.Elem.String() + ">"
		}
	}
	return t.Kind.String()
}

// textDecimal reports whether t is a decimal stored as TEXT.
func (t Type) textDecimal() bool {
	return t.Kind == KindDecimal && t.Precision > maxIntPrecision
}

// sameType reports whether values of a and b are stored and interpreted the
// same way, so no conversion is needed between them.
func sameType(a, b Type) bool {
	if a.Kind != b.Kind {
		return false
	}
	switch a.Kind {
	case KindTimestamp, KindTime, KindDuration:
		return a.Unit == b.Unit
	case KindDecimal:
		return a.Scale == b.Scale && a.textDecimal() == b.textDecimal()
	case KindList, KindVector:
		if a.Elem == nil || b.Elem == nil {
			return a.Elem == b.Elem
		}
		return sameType(*a.Elem, *b.Elem)
	}
	return true
}
