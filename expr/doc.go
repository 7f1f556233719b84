// Package expr parses the SQL expressions that Lance and LanceDB clients send
// (filters, predicates, update values, projections and new-column
// definitions, in the Lance/DataFusion dialect), type-checks them and
// evaluates them over Arrow record batches (Plan*) and over columns held
// as Go slices (EvalFilter).
//
// The compiler resolves field paths, checks types and builds the SQLite
// expression an expression stands for, as a tree of SQL constructs
// (sqlnode.go); the evaluator (machine.go) computes that tree over
// columns with SQLite's semantics, conversion for conversion. The
// semantics are SQLite's because the tables of the first releases were
// SQLite row tables, and the filters users wrote against them keep their
// meaning. The package's tests render the tree as SQL and run it in
// SQLite, the oracle the evaluator must agree with; Register installs the
// lance_* functions that SQL calls (and that the indexes of an earlier
// release's row tables call).
//
// # Evaluating over Arrow
//
// A Binder maps field paths to the columns of the batches a Program runs
// on: SchemaBinder for one table's batches (struct fields by path; an
// engine that filters on _rowid includes it as a column), MergeBinder for
// a merge_insert condition over a target batch and the source batch
// matched with it row for row ("target.x" and bare paths read the target,
// "source.x" the source). Then, per use:
//
//   - filters (query, count, delete and update predicates, merge
//     conditions): PlanFilter, then Program.Filter per batch, which
//     returns the bitmap of the rows where the filter is TRUE;
//   - projections with aliases, add-column and computed-column
//     expressions, backfills: PlanValue, then Program.Value per batch,
//     an array of ArrowType(Type()) (the type of the new column);
//   - update values (values and values_sql): PlanValue, with
//     CheckAssignable on Type(); the value's Arrow type is the canonical
//     one (int64, float64, a zone-less timestamp …) and narrowing it to
//     the column's physical type is the caller's;
//   - order by: PlanOrder with keys (Path builds a field reference), then
//     Order.Keys per batch and CompareRows to sort and merge the rows of
//     several batches; the caller breaks ties by row order.
//
// Plan* return syntax and type errors with code 13 and positions, and the
// binder's errors, such as 12 for an unknown column, unchanged. Running
// returns a code-13 error for a value SQLite would fail on, on a row
// SQLite would evaluate: text that does not convert, a malformed regular
// expression, abs of the smallest integer. Programs and Orders are safe
// for concurrent use; they keep no reference to the batches they run on.
//
// Errors are *store.Error values with code store.CodeInvalidInput, whose
// messages name the 1-based character position of the offending token
// (syntax) or expression (types); binder errors pass through unchanged.
//
// Semantics chosen where SQLite and DataFusion differ:
//
//   - LIKE is case-sensitive and ILIKE is not (Unicode simple case folding);
//     both use `\` as the escape character unless ESCAPE names another.
//   - regexp_match and regexp_like both return a boolean: true when the RE2
//     pattern matches anywhere in the string (DataFusion's regexp_match
//     returns the capture groups; as a filter only "matched" is useful).
//     An optional third argument holds flags: i, m, s, U, and c
//     (case-sensitive, the default).
//   - concat skips NULL arguments (all NULL gives the empty string), while ||
//     gives NULL when either side is NULL. Both render non-string values as
//     CAST to string would.
//   - Integer division truncates toward zero; division or modulo by zero
//     gives NULL (SQLite) instead of an error.
//   - Arithmetic and numeric functions on decimals compute in float64 and
//     return a float (abs and unary minus keep integer-stored decimals).
//     Comparisons of integer-stored decimals with each other at one scale,
//     or with literals that the decimal's scale represents exactly, compare
//     the unscaled integers; all other decimal comparisons use float64.
//   - A string literal compared with (or IN/BETWEEN against) a date, time or
//     timestamp is parsed as that type; DATE and TIMESTAMP literals are
//     converted to the unit of the value they are compared with when that is
//     exact, and otherwise the other side is converted to the finer unit.
//     Timestamp text without an offset is UTC.
//   - TIMESTAMP literals have nanosecond unit (microseconds when out of the
//     nanosecond range); CAST(x AS TIMESTAMP) gives nanoseconds and
//     TIMESTAMP(p) the unit of p fractional digits (0, 3, 6 or 9).
//   - Comparing a string with a number is an error rather than a coercion.
//   - Lists are JSON arrays whose decimal elements are numbers holding the
//     value (not the unscaled integer), booleans true/false and binary
//     base64 strings; array literals ([a, b] or make_array) compile to the
//     same encoding. Only IS [NOT] NULL applies to lists as a whole, and to
//     structs, maps and vectors.
//   - An IN list of more than 256 constants is one JSON array constant
//     (read with json_each), so that its SQL binds one argument however
//     long the list.
//
// What follows from computing SQLite's SQL, over Arrow as in SQLite:
//
//   - Values are held as a SQLite row table would store them: uint64 values above
//     the int64 range wrap to negative integers, NaN is NULL, a negative
//     zero is zero, decimals of precision above 18 are text (and sort as
//     text), lists and maps are their JSON (so a float32 element compares
//     as its shortest decimal form).
//   - An integer +, -, * or / that overflows gives a REAL (which reads
//     back into an integer column truncated by Go's conversion), as does
//     the negation of the smallest integer; abs of it fails.
//   - Numbers become text, and text numbers, by SQLite's own algorithms
//     (sqlnum.go: 1/3 renders as 0.33333333333333332), round() rounds
//     their way, and power() is the C library's pow.
//   - A filter is evaluated as SQLite evaluates a WHERE clause: its AND
//     terms in order on the rows the earlier ones kept (terms that read no
//     column first, once), AND and OR short-circuiting where the left
//     operand decides, CASE branches only on the rows that take them,
//     coalesce arguments only where the earlier ones are NULL, IN elements
//     only where no earlier one matched. Values (projections) evaluate
//     AND and OR fully, as SQLite does in a SELECT list. So a CAST guarded
//     by CASE, AND or coalesce fails only on rows that reach it. SQLite
//     may also fail on constant terms its optimizer propagates or hoists
//     (i = 5 AND CAST(i || 'x' AS INT) = 1 with no row where i = 5), and
//     on a join's terms placed by table; the evaluator does not.
package expr
