// Package expr parses the SQL expressions that Lance and LanceDB clients send
// (filters, predicates, update values, projections and new-column
// definitions, in the Lance/DataFusion dialect) and compiles them to
// parameterised SQLite SQL.
//
// User text never reaches the SQL: every literal becomes a `?` placeholder
// with a bound argument, and every field reference becomes the SQL that the
// caller's Resolver supplies. Everything else in the output is fixed text of
// this package: operators, parentheses, SQL keywords and function names
// (SQLite's own and the lance_* functions that Register installs).
//
// The compiler builds a tree of the SQL it produces; Compile prints it as
// SQL text, and an evaluator computes it over columns in memory with
// SQLite's semantics, row for row the values the SQL computes (machine.go).
// EvalFilter runs that evaluator over columns held as Go slices.
//
// Errors are *store.Error values with code store.CodeInvalidInput, whose
// messages name the 1-based character position of the offending token
// (syntax) or expression (types); resolver errors pass through unchanged.
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
//   - An IN list of more than 256 constants is bound as one JSON array, so
//     lists of any length stay below SQLite's placeholder limit.
package expr
