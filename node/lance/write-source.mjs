// Writes the "source" dataset whose data files lancens's Go tests build
// datasets from (before the Go data file writer exists): three fragments
// of (id int64, name utf8, vec fixed_size_list<float32, 8>) rows, ids
// 0–7999, 8000–8999 and 9000–9999, then an added column double_id =
// id * 2, which gives every fragment a second data file.
//
//   node write-source.mjs <dir> <table> '<storage options as JSON>'
import * as lancedb from "@lancedb/lancedb";
import { sourceRows } from "./rows.mjs";

const [dir, name, optsJSON] = process.argv.slice(2);
const storageOptions = JSON.parse(optsJSON || "{}");
const db = await lancedb.connect(dir, { storageOptions });
const t = await db.createTable(name, sourceRows(0, 8000), { storageOptions });
await t.add(sourceRows(8000, 1000));
await t.add(sourceRows(9000, 1000));
await t.addColumns([{ name: "double_id", valueSql: "id * 2" }]);
console.log(JSON.stringify({ version: await t.version(), rows: await t.countRows() }));
