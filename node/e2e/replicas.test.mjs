// Two lancens replicas serving LanceDB's remote mode from one PostgreSQL
// catalog and one s3:// warehouse (a Versity S3 Gateway on loopback), each
// with a cache of its own: the LanceDB SDK writes
// through either and reads through the other, every acknowledged write is
// seen by the next read wherever it goes, concurrent writes through both
// lose nothing, an index build is claimed by one replica and used by both,
// and the tables are Lance datasets in the bucket that namespace mode and
// a plain Lance open read.
import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { join } from "node:path";
import * as lancedb from "@lancedb/lancedb";
import { postgresBinaries, startPostgres } from "./postgres.mjs";
import { api, files, gatewayBinary, startGateway, startServer, storageArgs } from "./server.mjs";

const categories = ["cats", "dogs", "birds"];
const rows = (start, n, tag = "row") => Array.from({ length: n }, (_, k) => {
  const i = start + k;
  return {
    id: i, text: `${tag} ${i} about ${categories[i % 3]}`,
    vector: [Math.sin(i), Math.cos(i), (i % 7) / 7, (i % 11) / 11], category: i % 3,
  };
});
const ids = (rs) => rs.map((r) => Number(r.id)).sort((a, b) => a - b);
const span = (a, b) => Array.from({ length: b - a }, (_, k) => a + k);
const l2 = (a, b) => a.reduce((s, x, k) => s + (x - b[k]) ** 2, 0);
// plain turns rows (read back, or written: vectors are stored as float32s)
// into comparable objects, by id.
const plain = (rs) => rs.map((r) => ({ id: Number(r.id), text: r.text, category: Number(r.category), vector: Array.from(r.vector, Math.fround) }))
  .sort((a, b) => a.id - b.id);

const missing = [
  !postgresBinaries() && "PostgreSQL is not installed (make postgres)",
  !gatewayBinary() && "versitygw is not installed (make versitygw)",
].filter(Boolean);
const skip = missing.length ? missing.join("; ") : false;
if (skip && process.env.CI === "true") throw new Error(`${skip}: CI must run the replica tests`);

