package expr

import (
	"database/sql"
	"fmt"
	"math/rand"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	arrays "github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// benchRows is the size of the benchmark table.
const benchRows = 1_000_000

// benchTable is a million rows of (category int32 in 0..19, price float64
// with 5% NULLs, qty int64, name string, ts timestamp[us]) as an Arrow
// batch and as a SQLite table stored as the row store stores it, with the
// resolver of its columns.
type benchTable struct {
	batch arrow.RecordBatch
	db    *sql.DB
	res   testResolver
}

// newBenchTable builds the table, its SQLite file in dir.
func newBenchTable(dir string) (*benchTable, error) {
	if err := Register(); err != nil {
		return nil, err
	}
	{
		r := rand.New(rand.NewSource(1))
		mem := memory.DefaultAllocator
		cat, price := arrays.NewInt32Builder(mem), arrays.NewFloat64Builder(mem)
		qty, name := arrays.NewInt64Builder(mem), arrays.NewStringBuilder(mem)
		ts := arrays.NewTimestampBuilder(mem, &arrow.TimestampType{Unit: arrow.Microsecond})
		rows := make([][]any, benchRows)
		start := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC).UnixMicro()
		for i := range benchRows {
			c, p, q, n := int32(r.Intn(20)), r.Float64()*1000, r.Int63n(1000), fmt.Sprintf("item-%d", r.Intn(10000))
			t := start + r.Int63n(366*86400e6)
			cat.Append(c)
			qty.Append(q)
			name.Append(n)
			ts.Append(arrow.Timestamp(t))
			var pv any = p
			if r.Intn(20) == 0 {
				price.AppendNull()
				pv = nil
			} else {
				price.Append(p)
			}
			rows[i] = []any{int64(c), pv, q, n, t}
		}
		schema := arrow.NewSchema([]arrow.Field{
			{Name: "category", Type: arrow.PrimitiveTypes.Int32, Nullable: true},
			{Name: "price", Type: arrow.PrimitiveTypes.Float64, Nullable: true},
			{Name: "qty", Type: arrow.PrimitiveTypes.Int64, Nullable: true},
			{Name: "name", Type: arrow.BinaryTypes.String, Nullable: true},
			{Name: "ts", Type: &arrow.TimestampType{Unit: arrow.Microsecond}, Nullable: true},
		}, nil)
		arrs := []arrow.Array{cat.NewArray(), price.NewArray(), qty.NewArray(), name.NewArray(), ts.NewArray()}
		bt := &benchTable{batch: arrays.NewRecordBatch(schema, arrs, benchRows), res: testResolver{}}
		for _, f := range schema.Fields() {
			bt.res[f.Name] = dbColumn{SQL: `t."` + f.Name + `"`, Type: TypeOf(f.Type)}
		}
		var err error
		if bt.db, err = sql.Open("sqlite", filepath.Join(dir, "bench.db")); err != nil {
			return nil, err
		}
		bt.db.SetMaxOpenConns(1)
		if _, err := bt.db.Exec(`CREATE TABLE t ("category" INTEGER, "price" REAL, "qty" INTEGER, "name" TEXT, "ts" INTEGER)`); err != nil {
			return nil, err
		}
		tx, err := bt.db.Begin()
		if err != nil {
			return nil, err
		}
		const per = 200
		stmt, err := tx.Prepare(`INSERT INTO t VALUES ` + strings.TrimSuffix(strings.Repeat("(?,?,?,?,?),", per), ","))
		if err != nil {
			return nil, err
		}
		defer stmt.Close()
		for i := 0; i < benchRows; i += per {
			var args []any
			for _, row := range rows[i : i+per] {
				args = append(args, row...)
			}
			if _, err := stmt.Exec(args...); err != nil {
				return nil, err
			}
		}
		return bt, tx.Commit()
	}
}

// BenchmarkArrowVsSQLite runs filters and projections over a million rows
// with the evaluator over Arrow and, in the same iterations, with SQLite
// running the compiled SQL over the same rows, and reports both per row
// and the evaluator's speed-up (x-sqlite).
func BenchmarkArrowVsSQLite(b *testing.B) {
	bt, err := newBenchTable(b.TempDir())
	if err != nil {
		b.Fatal(err)
	}
	defer bt.db.Close()
	b.Run("filter", func(b *testing.B) { benchFilters(b, bt) })
	b.Run("project", func(b *testing.B) { benchProjections(b, bt) })
}

