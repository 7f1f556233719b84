// The LanceDB SDK in remote mode (connect("db://…", {hostOverride})) against
// a real lancens: every call below goes over HTTP in the LanceDB Cloud
// dialect, and the results are checked.
import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import * as lancedb from "@lancedb/lancedb";
import { startServer } from "./server.mjs";

const ids = (rows) => rows.map((r) => Number(r.id));
const N = 300;

function makeRows(n, start = 0) {
  const rows = [];
  for (let i = start; i < start + n; i++) {
    rows.push({
      id: i,
      text: `document ${i} about ${["cats", "dogs", "birds"][i % 3]} and ${i % 2 ? "rivers" : "mountains"}`,
      vector: [Math.sin(i), Math.cos(i), (i % 7) / 7, (i % 11) / 11],
      category: i % 3,
      labels: [`c${i % 3}`, `p${i % 2}`],
    });
  }
  return rows;
}

// distance computes the squared euclidean distance LanceDB reports.
const l2 = (a, b) => a.reduce((s, x, i) => s + (x - b[i]) ** 2, 0);

describe("LanceDB remote mode", () => {
  let server;
  let db;
  let tbl;
  const data = makeRows(N);

  before(async () => {
    server = await startServer({ apiKey: "secret" });
    db = await lancedb.connect("db://e2e", { apiKey: "secret", hostOverride: server.url });
    tbl = await db.createTable("items", data);
  });
  after(async () => {
    await server.stop();
    server.cleanup();
  });

  test("the API key is required", async () => {
    const other = await lancedb.connect("db://e2e", { apiKey: "wrong", hostOverride: server.url });
    await assert.rejects(other.tableNames(), /401/);
  });

  test("tables: create, open, list, exists-conflict", async () => {
    assert.deepEqual(await db.tableNames(), ["items"]);
    const listed = await db.listTables();
    assert.deepEqual(listed.tables, ["items"]);
    const opened = await db.openTable("items");
    assert.equal(await opened.countRows(), N);
    await assert.rejects(db.createTable("items", data.slice(0, 1)), /already exists/);
    const same = await db.createTable("items", data.slice(0, 1), { mode: "exist_ok" });
    assert.equal(await same.countRows(), N);
    await assert.rejects(db.openTable("missing"), /not found/i);
    const empty = await db.createEmptyTable("empty", (await tbl.schema()));
    assert.equal(await empty.countRows(), 0);
    const schema = await tbl.schema();
    assert.deepEqual(schema.fields.map((f) => f.name), ["id", "text", "vector", "category", "labels"]);
    assert.equal(String(schema.fields[2].type), "FixedSizeList[4]<Float32>");
  });

  test("queries: where, select, limit, offset, count", async () => {
    assert.equal(await tbl.countRows("category = 1"), N / 3);
    const rows = await tbl.query().where("id >= 10 AND id < 20").select(["id", "text"]).limit(3).offset(2).toArray();
    assert.deepEqual(ids(rows), [12, 13, 14]);
    assert.deepEqual(Object.keys(rows[0]), ["id", "text"]);
    const dyn = await tbl.query().where("id = 7").select({ double: "id * 2", t: "text" }).toArray();
    assert.equal(dyn[0].double, 14);
    assert.match(dyn[0].t, /document 7/);
    const all = await tbl.query().toArray();
    assert.equal(all.length, N);
    const rowIds = (await tbl.query().where("id IN (3, 4)").withRowId().toArray()).map((r) => r._rowid);
    const taken = await tbl.takeRowIds(rowIds).toArray();
    assert.deepEqual(ids(taken).sort(), [3, 4]);
    const sorted = await tbl.query().where("id < 10").orderBy({ columnName: "category", ascending: false }).limit(4).toArray();
    assert.deepEqual(ids(sorted), [2, 5, 8, 1]);
  });

  test("vector search with options", async () => {
    const q = [0.5, 0.5, 0.5, 0.5];
    const want = [...data].sort((a, b) => l2(a.vector, q) - l2(b.vector, q) || a.id - b.id);
    const exact = await tbl.vectorSearch(q).limit(5).toArray();
    assert.deepEqual(ids(exact), ids(want.slice(0, 5)));
    assert.ok(Math.abs(exact[0]._distance - l2(want[0].vector, q)) < 1e-5);
    const filtered = await tbl.vectorSearch(q).where("category = 2").limit(5).toArray();
    assert.deepEqual(ids(filtered), ids(want.filter((r) => r.category === 2).slice(0, 5)));
    const post = await tbl.vectorSearch(q).where("category = 2").postfilter().limit(5).toArray();
    assert.ok(post.every((r) => r.category === 2) && post.length <= 5);
    const cosine = await tbl.vectorSearch(q).distanceType("cosine").limit(3).toArray();
    assert.equal(cosine.length, 3);
    const withRowId = await tbl.vectorSearch(q).withRowId().limit(2).select(["id"]).toArray();
    assert.ok("_rowid" in withRowId[0] && "_distance" in withRowId[0]);
    const ranged = await tbl.vectorSearch(q).distanceRange(exact[1]._distance, exact[4]._distance).limit(5).toArray();
    assert.deepEqual(ids(ranged), ids(exact.slice(1, 4)));
    const multi = await tbl.query().nearestTo(q).addQueryVector(data[3].vector).limit(2).toArray();
    assert.equal(multi.length, 4);
    assert.ok(ids(multi).includes(3));
  });

  test("vector indexes of every type, listed, described, dropped", async () => {
    const q = data[42].vector;
    for (const [name, config] of [
      ["flat", lancedb.Index.ivfFlat({ numPartitions: 4 })],
      ["pq", lancedb.Index.ivfPq({ numPartitions: 4, numSubVectors: 2 })],
      ["hnsw_sq", lancedb.Index.hnswSq({ numPartitions: 2 })],
      // IVF_HNSW_PQ is refused by the SDK itself in remote mode.
    ]) {
      await tbl.createIndex("vector", { config, name, waitTimeoutSeconds: 60 });
      const found = await tbl.vectorSearch(q).nprobes(4).refineFactor(5).ef(50).limit(1).toArray();
      assert.equal(found[0].id, 42, `${name} finds the query's own row`);
      const exact = await tbl.vectorSearch(q).bypassVectorIndex().limit(1).toArray();
      assert.equal(exact[0].id, 42);
      const fast = await tbl.vectorSearch(q).fastSearch().limit(1).toArray();
      assert.equal(fast.length, 1);
    }
    const indices = await tbl.listIndices();
    assert.deepEqual(indices.map((i) => i.name).sort(), ["flat", "hnsw_sq", "pq"]);
    const stats = await tbl.indexStats("pq");
    assert.equal(stats.numIndexedRows, N);
    assert.equal(stats.numUnindexedRows, 0);
    assert.equal(stats.distanceType, "l2");
    assert.equal(await tbl.indexStats("nope"), undefined);
    for (const name of ["flat", "hnsw_sq"]) await tbl.dropIndex(name);
    assert.deepEqual((await tbl.listIndices()).map((i) => i.name), ["pq"]);
    await assert.rejects(tbl.dropIndex("nope"), /not found/i);
  });

  test("scalar indexes", async () => {
    await tbl.createIndex("id", { config: lancedb.Index.btree() });
    await tbl.createIndex("category", { config: lancedb.Index.bitmap() });
    const names = (await tbl.listIndices()).map((i) => `${i.name}:${i.indexType}`).sort();
    assert.ok(names.includes("id_idx:BTree") || names.includes("id_idx:BTREE"), names.join());
    assert.equal(await tbl.countRows("category = 0 AND id < 30"), 10);
    await tbl.createIndex("labels", { config: lancedb.Index.labelList() });
    assert.equal(await tbl.countRows("array_has(labels, 'c1')"), N / 3);
    assert.equal(await tbl.countRows("array_has_all(labels, ['c1', 'p0'])"), N / 6);
  });

  test("full-text search: plain, structured and hybrid", async () => {
    await tbl.createIndex("text", { config: lancedb.Index.fts({ withPosition: true }), waitTimeoutSeconds: 60 });
    const plain = await tbl.search("birds", "fts").limit(5).toArray();
    assert.equal(plain.length, 5);
    assert.ok(plain.every((r) => r.text.includes("birds")));
    assert.ok(plain[0]._score >= plain[4]._score);
    const match = await tbl.query().fullTextSearch(new lancedb.MatchQuery("cats rivers", "text", { operator: lancedb.Operator.And })).limit(200).toArray();
    assert.equal(match.length, N / 6);
    assert.ok(match.every((r) => r.category === 0 && r.id % 2 === 1));
    const phrase = await tbl.query().fullTextSearch(new lancedb.PhraseQuery("about dogs", "text")).limit(200).toArray();
    assert.equal(phrase.length, N / 3);
    const boolean = await tbl.query().fullTextSearch(new lancedb.BooleanQuery([
      [lancedb.Occur.Must, new lancedb.MatchQuery("mountains", "text")],
      [lancedb.Occur.MustNot, new lancedb.MatchQuery("cats", "text")],
    ])).limit(200).toArray();
    assert.equal(boolean.length, N / 3);
    const multi = await tbl.query().fullTextSearch(new lancedb.MultiMatchQuery("dogs", ["text"])).limit(3).toArray();
    assert.ok(multi.every((r) => r.category === 1));
    const boost = await tbl.query().fullTextSearch(new lancedb.BoostQuery(new lancedb.MatchQuery("document", "text"),
      new lancedb.MatchQuery("cats", "text"), { negativeBoost: 0.01 })).limit(10).toArray();
    assert.ok(boost.every((r) => r.category !== 0));
    const fuzzy = await tbl.query().fullTextSearch(new lancedb.MatchQuery("rivrs", "text", { fuzziness: 1 })).limit(3).toArray();
    assert.ok(fuzzy.length === 3 && fuzzy.every((r) => r.text.includes("rivers")));
    const hybrid = await tbl.query().nearestTo(data[5].vector).fullTextSearch("dogs").limit(5).toArray();
    assert.equal(hybrid.length, 5);
    assert.ok("_relevance_score" in hybrid[0]);
  });

  test("writes: add, update, delete, merge insert", async () => {
    const t = await db.createTable("writes", makeRows(10));
    await t.add(makeRows(5, 100));
    assert.equal(await t.countRows(), 15);
    await t.update({ where: "id >= 100", values: { category: 9 } });
    assert.equal(await t.countRows("category = 9"), 5);
    await t.update({ where: "id = 1", valuesSql: { text: "'changed'" } });
    assert.deepEqual(ids(await t.query().where("text = 'changed'").toArray()), [1]);
    await t.delete("id >= 100");
    assert.equal(await t.countRows(), 10);
    const res = await t.mergeInsert("id").whenMatchedUpdateAll().whenNotMatchedInsertAll()
      .execute([{ ...makeRows(1, 2)[0], text: "merged" }, ...makeRows(2, 50)]);
    assert.equal(res.numUpdatedRows, 1);
    assert.equal(res.numInsertedRows, 2);
    assert.equal(await t.countRows(), 12);
    assert.deepEqual(ids(await t.query().where("text = 'merged'").toArray()), [2]);
    await t.add(makeRows(3, 200), { mode: "overwrite" });
    assert.deepEqual(ids(await t.query().toArray()), [200, 201, 202]);
  });

  test("a misspelled column is reported as such, not as a missing table", async () => {
    const t = await db.createTable("typos", makeRows(5));
    for (const [what, call] of [
      ["where", () => t.query().where("nosuchcol = 3").toArray()],
      ["update", () => t.update({ values: { nosuch: 1 } })],
    ]) {
      const err = await call().then(() => null, (e) => e);
      assert.ok(err, `${what} succeeded`);
      assert.match(err.message, /nosuch/, `${what}: the message names the column: ${err.message}`);
      assert.doesNotMatch(err.message, /was not found|Table 'typos'/i, `${what}: ${err.message}`);
    }
    assert.equal(await t.countRows(), 5);
    await db.dropTable("typos");
  });

  test("versions, checkout, restore and tags", async () => {
    const t = await db.createTable("versions", makeRows(3));
    await t.add(makeRows(2, 10));
    await t.add(makeRows(1, 20));
    assert.equal(await t.version(), 3);
    const versions = await t.listVersions();
    assert.deepEqual(versions.map((v) => v.version), [1, 2, 3]);
    const tags = await t.tags();
    await tags.create("first", 1);
    await tags.create("second", 2);
    assert.equal(await tags.getVersion("first"), 1);
    assert.deepEqual(Object.keys(await tags.list()).sort(), ["first", "second"]);
    await tags.update("second", 3);
    assert.equal(await tags.getVersion("second"), 3);
    await tags.delete("second");
    assert.deepEqual(Object.keys(await tags.list()), ["first"]);
    await t.checkout(1);
    assert.equal(await t.countRows(), 3);
    await t.checkout("first");
    assert.equal(await t.version(), 1);
    await t.checkoutLatest();
    assert.equal(await t.countRows(), 6);
    await t.checkout(2);
    await t.restore();
    assert.equal(await t.version(), 4);
    assert.equal(await t.countRows(), 5);
  });

  test("schema changes, stats and plans", async () => {
    const t = await db.createTable("evolve", makeRows(6));
    await t.addColumns([{ name: "double_id", valueSql: "id * 2" }]);
    assert.deepEqual((await t.query().select(["double_id"]).limit(3).toArray()).map((r) => Number(r.double_id)), [0, 2, 4]);
    await t.alterColumns([{ path: "double_id", rename: "did", nullable: true }]);
    await t.alterColumns([{ path: "did", dataType: "int32" }]);
    const schema = await t.schema();
    assert.equal(String(schema.fields.find((f) => f.name === "did").type), "Int32");
    await t.dropColumns(["did"]);
    assert.deepEqual((await t.schema()).fields.map((f) => f.name), ["id", "text", "vector", "category", "labels"]);
    const stats = await t.stats();
    assert.equal(stats.numRows, 6);
    assert.ok(stats.totalBytes > 0);
    assert.equal(stats.fragmentStats.numFragments, 1);
    const plan = await t.query().where("id > 1").explainPlan(true);
    assert.match(plan, /LanceScan/);
    const analyzed = await t.query().where("id > 1").analyzePlan();
    assert.match(analyzed, /output_rows=4/);
  });

  test("listing pages: tokens the SDK makes and tokens the server answers", async () => {
    await db.createNamespace(["pages"]);
    for (const ns of ["pa", "pb", "pc", "pd"]) await db.createNamespace(["pages", ns]);
    for (const name of ["t1", "t2", "t3"]) await db.createTable(name, makeRows(1), ["pages"]);
    // The SDK's own tokens: the name to start after.
    assert.deepEqual((await db.listNamespaces(["pages"], { pageToken: "pb" })).namespaces, ["pc", "pd"]);
    assert.deepEqual((await db.listNamespaces(["pages"], { pageToken: "a", limit: 1 })).namespaces, ["pa"]);
    assert.deepEqual(await db.tableNames(["pages"], { startAfter: "t1" }), ["t2", "t3"]);
    assert.deepEqual((await db.listTables(["pages"], { pageToken: "t2" })).tables, ["t3"]);
    // Following the server's tokens pages through everything once.
    const all = [];
    let pageToken;
    do {
      const page = await db.listNamespaces(["pages"], { pageToken, limit: 3 });
      all.push(...page.namespaces);
      pageToken = page.pageToken;
    } while (pageToken);
    assert.deepEqual(all, ["pa", "pb", "pc", "pd"]);
    await db.dropNamespace(["pages"], { behavior: "cascade" });
  });

  test("prewarmIndex loads built indexes and refuses unknown ones", async () => {
    const t = await db.createTable("prewarm", makeRows(64));
    await t.createIndex("vector", { config: lancedb.Index.ivfFlat({ numPartitions: 2 }), name: "vec", waitTimeoutSeconds: 60 });
    await t.createIndex("text", { config: lancedb.Index.fts(), waitTimeoutSeconds: 60 });
    await t.createIndex("id", { config: lancedb.Index.btree() });
    for (const name of ["vec", "text_idx", "id_idx"]) await t.prewarmIndex(name);
    await assert.rejects(t.prewarmIndex("nope"), /not found/i);
    const found = await t.vectorSearch(makeRows(1, 9)[0].vector).nprobes(2).limit(1).toArray();
    assert.equal(found[0].id, 9);
    assert.equal((await t.search("birds", "fts").limit(100).toArray()).length, 21);
    await db.dropTable("prewarm");
  });

  test("merge insert keyed on two columns", async () => {
    const t = await db.createTable("merge2", makeRows(6));
    // Row 3 keeps its id with a new category (no match on both keys), rows 4 and 5 match.
    const src = makeRows(3, 3).map((r) => ({ ...r, text: "merged", category: r.id === 3 ? 9 : r.category }));
    const res = await t.mergeInsert(["id", "category"]).whenMatchedUpdateAll().whenNotMatchedInsertAll().execute(src);
    assert.equal(res.numUpdatedRows, 2);
    assert.equal(res.numInsertedRows, 1);
    assert.equal(await t.countRows(), 7);
    assert.equal(await t.countRows("id = 3"), 2);
    assert.deepEqual(ids(await t.query().where("text = 'merged'").toArray()).sort(), [3, 4, 5]);
    // One key, as 0.11 clients send it, still works.
    const one = await t.mergeInsert("id").whenMatchedUpdateAll().execute([{ ...makeRows(1, 1)[0], text: "one" }]);
    assert.equal(one.numUpdatedRows, 1);
    await db.dropTable("merge2");
  });

  test("rename, drop and namespaces", async () => {
    await db.createTable("to_rename", makeRows(2));
    await db.renameTable("to_rename", "renamed");
    assert.ok((await db.tableNames()).includes("renamed"));
    await db.dropTable("renamed");
    assert.ok(!(await db.tableNames()).includes("renamed"));
    await db.createNamespace(["team"]);
    await db.createNamespace(["team", "sub"], { mode: "exist_ok" });
    assert.deepEqual((await db.listNamespaces()).namespaces, ["team"]);
    assert.deepEqual((await db.listNamespaces(["team"])).namespaces, ["sub"]);
    assert.deepEqual((await db.describeNamespace(["team"])).properties, {});
    const nt = await db.createTable("inner", makeRows(4), ["team"]);
    assert.equal(await nt.countRows(), 4);
    assert.deepEqual(await db.tableNames(["team"]), ["inner"]);
    await assert.rejects(db.dropNamespace(["team"]), /not empty/i);
    await db.dropNamespace(["team"], { behavior: "cascade" });
    assert.deepEqual((await db.listNamespaces()).namespaces, []);
  });
});
