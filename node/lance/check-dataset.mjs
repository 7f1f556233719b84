// Opens a dataset lancens's Go code wrote and reports what the LanceDB SDK
// reads in it: the row count, every id, a filtered count, a vector search
// without an index, the schema, versions, tags and branches. Then it
// writes on top as a client would: builds an IVF_PQ index (and searches
// with it), appends rows, deletes some and merges (updates and inserts),
// and reports the result, which the Go test reads back.
//
// With a fourth argument "read", it only reads: rows, ids, and a vector
// search (which uses the index if there is one).
//
//   node check-dataset.mjs <dir> <table> '<storage options as JSON>' [read]
import * as lancedb from "@lancedb/lancedb";
import { makeRows, vector } from "./rows.mjs";

const [dir, name, optsJSON, mode] = process.argv.slice(2);
const storageOptions = JSON.parse(optsJSON || "{}");
const db = await lancedb.connect(dir, { storageOptions });
const t = await db.openTable(name, [], { storageOptions });

const ids = async () => (await t.query().select(["id"]).toArray()).map((r) => Number(r.id)).sort((a, b) => a - b);
// nearest searches every partition of an index, re-ranking with the
// stored vectors, so that an indexed search is exact too.
const nearest = async (id) => {
  const hits = await t.query().nearestTo(vector(id)).nprobes(2).refineFactor(100).limit(1).toArray();
  return { id: Number(hits[0].id), distance: hits[0]._distance };
};
if (mode === "read") {
  const all = await ids();
  const probe = all[Math.floor(all.length / 2)];
  const found = all.length > 0 ? await nearest(probe) : null;
  console.log(JSON.stringify({ version: await t.version(), rows: await t.countRows(), ids: all, probe, nearest: found, indexes: (await t.listIndices()).length }));
  process.exit(0);
}
const schema = await t.schema();
const report = {
  version: await t.version(),
  rows: await t.countRows(),
  ids: await ids(),
  below100: await t.countRows("id < 100"),
  fields: schema.fields.map((f) => f.name),
  versions: (await t.listVersions()).map((v) => v.version),
  tags: Object.entries(await (await t.tags()).list()).map(([tag, c]) => ({ name: tag, version: c.version })),
  branches: Object.entries(await (await t.branches()).list()).map(([b, c]) => ({ name: b, parentVersion: c.parentVersion })),
};
const probe = report.ids[Math.floor(report.ids.length / 2)];
report.nearest = await nearest(probe);
report.probe = probe;
for (const tag of report.tags) {
  await t.checkout(tag.name);
  tag.rows = await t.countRows();
  await t.checkoutLatest();
}
for (const b of report.branches) {
  const bt = await (await t.branches()).checkout(b.name);
  b.rows = await bt.countRows();
  b.version = await bt.version();
}

await t.createIndex("vec", { config: lancedb.Index.ivfPq({ numPartitions: 2, numSubVectors: 2 }) });
report.indexedNearest = await nearest(probe);
await t.add(makeRows(50000, 100, schema));
await t.delete("id % 10 = 3");
await t.mergeInsert("id").whenMatchedUpdateAll().whenNotMatchedInsertAll().execute(makeRows(50090, 20, schema));
report.after = { version: await t.version(), rows: await t.countRows(), ids: await ids() };
console.log(JSON.stringify(report));