// benchFilters evaluates filters both ways; SQLite counts the matches,
// its cheapest way to apply a filter.
func benchFilters(b *testing.B, bt *benchTable) {
	binder := SchemaBinder(bt.batch.Schema())
	for _, src := range []string{
		"category = 7 AND price > 500",
		"category IN (1, 3, 5, 7, 9, 11, 13, 15, 17)",
		"price BETWEEN 100 AND 200 OR price IS NULL",
		"name = 'item-42'",
		"name LIKE 'item-42%'",
		"ts > TIMESTAMP '2024-06-01 00:00:00'",
		"category * 2 + 1 > price / 100",
	} {
		e, err := Parse(src)
		if err != nil {
			b.Fatal(err)
		}
		p, err := PlanFilter(e, binder)
		if err != nil {
			b.Fatal(err)
		}
		c, err := compileFilterSQL(e, bt.res)
		if err != nil {
			b.Fatal(err)
		}
		b.Run(src, func(b *testing.B) {
			var ours, theirs time.Duration
			for b.Loop() {
				t0 := time.Now()
				var rows []uint64
				for range oursPerIteration {
					var err error
					if rows, err = p.Filter(bt.batch); err != nil {
						b.Fatal(err)
					}
				}
				t1 := time.Now()
				var n int
				if err := bt.db.QueryRow(`SELECT count(*) FROM t WHERE `+c.SQL, c.Args...).Scan(&n); err != nil {
					b.Fatal(err)
				}
				theirs += time.Since(t1)
				ours += t1.Sub(t0)
				if got := len(bitmapIDs(rows, benchRows)); got != n {
					b.Fatalf("%s: %d rows, SQLite counts %d", src, got, n)
				}
			}
			reportRatio(b, ours, theirs)
		})
	}
}

// benchProjections computes values both ways: the evaluator into an
// Arrow array, SQLite read row by row through database/sql, as the row
// store reads a projection.
func benchProjections(b *testing.B, bt *benchTable) {
	binder := SchemaBinder(bt.batch.Schema())
	for _, src := range []string{
		"category * 2 + price / 100",
		"qty * 3 - category",
		"price * 1.1 + qty",
		"CASE WHEN price > 500 THEN qty ELSE 0 END",
		"lower(name)",
	} {
		e, err := Parse(src)
		if err != nil {
			b.Fatal(err)
		}
		p, err := PlanValue(e, binder)
		if err != nil {
			b.Fatal(err)
		}
		c, err := compileSQL(e, bt.res)
		if err != nil {
			b.Fatal(err)
		}
		b.Run(src, func(b *testing.B) {
			var ours, theirs time.Duration
			for b.Loop() {
				t0 := time.Now()
				for range oursPerIteration {
					arr, err := p.Value(memory.DefaultAllocator, bt.batch)
					if err != nil {
						b.Fatal(err)
					}
					arr.Release()
				}
				t1 := time.Now()
				rows, err := bt.db.Query(`SELECT `+c.SQL+` FROM t`, c.Args...)
				if err != nil {
					b.Fatal(err)
				}
				var v any
				for rows.Next() {
					if err := rows.Scan(&v); err != nil {
						b.Fatal(err)
					}
				}
				if err := rows.Err(); err != nil {
					b.Fatal(err)
				}
				rows.Close()
				theirs += time.Since(t1)
				ours += t1.Sub(t0)
			}
			reportRatio(b, ours, theirs)
		})
	}
}

// oursPerIteration is how many times an iteration runs the evaluator for
// SQLite's once: the evaluator is far faster, and more samples of it damp
// the noise of a shared machine.
const oursPerIteration = 5

// reportRatio reports the evaluator's and SQLite's time per row and the
// evaluator's speed-up over SQLite, measured in the same iterations.
func reportRatio(b *testing.B, ours, theirs time.Duration) {
	perRow := float64(b.N) * benchRows
	oursPerRow := float64(ours.Nanoseconds()) / perRow / oursPerIteration
	theirsPerRow := float64(theirs.Nanoseconds()) / perRow
	b.ReportMetric(oursPerRow, "ns/row")
	b.ReportMetric(theirsPerRow, "sqlite-ns/row")
	b.ReportMetric(theirsPerRow/oursPerRow, "x-sqlite")
}
