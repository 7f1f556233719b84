// Writes a dataset with the LanceDB SDK through a history of operations
// (create, appends, small and large deletes, an added, a dropped and a
// renamed column, tags, a branch, a vector and a scalar index, compaction)
// and prints, as JSON, what the SDK itself reports about every version:
// lancens's Go tests read the same dataset and must agree.
//
//   node write-history.mjs <dir> <table> '<storage options as JSON>'
import * as lancedb from "@lancedb/lancedb";
import * as arrow from "apache-arrow";

const [dir, name, optsJSON] = process.argv.slice(2);
const storageOptions = JSON.parse(optsJSON || "{}");
const db = await lancedb.connect(dir, { storageOptions });

const dim = 8;
const schema = new arrow.Schema([
  new arrow.Field("id", new arrow.Int64(), false),
  new arrow.Field("name", new arrow.Utf8(), true),
  new arrow.Field("vec", new arrow.FixedSizeList(dim, new arrow.Field("item", new arrow.Float32(), true)), true),
]);
// rows returns n rows from id start, with the columns of sch.
const rows = (start, n, sch = schema) => lancedb.makeArrowTable(
  Array.from({ length: n }, (_, k) => {
    const i = start + k;
    const all = { id: BigInt(i), name: i % 7 === 0 ? null : `row ${i}`, vec: Array.from({ length: dim }, (_, j) => Math.sin(i * dim + j)), double_id: BigInt(2 * i), twice: BigInt(2 * i) };
    return Object.fromEntries(sch.fields.map((f) => [f.name, all[f.name]]));
  }),
  { schema: sch },
);

const t = await db.createTable(name, rows(0, 12000), { storageOptions });
await t.add(rows(12000, 300));
await t.delete("id >= 1000 AND id < 7000");   // 6,000 rows of the first fragment: a roaring bitmap
await t.delete("id = 12001 OR id = 12007");   // two rows: an Arrow file
await t.addColumns([{ name: "double_id", valueSql: "id * 2" }]);
await t.createIndex("vec", { config: lancedb.Index.ivfPq({ numPartitions: 2, numSubVectors: 2 }) });
await t.add(rows(20000, 50, await t.schema()));
await t.createIndex("id");
await t.dropColumns(["name"]);
await t.alterColumns([{ path: "double_id", rename: "twice" }]);
const tags = await t.tags();
await tags.create("first", 1);
await tags.create("with-index", 6);
const branches = await t.branches();
const feature = await branches.create("feature");
await feature.add(rows(99999, 1, await feature.schema()));
await t.optimize({ cleanupOlderThan: new Date(0) });   // compaction; no cleanup

const versions = [];
for (const v of await t.listVersions()) {
  await t.checkout(v.version);
  const ids = (await t.query().select(["id"]).toArray()).map((r) => Number(r.id));
  versions.push({ version: v.version, rows: await t.countRows(), idSum: ids.reduce((a, b) => a + b, 0), fields: (await t.schema()).fields.map((f) => f.name) });
}
await t.checkoutLatest();
const indexes = (await t.listIndices()).map((ix) => ({ name: ix.name, columns: ix.columns, uuid: ix.indexUuid, type: ix.typeUrl }));
const tagList = Object.entries(await tags.list()).map(([tag, c]) => ({ name: tag, version: c.version }));
const branchList = [];
for (const [b, c] of Object.entries(await branches.list())) {
  const bt = await branches.checkout(b);
  branchList.push({ name: b, parentVersion: c.parentVersion, version: await bt.version(), rows: await bt.countRows() });
}
console.log(JSON.stringify({ versions, indexes, tags: tagList, branches: branchList }));
