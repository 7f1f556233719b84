// Reads tables with the LanceDB Node SDK and dumps their rows, for
// lance/file's Go tests to compare with what they wrote.
//
//   node readback.mjs <db-dir> <spec.json>
//
// spec.json: [{table, select: {column: sql}}]; each table's rows (the
// selected expressions, in fragment order) go to <db-dir>/<table>.readback.arrow
// as an Arrow IPC file, with the row count Lance reports.
import { readFileSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { join } from "node:path";
import * as lancedb from "@lancedb/lancedb";

// The SDK's tables are made by apache-arrow's CommonJS build; only that
// build's writer recognises them.
const arrow = createRequire(import.meta.url)("apache-arrow");

const [dir, specPath] = process.argv.slice(2);
if (!dir || !specPath) {
  console.error("usage: node readback.mjs <db-dir> <spec.json>");
  process.exit(2);
}
const db = await lancedb.connect(dir);
for (const { table, select } of JSON.parse(readFileSync(specPath, "utf8"))) {
  const t = await db.openTable(table);
  const rows = await t.query().select(select).toArrow();
  const count = await t.countRows();
  if (count !== rows.numRows) throw new Error(`${table}: countRows ${count}, scan ${rows.numRows}`);
  writeFileSync(join(dir, `${table}.readback.arrow`), arrow.tableToIPC(rows, "file"));
}
