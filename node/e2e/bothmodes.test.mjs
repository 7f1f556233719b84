// One kind of table: a table created through
// the remote API is a Lance dataset that the LanceDB SDK opens and writes in
// namespace mode, and a table the SDK created in namespace mode answers the
// remote API; when both modes write the same table, each sees the other's
// commits and none is lost. On local disk and on S3 (a Versity S3 Gateway).
import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import * as lancedb from "@lancedb/lancedb";
import { api, gatewayBinary, startGateway, startServer, storageArgs } from "./server.mjs";

const rows = (start, n, tag = "r") => Array.from({ length: n }, (_, i) => ({
  id: start + i, vector: [Math.sin(start + i), Math.cos(start + i), (start + i) % 5, 1], name: `${tag} ${start + i}`,
}));
const ids = (rs) => rs.map((r) => Number(r.id)).sort((a, b) => a - b);
const span = (a, b) => Array.from({ length: b - a }, (_, i) => a + i);

// fresh opens table name anew in db, at its latest version.
async function fresh(db, name) {
  return db.openTable(name);
}

// bothModes is the suite, against a server started by start.
function bothModes(start) {
  return () => {
    let server;
    let remote;
    let ns;

    before(async () => {
      server = await start();
      remote = await lancedb.connect("db://both", { apiKey: "k", hostOverride: server.url });
      ns = await lancedb.connectNamespace("rest", { uri: server.url });
    });
    after(async () => {
      await server?.stop();
      server?.cleanup();
    });

    test("a table created through the remote API is written in namespace mode", async () => {
      const r = await remote.createTable("made_remote", rows(0, 10));
      const desc = await api(server.url, "/v1/table/made_remote/describe", {});
      assert.match(desc.location, /\/made_remote-[0-9a-f]+\.lance$/);
      assert.equal(desc.managed_versioning, true);

      const n = await ns.openTable("made_remote");
      assert.equal(await n.countRows(), 10);
      await n.add(rows(10, 5, "ns"));
      await n.delete("id < 2");
      await n.mergeInsert("id").whenMatchedUpdateAll().whenNotMatchedInsertAll().execute([{ id: 3, vector: [0, 0, 0, 1], name: "merged 3" }]);
      assert.equal(await r.countRows(), 13);
      await r.add(rows(15, 3));
      await r.update({ where: "id = 4", valuesSql: { name: "'updated 4'" } });

      const n2 = await fresh(ns, "made_remote");
      assert.deepEqual(ids(await n2.query().toArray()), span(2, 18));
      assert.equal((await n2.query().where("id = 4").toArray())[0].name, "updated 4");
      assert.equal((await n2.query().where("id = 3").toArray())[0].name, "merged 3");
      const near = await n2.vectorSearch([0, 0, 0, 1]).limit(1).toArray();
      assert.equal(Number(near[0].id), 3);

      // Every version is in the catalog, in one chain, and both see it.
      const listed = await api(server.url, "/v1/table/made_remote/version/list");
      const versions = listed.versions.map((v) => v.version);
      assert.deepEqual(versions, span(1, versions.length + 1));
      assert.equal(await n2.version(), versions.length);
      assert.equal(await r.version(), versions.length);
      // Time travel reads what each mode wrote, from either.
      await n2.checkout(2);
      assert.equal(await n2.countRows(), 15);
      await r.checkout(1);
      assert.equal(await r.countRows(), 10);
      await r.checkoutLatest();
    });

    test("a table created in namespace mode answers the remote API", async () => {
      const n = await ns.createTable("made_ns", rows(0, 20, "ns"));
      await n.add(rows(20, 5, "ns"));
      const r = await remote.openTable("made_ns");
      assert.equal(await r.countRows(), 25);
      assert.deepEqual(ids(await r.query().where("id >= 22").toArray()), [22, 23, 24]);
      assert.equal((await r.vectorSearch([Math.sin(7), Math.cos(7), 2, 1]).limit(1).toArray())[0].id, 7);
      await r.add(rows(25, 5));
      await r.delete("id % 10 = 0");
      await r.alterColumns([{ path: "name", rename: "label" }]);
      const n2 = await fresh(ns, "made_ns");
      assert.equal(await n2.countRows(), 27);
      assert.deepEqual((await n2.schema()).fields.map((f) => f.name), ["id", "vector", "label"]);
      await n2.add(rows(30, 2).map(({ name, ...rest }) => ({ ...rest, label: name })));
      assert.equal(await r.countRows(), 29);
      const schema = await api(server.url, "/v1/table/made_ns/describe", {});
      assert.deepEqual(schema.schema.fields.map((f) => f.name), ["id", "vector", "label"]);
    });

    test("both modes writing at once lose nothing", async () => {
      await remote.createTable("both", rows(0, 1));
      const r = await remote.openTable("both");
      const n = await ns.openTable("both");
      const writes = [];
      for (let i = 0; i < 6; i++) {
        writes.push(r.add(rows(1000 + i * 10, 10, "remote")));
        writes.push(n.add(rows(2000 + i * 10, 10, "ns")));
      }
      await Promise.all(writes);
      const all = ids(await (await fresh(ns, "both")).query().limit(1000).toArray());
      const want = [0, ...span(0, 6).flatMap((i) => [...span(1000 + i * 10, 1010 + i * 10), ...span(2000 + i * 10, 2010 + i * 10)])];
      assert.deepEqual(all, want.sort((a, b) => a - b));
      assert.equal(await r.countRows(), want.length);
      const listed = await api(server.url, "/v1/table/both/version/list");
      assert.deepEqual(listed.versions.map((v) => v.version), span(1, 14));
    });
  };
}

describe("one kind of table, on local disk", bothModes(() => startServer()));

const skip = gatewayBinary() ? false : "versitygw is not installed (make versitygw)";
if (skip && process.env.CI === "true") throw new Error("the S3 gateway is missing under CI: run make versitygw");

describe("one kind of table, on S3", { skip }, () => {
  let gateway;
  before(async () => { gateway = await startGateway(["lance"]); });
  after(async () => { await gateway?.stop(); });
  bothModes(() => startServer({
    warehouse: "s3://lance/wh",
    args: [...storageArgs(gateway.options), "--vend-credentials", "static"],
  }))();
});
