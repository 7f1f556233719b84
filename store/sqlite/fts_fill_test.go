package sqlite

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/lancens/lancens/fts"
	"github.com/lancens/lancens/store"
)

// TestTextIndexFillMatchesTrigger builds full-text indexes over a table of
// several fill chunks (with nulls, empty and non-ASCII text, and row
// versions an update retired) and checks that the terms table holds, for
// every non-null value of every row version and nothing else, what the
// trigger that keeps it afterwards would have written.
func TestTextIndexFillMatchesTrigger(t *testing.T) {
	const rows = 2*textFillRows + 3*maxStatementRows + 17
	texts := []string{"The Quick brown foxes were running", "", "Crème brûlée à la carte", "x y z 42 and 7",
		"searching VECTORS in tables", "  spaced   out  ", "naïve café résumé"}
	schema := arrow.NewSchema([]arrow.Field{{Name: "id", Type: arrow.PrimitiveTypes.Int64},
		{Name: "text", Type: arrow.BinaryTypes.String, Nullable: true}}, nil)
	b := array.NewRecordBuilder(memory.DefaultAllocator, schema)
	for i := range rows {
		b.Field(0).(*array.Int64Builder).Append(int64(i))
		if i%11 == 0 {
			b.Field(1).AppendNull()
			continue
		}
		b.Field(1).(*array.StringBuilder).Append(fmt.Sprintf("%s %d", texts[i%len(texts)], i))
	}
	rec := b.NewRecordBatch()
	no := false
	for _, tc := range []struct {
		name   string
		params store.TextIndexParams
	}{
		{"default", store.TextIndexParams{}},
		{"raw", store.TextIndexParams{BaseTokenizer: "raw", LowerCase: &no}},
		{"whitespace", store.TextIndexParams{BaseTokenizer: "whitespace", Stem: &no, RemoveStopWords: &no}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := t.Context()
			db, err := Open(ctx, filepath.Join(t.TempDir(), "f.db"), Options{})
			if err != nil {
				t.Fatal(err)
			}
			defer db.Close()
			id := []string{"t"}
			if _, _, err := db.CreateTable(ctx, id, store.NewTable{Data: store.NewData(schema, rec)}); err != nil {
				t.Fatal(err)
			}
			if _, err := db.Update(ctx, id, []store.ColumnUpdate{{Path: "text", Expr: "text || ' Updated'"}}, "id % 7 = 0"); err != nil {
				t.Fatal(err)
			}
			if _, err := db.CreateIndex(ctx, id, store.IndexSpec{Column: "text", Type: store.IndexInverted, Text: tc.params}); err != nil {
				t.Fatal(err)
			}
			a, err := fts.NewAnalyzer(tc.params)
			if err != nil {
				t.Fatal(err)
			}
			cfg, err := json.Marshal(a)
			if err != nil {
				t.Fatal(err)
			}
			err = db.read(ctx, func(tx *Tx) error {
				tr, err := findManaged(ctx, tx, id)
				if err != nil {
					return err
				}
				idx, err := listIndexRows(ctx, tx, tr)
				if err != nil || len(idx) != 1 {
					return fmt.Errorf("indexes %v: %v", idx, err)
				}
				terms, col := sqlIndexName(tr, idx[0]), quoteColumn(idx[0].physical)
				var values, stored, wrong int64
				q := fmt.Sprintf(`SELECT (SELECT count(*) FROM %[1]s WHERE %[2]s IS NOT NULL), (SELECT count(*) FROM %[3]s),
					(SELECT count(*) FROM %[1]s r JOIN %[3]s x ON x.rowid = r._rowid
					 WHERE r.%[2]s IS NULL OR x.terms IS NOT lance_fts_terms(r.%[2]s, ?))`, dataTable(tr), col, terms)
				if err := tx.QueryRow(ctx, q, string(cfg)).Scan(&values, &stored, &wrong); err != nil {
					return err
				}
				if want := int64(rows - (rows+10)/11 + (rows+6)/7 - (rows+76)/77); values != want || stored != values || wrong != 0 {
					t.Errorf("%d non-null values (want %d), %d terms rows, %d differ from the trigger's", values, want, stored, wrong)
				}
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
		})
	}
}
