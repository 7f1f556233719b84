package table

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/lancens/lancens/lance/schema"
)

// TestOpenVersion opens a version by number without asking which is the
// newest, and WithOptions keeps the version while swapping the options.
func TestOpenVersion(t *testing.T) {
	ctx := context.Background()
	d, root := newTestDataset(t, CreateOptions{})
	if _, err := d.Append(ctx, []*Fragment{frag("b", 3, 0, 1)}); err != nil {
		t.Fatal(err)
	}
	v1, err := OpenVersion(ctx, root, "", 1, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if v1.Version() != 1 || v1.Manifest().Rows() != 10 {
		t.Fatalf("version 1: version %d, %d rows", v1.Version(), v1.Manifest().Rows())
	}
	if _, err := OpenVersion(ctx, root, "", 3, Options{}); !errors.Is(err, ErrNotFound) {
		t.Fatalf("version 3: %v, want ErrNotFound", err)
	}
	stamp := time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)
	w := v1.WithOptions(Options{Now: func() time.Time { return stamp }})
	if w.Manifest() != v1.Manifest() {
		t.Fatal("WithOptions read the manifest again")
	}
	// A write from version 1 through the new options is rebased on version 2.
	d3, err := w.Append(ctx, []*Fragment{frag("c", 2, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	if d3.Version() != 3 || d3.Manifest().Rows() != 15 || !d3.Manifest().Timestamp.Equal(stamp) {
		t.Fatalf("append through WithOptions: version %d, %d rows, at %v", d3.Version(), d3.Manifest().Rows(), d3.Manifest().Timestamp)
	}
}

// TestFileHoldingAndMaxFieldID finds the file holding a field, the
// newest when several do, and the largest id files still use after a
// drop.
func TestFileHoldingAndMaxFieldID(t *testing.T) {
	ctx := context.Background()
	f := frag("a", 10, 0, 1)
	d, _ := newTestDataset(t, CreateOptions{}, f)
	m := d.Manifest()
	id, _ := m.Schema.Field("id")
	got, err := m.Fragments[0].FileHolding(id)
	if err != nil || got == nil || got.Path != "a.lance" {
		t.Fatalf("file holding id: %v, %v", got, err)
	}
	missing := &schema.Field{Name: "x", ID: 7, LogicalType: "int64"}
	if got, err := m.Fragments[0].FileHolding(missing); err != nil || got != nil {
		t.Fatalf("file holding a field no file has: %v, %v", got, err)
	}
	d2, err := d.DropColumns(ctx, "name")
	if err != nil {
		t.Fatal(err)
	}
	if got := d2.Manifest().MaxFieldID(); got != 1 {
		t.Fatalf("max field id after dropping name: %d, want 1 (its data file still holds it)", got)
	}
}
