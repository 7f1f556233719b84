package table

import (
	"encoding/binary"

	"google.golang.org/protobuf/proto"

	"github.com/lancens/lancens/lance/internal/pb/tablepb"
)

// A manifest file is a sequence of length-prefixed protocol buffer
// messages followed by a footer:
//
//	[u32 length, IndexSection]   when the version has indexes
//	[u32 length, Transaction]    the transaction that made the version
//	 u32 length, Manifest
//	 i64 position of the Manifest's length prefix
//	 u16 major, u16 minor         0 and 2
//	 "LANC"
//
// Integers are little endian. The Manifest records the positions of the
// optional sections (index_section, transaction_section), which may come
// in any order before it.

const (
	manifestMagic  = "LANC"
	footerLen      = 16
	manifestMajor  = 0
	manifestMinor  = 2
	lengthPrefixed = 4
)

// DefaultMaxManifestBytes is the largest manifest file read unless
// Options say otherwise (a manifest of a hundred thousand fragments is
// some tens of megabytes).
const DefaultMaxManifestBytes = 256 << 20

// EncodeManifest returns the manifest file of m: its index section, its
// inline transaction (m.Transaction, if any) and the manifest itself. It
// returns an error wrapping ErrInvalid when m.Transaction is not one this
// package writes.
func EncodeManifest(m *Manifest) ([]byte, error) {
	var buf []byte
	p := manifestToProto(m)
	if len(m.Indexes) > 0 {
		section := &tablepb.IndexSection{}
		for _, ix := range m.Indexes {
			section.Indices = append(section.Indices, indexToProto(ix))
		}
		p.IndexSection = proto.Uint64(uint64(len(buf)))
		var err error
		if buf, err = appendMessage(buf, section); err != nil {
			return nil, err
		}
	}
	if m.Transaction != nil {
		tp, err := transactionToProto(m.Transaction)
		if err != nil {
			return nil, err
		}
		p.TransactionSection = proto.Uint64(uint64(len(buf)))
		if buf, err = appendMessage(buf, tp); err != nil {
			return nil, err
		}
	}
	pos := len(buf)
	buf, err := appendMessage(buf, p)
	if err != nil {
		return nil, err
	}
	buf = binary.LittleEndian.AppendUint64(buf, uint64(pos))
	buf = binary.LittleEndian.AppendUint16(buf, manifestMajor)
	buf = binary.LittleEndian.AppendUint16(buf, manifestMinor)
	return append(buf, manifestMagic...), nil
}

// deterministic marshals maps in key order, so that a manifest encodes to
// the same bytes every time.
var deterministic = proto.MarshalOptions{Deterministic: true}

// appendMessage appends m, prefixed by its length, to buf.
func appendMessage(buf []byte, m proto.Message) ([]byte, error) {
	data, err := deterministic.Marshal(m)
	if err != nil {
		return nil, err
	}
	buf = binary.LittleEndian.AppendUint32(buf, uint32(len(data)))
	return append(buf, data...), nil
}

// DecodeManifest returns the manifest in a manifest file, with its index
// section and inline transaction. It returns an error wrapping ErrCorrupt
// when data is not a well-formed manifest file, and one wrapping
// ErrUnsupported for a version needing reader features this package does
// not implement.
func DecodeManifest(data []byte) (*Manifest, error) {
	n := len(data)
	if n < footerLen || string(data[n-4:]) != manifestMagic {
		return nil, corruptf("not a manifest file (no %q footer)", manifestMagic)
	}
	pos := binary.LittleEndian.Uint64(data[n-footerLen:])
	body := data[:n-footerLen]
	msg, end, err := sectionAt(body, pos, "manifest")
	if err != nil {
		return nil, err
	}
	if end != uint64(len(body)) {
		return nil, corruptf("manifest ends %d bytes before the footer", uint64(len(body))-end)
	}
	var p tablepb.Manifest
	if err := proto.Unmarshal(msg, &p); err != nil {
		return nil, corruptf("manifest: %v", err)
	}
	var section *tablepb.IndexSection
	if p.IndexSection != nil {
		raw, _, err := sectionAt(body[:pos], p.GetIndexSection(), "index section")
		if err != nil {
			return nil, err
		}
		section = &tablepb.IndexSection{}
		if err := proto.Unmarshal(raw, section); err != nil {
			return nil, corruptf("index section: %v", err)
		}
	}
	m, err := manifestFromProto(&p, section)
	if err != nil {
		return nil, err
	}
	if p.TransactionSection != nil {
		raw, _, err := sectionAt(body[:pos], p.GetTransactionSection(), "transaction section")
		if err != nil {
			return nil, err
		}
		if m.Transaction, err = DecodeTransaction(raw); err != nil {
			return nil, err
		}
	}
	if err := checkReadable(m); err != nil {
		return nil, err
	}
	return m, nil
}

// sectionAt returns the length-prefixed message at pos of body and where
// it ends, or an error wrapping ErrCorrupt naming what when it does not
// fit in body.
func sectionAt(body []byte, pos uint64, what string) ([]byte, uint64, error) {
	size := uint64(len(body))
	if pos > size || size-pos < lengthPrefixed {
		return nil, 0, corruptf("%s at %d is outside the %d bytes before the footer", what, pos, size)
	}
	n := uint64(binary.LittleEndian.Uint32(body[pos:]))
	start := pos + lengthPrefixed
	if n > size-start {
		return nil, 0, corruptf("%s of %d bytes at %d overruns the file", what, n, pos)
	}
	return body[start : start+n], start + n, nil
}
