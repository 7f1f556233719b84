// The LanceDB SDK in namespace mode (connectNamespace("rest", {uri})): the
// catalog is lancens; Lance writes the data files itself in the location
// lancens hands out and, because lancens answers managed_versioning, commits
// every version through lancens' version API.
import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { readdirSync } from "node:fs";
import * as lancedb from "@lancedb/lancedb";
import { api, startServer } from "./server.mjs";

const rows = (start, n) => Array.from({ length: n }, (_, i) => ({ id: start + i, vector: [start + i, 1, 0, 0], name: `row ${start + i}` }));

describe("LanceDB namespace mode", () => {
  let server;
  let db;

  before(async () => {
    server = await startServer();
    db = await lancedb.connectNamespace("rest", { uri: server.url });
  });
  after(async () => {
    await server.stop();
    server.cleanup();
  });

  test("commits go through lancens and survive a restart", async () => {
    const t = await db.createTable("events", rows(0, 3));
    await t.add(rows(3, 2));
    await t.add(rows(5, 1));
    assert.equal(await t.countRows(), 6);
    assert.equal(await t.version(), 3);

    // lancens declared the table in its warehouse and recorded each commit.
    const desc = await api(server.url, "/v1/table/events/describe", {});
    assert.equal(desc.managed_versioning, true);
    assert.ok(desc.location.startsWith(server.dir));
    const listed = await api(server.url, "/v1/table/events/version/list");
    assert.deepEqual(listed.versions.map((v) => v.version), [1, 2, 3]);
    const latest = await api(server.url, "/v1/table/events/version/list?descending=true&limit=1");
    assert.equal(latest.versions[0].version, 3);
    // Each recorded manifest is a final manifest file of the table.
    const files = readdirSync(desc.location + "/_versions").filter((f) => f.endsWith(".manifest"));
    for (const v of listed.versions) {
      assert.ok(files.some((f) => v.manifest_path.endsWith("/_versions/" + f)), v.manifest_path);
    }

    // A restarted server on the same data serves the same table.
    await server.stop();
    server = await startServer({ dir: server.dir });
    db = await lancedb.connectNamespace("rest", { uri: server.url });
    const reopened = await db.openTable("events");
    assert.equal(await reopened.countRows(), 6);
    assert.equal(await reopened.version(), 3);
    await reopened.add(rows(6, 1));
    const after = await api(server.url, "/v1/table/events/version/list");
    assert.deepEqual(after.versions.map((v) => v.version), [1, 2, 3, 4]);

    // Old versions stay readable.
    const old = await db.openTable("events");
    await old.checkout(1);
    assert.equal(await old.countRows(), 3);
    const found = await old.query().where("id = 2").toArray();
    assert.equal(found[0].name, "row 2");
  });

  test("a name with a space, from a client that sends the remote dialect's header too", async () => {
    // The path carries "my+tbl-1.x" (form encoding), the body id the exact name.
    const withHeader = await lancedb.connectNamespace("rest", { uri: server.url, headers: { "x-lancedb-database": "e2e" } });
    const t = await withHeader.createTable("my tbl-1.x", rows(0, 2));
    await t.add(rows(2, 1));
    const reopened = await withHeader.openTable("my tbl-1.x");
    assert.equal(await reopened.countRows(), 3);
    const desc = await api(server.url, "/v1/table/my%20tbl-1.x/describe", {});
    assert.equal(desc.managed_versioning, true);
    await withHeader.dropTable("my tbl-1.x");
    await assert.rejects(withHeader.openTable("my tbl-1.x"), /not found/i);
  });

  test("tags, search, listing and drop", async () => {
    const t = await db.createTable("things", rows(0, 20));
    await t.add(rows(20, 5));
    const tags = await t.tags();
    await tags.create("initial", 1);
    assert.equal(await tags.getVersion("initial"), 1);
    await t.checkout("initial");
    assert.equal(await t.countRows(), 20);
    await t.checkoutLatest();
    const near = await t.vectorSearch([21, 1, 0, 0]).limit(1).toArray();
    assert.equal(near[0].id, 21);
    assert.deepEqual((await db.tableNames()).sort(), ["events", "things"]);
    await db.createNamespace(["archive"]);
    const inner = await db.createTable("old", rows(0, 2), ["archive"]);
    assert.equal(await inner.countRows(), 2);
    assert.deepEqual(await db.tableNames(["archive"]), ["old"]);
    await db.dropTable("things");
    assert.deepEqual(await db.tableNames(), ["events"]);
    await db.dropNamespace(["archive"], { behavior: "cascade" });
    assert.deepEqual((await db.listNamespaces()).namespaces, []);
  });
});
