// The LanceDB SDK in namespace mode against a lancens whose warehouse is on
// S3 (a Versity S3 Gateway on loopback): lancens hands the SDK the storage
// options (--vend-credentials static), Lance writes every data file and
// manifest into the bucket and commits each version through lancens, which
// publishes the manifest with a conditional put. Nothing lands on local disk.
import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { join } from "node:path";
import * as lancedb from "@lancedb/lancedb";
import { api, files, gatewayBinary, startGateway, startServer, storageArgs } from "./server.mjs";

const rows = (start, n) => Array.from({ length: n }, (_, i) => ({
  id: start + i, vector: [Math.sin(start + i), Math.cos(start + i), (start + i) % 7, 1], name: `row ${start + i}`,
}));

const skip = gatewayBinary() ? false : "versitygw is not installed (make versitygw)";
if (skip && process.env.CI === "true") throw new Error("the S3 gateway is missing under CI: run make versitygw");

describe("LanceDB namespace mode on S3", { skip }, () => {
  let gateway;
  let server;
  let db;

  before(async () => {
    gateway = await startGateway(["lance"]);
    server = await startServer({ warehouse: "s3://lance/wh", args: [...storageArgs(gateway.options), "--vend-credentials", "static"] });
    db = await lancedb.connectNamespace("rest", { uri: server.url });
  });
  after(async () => {
    await server?.stop();
    server?.cleanup();
    await gateway?.stop();
  });

  test("every operation works and every file is in the bucket", async () => {
    const t = await db.createTable("events", rows(0, 300));
    await t.add(rows(300, 100));
    await t.mergeInsert("id").whenMatchedUpdateAll().whenNotMatchedInsertAll().execute(
      [{ id: 5, vector: [9, 9, 9, 9], name: "merged 5" }, { id: 1000, vector: [0, 0, 0, 1], name: "new 1000" }]);
    await t.delete("id >= 390 AND id < 400");
    assert.equal(await t.countRows(), 391);
    await t.createIndex("vector", { config: lancedb.Index.ivfPq({ numPartitions: 2, numSubVectors: 2 }) });
    await t.createIndex("id");
    const indexes = (await t.listIndices()).map((i) => i.name).sort();
    assert.deepEqual(indexes, ["id_idx", "vector_idx"]);

    // A second connection opens the table from the catalog and reads it.
    const other = await lancedb.connectNamespace("rest", { uri: server.url });
    const reopened = await other.openTable("events");
    assert.equal(await reopened.countRows(), 391);
    const near = await reopened.vectorSearch([9, 9, 9, 9]).limit(1).toArray();
    assert.equal(near[0].id, 5);
    assert.equal(near[0].name, "merged 5");
    const found = await reopened.query().where("id = 1000").toArray();
    assert.equal(found[0].name, "new 1000");

    // Versions, tags and time travel.
    const version = await reopened.version();
    const versions = (await reopened.listVersions()).map((v) => v.version);
    assert.deepEqual(versions, Array.from({ length: version }, (_, i) => i + 1));
    const listed = await api(server.url, "/v1/table/events/version/list");
    assert.deepEqual(listed.versions.map((v) => v.version), versions);
    const tags = await reopened.tags();
    await tags.create("loaded", 2);
    assert.equal(await tags.getVersion("loaded"), 2);
    await reopened.checkout("loaded");
    assert.equal(await reopened.countRows(), 400);
    await reopened.checkout(1);
    assert.equal(await reopened.countRows(), 300);
    await reopened.checkoutLatest();
    assert.equal(await reopened.countRows(), 391);

    // Every data file and manifest is in the bucket, under the table's
    // location; lancens recorded each final manifest; nothing is on local
    // disk but the catalog database.
    const desc = await api(server.url, "/v1/table/events/describe", {});
    assert.match(desc.location, /^s3:\/\/lance\/wh\/events-[0-9a-f]+\.lance$/);
    assert.equal(desc.storage_options.aws_endpoint, gateway.endpoint);
    const prefix = desc.location.slice("s3://lance/".length);
    const stored = files(join(gateway.dir, "lance"));
    assert.ok(stored.length > 0 && stored.every((f) => f.startsWith(prefix + "/")), stored.join("\n"));
    assert.ok(stored.some((f) => f.startsWith(prefix + "/data/") && f.endsWith(".lance")), "no data files");
    assert.ok(stored.some((f) => f.startsWith(prefix + "/_indices/")), "no index files");
    for (const v of listed.versions) {
      assert.ok(v.manifest_path.startsWith(prefix + "/_versions/") && v.manifest_path.endsWith(".manifest"), v.manifest_path);
      assert.ok(stored.includes(v.manifest_path), `${v.manifest_path} not in the bucket`);
    }
    const manifests = stored.filter((f) => f.startsWith(prefix + "/_versions/"));
    assert.deepEqual(manifests.sort(), listed.versions.map((v) => v.manifest_path).sort(), "a staged manifest was left behind");
    const local = files(server.dir);
    assert.ok(local.every((f) => f.startsWith("lancens.db")), `on local disk: ${local.join(", ")}`);

    // A drop deletes the table's objects in the background.
    await db.dropTable("events");
    for (let i = 0; files(join(gateway.dir, "lance")).some((f) => f.startsWith(prefix + "/")); i++) {
      assert.ok(i < 200, "the dropped table's objects are still there");
      await new Promise((r) => setTimeout(r, 50));
    }
    assert.deepEqual(await db.tableNames(), []);
  });

  // A table created over the LanceDB remote API is a Lance dataset in the
  // bucket, which namespace mode opens with the storage options lancens
  // vends.
  test("a table created in remote mode is opened in namespace mode", async () => {
    const remote = await lancedb.connect("db://e2e", { apiKey: "unused", hostOverride: server.url });
    await remote.createTable("managed", rows(0, 3));
    const desc = await api(server.url, "/v1/table/managed/describe", {});
    assert.match(desc.location, /^s3:\/\/lance\/wh\/managed-[0-9a-f]+\.lance$/);
    assert.equal(desc.managed_versioning, true);
    assert.equal(desc.storage_options.aws_endpoint, gateway.endpoint);
    const opened = await db.openTable("managed");
    assert.equal(await opened.countRows(), 3);
    await opened.add(rows(3, 2));
    const prefix = desc.location.slice("s3://lance/".length);
    assert.ok(files(join(gateway.dir, "lance")).some((f) => f.startsWith(prefix + "/data/")), "no data file in the bucket");
    assert.equal(await (await remote.openTable("managed")).countRows(), 5);
    await remote.dropTable("managed");
  });

  test("namespaces and a cascading drop on S3", async () => {
    await db.createNamespace(["archive"]);
    const inner = await db.createTable("old", rows(0, 10), ["archive"]);
    await inner.add(rows(10, 5));
    assert.equal(await inner.countRows(), 15);
    const desc = await api(server.url, "/v1/table/archive$old/describe", {});
    const prefix = desc.location.slice("s3://lance/".length);
    assert.ok(prefix.startsWith("wh/archive/old-"), prefix);
    assert.ok(files(join(gateway.dir, "lance")).some((f) => f.startsWith(prefix + "/data/")));
    await db.dropNamespace(["archive"], { behavior: "cascade" });
    for (let i = 0; files(join(gateway.dir, "lance")).some((f) => f.startsWith(prefix + "/")); i++) {
      assert.ok(i < 200, "the dropped namespace's table objects are still there");
      await new Promise((r) => setTimeout(r, 50));
    }
  });
});