describe("two PostgreSQL replicas serving remote mode on S3", { skip }, () => {
  let pg;
  let gateway;
  let a; // replica A: a lancens server
  let b; // replica B
  let ra; // the LanceDB SDK in remote mode through A
  let rb; // … through B

  before(async () => {
    [pg, gateway] = await Promise.all([startPostgres(), startGateway(["lance"])]);
    const start = () => startServer({
      db: pg.url, warehouse: "s3://lance/wh",
      args: [...storageArgs(gateway.options), "--vend-credentials", "static"],
    });
    // One after the other: the first creates the catalog's tables.
    a = await start();
    b = await start();
    ra = await lancedb.connect("db://replicas", { apiKey: "k", hostOverride: a.url });
    rb = await lancedb.connect("db://replicas", { apiKey: "k", hostOverride: b.url });
  });
  after(async () => {
    for (const s of [a, b]) {
      await s?.stop();
      s?.cleanup();
    }
    await gateway?.stop();
    await pg?.stop();
  });

  const data = rows(0, 300);

  test("a table created through A is read through B", async () => {
    await ra.createTable("items", data);
    const tb = await rb.openTable("items");
    assert.equal(await tb.countRows(), 300);
    assert.equal(await tb.countRows("category = 1"), 100);
    assert.deepEqual(ids(await tb.query().where("id >= 10 AND id < 15").toArray()), span(10, 15));
    const q = [0.5, 0.5, 0.5, 0.5];
    const want = [...data].sort((x, y) => l2(x.vector, q) - l2(y.vector, q) || x.id - y.id).slice(0, 5);
    const near = await tb.vectorSearch(q).limit(5).toArray();
    assert.deepEqual(near.map((r) => Number(r.id)), want.map((r) => r.id));
    assert.deepEqual(plain(await tb.query().where("id = 42").toArray()), plain([data[42]]));
  });

  test("every write acknowledged through B is read through A at once", async () => {
    const ta = await ra.openTable("items");
    const tb = await rb.openTable("items");
    const sameVersion = async () => assert.equal(await ta.version(), await tb.version());

    await tb.add(rows(300, 10));
    assert.equal(await ta.countRows(), 310);
    assert.deepEqual(ids(await ta.query().where("id >= 305").toArray()), span(305, 310));
    await sameVersion();

    await tb.delete("id < 5");
    assert.equal(await ta.countRows(), 305);
    assert.deepEqual(await ta.query().where("id < 5").toArray(), []);
    await sameVersion();

    await tb.update({ where: "id = 7", valuesSql: { text: "'updated 7'" } });
    assert.deepEqual((await ta.query().where("id = 7").toArray()).map((r) => r.text), ["updated 7"]);
    await sameVersion();

    const res = await tb.mergeInsert("id").whenMatchedUpdateAll().whenNotMatchedInsertAll().execute([
      { ...rows(8, 1)[0], text: "merged 8" },
      { id: 1000, text: "new 1000 about cats", vector: [9, 9, 9, 9], category: 0 },
    ]);
    assert.equal(res.numUpdatedRows, 1);
    assert.equal(res.numInsertedRows, 1);
    assert.equal(await ta.countRows(), 306);
    assert.deepEqual((await ta.query().where("id = 8").toArray()).map((r) => r.text), ["merged 8"]);
    const near = await ta.vectorSearch([9, 9, 9, 9]).limit(1).toArray();
    assert.equal(Number(near[0].id), 1000);
    await sameVersion();

    // Every version, in one chain, the same through both.
    const listed = await api(a.url, "/v1/table/items/version/list");
    assert.deepEqual(listed.versions.map((v) => v.version), span(1, 6));
    assert.deepEqual(await api(b.url, "/v1/table/items/version/list"), listed);
  });

  test("adds through both replicas at once lose nothing", async () => {
    await rb.createTable("concurrent", rows(0, 1));
    const ta = await ra.openTable("concurrent");
    const tb = await rb.openTable("concurrent");
    const writes = [];
    for (let i = 0; i < 10; i++) {
      writes.push(ta.add(rows(1000 + i * 10, 10, "a")));
      writes.push(tb.add(rows(2000 + i * 10, 10, "b")));
    }
    await Promise.all(writes);
    const want = [0, ...span(1000, 1100), ...span(2000, 2100)];
    for (const t of [ta, tb]) {
      assert.equal(await t.countRows(), want.length);
      assert.deepEqual(ids(await t.query().select(["id"]).limit(1000).toArray()), want);
    }
    const listed = await api(a.url, "/v1/table/concurrent/version/list");
    assert.deepEqual(listed.versions.map((v) => v.version), span(1, 22));
    assert.deepEqual(await api(b.url, "/v1/table/concurrent/version/list"), listed);
    // Each version is one add on top of the one before.
    for (let v = 1; v <= 21; v++) {
      const n = await api(v % 2 ? a.url : b.url, "/v1/table/concurrent/count_rows", { version: v });
      assert.equal(n, 1 + 10 * (v - 1), `version ${v}`);
    }
  });

  test("an index requested through one replica is built once and used by both", async () => {
    const ta = await ra.openTable("items");
    const tb = await rb.openTable("items");
    const tc = await rb.openTable("concurrent");
    // Two vector index builds queued through different replicas at once
    // (each a job that either replica's runner may claim), a scalar and a
    // full-text index built in the request.
    await Promise.all([
      ta.createIndex("vector", { config: lancedb.Index.ivfPq({ numPartitions: 2, numSubVectors: 2 }), name: "vec_pq", waitTimeoutSeconds: 60 }),
      tc.createIndex("vector", { config: lancedb.Index.ivfFlat({ numPartitions: 2 }), name: "vec_flat", waitTimeoutSeconds: 60 }),
      tb.createIndex("id", { config: lancedb.Index.btree() }),
      ta.createIndex("text", { config: lancedb.Index.fts(), waitTimeoutSeconds: 60 }),
    ]);

    const describe = (t) => t.listIndices().then((xs) => xs.map((x) => ({ name: x.name, type: x.indexType, columns: x.columns }))
      .sort((x, y) => x.name.localeCompare(y.name)));
    const listed = await describe(ta);
    assert.deepEqual(listed.map((x) => x.name), ["id_idx", "text_idx", "vec_pq"]);
    assert.deepEqual(await describe(tb), listed);
    assert.deepEqual((await describe(tc)).map((x) => x.name), ["vec_flat"]);
    for (const name of ["vec_pq", "id_idx", "text_idx"]) {
      const sa = await ta.indexStats(name);
      assert.ok(sa, name);
      assert.equal(sa.numUnindexedRows, 0, name);
      assert.deepEqual(await tb.indexStats(name), sa, name);
    }
    assert.equal((await tc.indexStats("vec_flat")).numUnindexedRows, 0);

    // Each index is one directory of index files under its table's
    // location in the bucket, holding the one build that was made.
    for (const [table, want] of [["items", 3], ["concurrent", 1]]) {
      const desc = await api(a.url, `/v1/table/${table}/describe`, {});
      const prefix = desc.location.slice("s3://lance/".length) + "/_lancens/indices/";
      const built = files(join(gateway.dir, "lance")).filter((f) => f.startsWith(prefix)).map((f) => f.slice(prefix.length).split("/"));
      const dirs = {};
      for (const [uuid, build] of built) (dirs[uuid] ??= []).push(build);
      assert.equal(Object.keys(dirs).length, want, `${table}: ${built.join(" ")}`);
      for (const [uuid, builds] of Object.entries(dirs)) assert.equal(builds.length, 1, `${table}: index ${uuid} built ${builds.length} times`);
    }

    // Searches through B go through the indexes A built.
    const q = data[42].vector;
    const plan = await tb.vectorSearch(q).nprobes(2).refineFactor(5).limit(1).explainPlan();
    assert.match(plan, /index vec_pq/, plan);
    const found = await tb.vectorSearch(q).nprobes(2).refineFactor(5).limit(1).toArray();
    assert.equal(Number(found[0].id), 42);
    assert.match(await tb.query().where("id = 42").explainPlan(), /id_idx/);
    const birds = await tb.search("birds", "fts").limit(500).toArray();
    assert.deepEqual(ids(birds), ids(await ta.query().where("text LIKE '%birds%'").limit(500).toArray()));
    assert.equal(birds.length, 101);
    assert.match(await tc.vectorSearch(q).limit(1).explainPlan(), /index vec_flat/);
  });

  test("the tables are Lance datasets in the bucket that namespace mode and Lance read", async () => {
    const desc = await api(a.url, "/v1/table/items/describe", {});
    assert.match(desc.location, /^s3:\/\/lance\/wh\/items-[0-9a-f]+\.lance$/);
    assert.equal(desc.storage_options.aws_endpoint, gateway.endpoint);
    assert.equal((await api(b.url, "/v1/table/items/describe", {})).location, desc.location);
    const remote = plain(await (await ra.openTable("items")).query().limit(1000).toArray());
    assert.equal(remote.length, 306);

    // The LanceDB SDK in namespace mode, through B, with the storage
    // options it vends.
    const ns = await lancedb.connectNamespace("rest", { uri: b.url });
    const nt = await ns.openTable("items");
    assert.deepEqual(plain(await nt.query().limit(1000).toArray()), remote);
    // Lance itself, opening the location in the bucket.
    const root = desc.location.slice(0, desc.location.lastIndexOf("/"));
    const direct = await lancedb.connect(root, { storageOptions: gateway.options });
    const dt = await direct.openTable(desc.location.slice(root.length + 1, -".lance".length));
    assert.equal(await dt.version(), 5);
    assert.deepEqual(plain(await dt.query().limit(1000).toArray()), remote);

    // A namespace-mode write through A is read through B's remote mode.
    const na = await (await lancedb.connectNamespace("rest", { uri: a.url })).openTable("items");
    await na.add(rows(2000, 3, "ns"));
    assert.equal(await (await rb.openTable("items")).countRows(), 309);
    // Nothing is on either replica's local disk.
    for (const s of [a, b]) assert.deepEqual(files(s.dir), []);
  });
});
