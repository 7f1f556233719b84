// Upgrading: a database made by lancens f365447, whose remote-mode tables
// kept their rows inside its SQLite file (store/sqlite/legacy/convert/
// testdata/f365447), started with `lancens serve`. The server
// converts them into Lance datasets before it serves; the LanceDB SDK then
// opens them in namespace mode — Lance itself reads every version the
// catalog records — and in remote mode, and gets the rows f365447 answered.
import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import { copyFileSync, mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import * as lancedb from "@lancedb/lancedb";
import { tableFromIPC } from "apache-arrow";
import { startServer } from "./server.mjs";

const fixture = join(import.meta.dirname, "..", "..", "store", "sqlite", "legacy", "convert", "testdata", "f365447");
const manifest = JSON.parse(readFileSync(join(fixture, "fixture.json"), "utf8"));
const docs = manifest.tables.find((t) => t.id.join("$") === "fx$docs");

// answer returns the ids of a recorded answer, in order.
const answer = (file) => Array.from(tableFromIPC(readFileSync(join(fixture, "answers", file))).getChild("id").toArray(), Number);
const ids = (rows) => rows.map((r) => Number(r.id));

let server;

before(async () => {
  const dir = mkdtempSync(join(tmpdir(), "lancens-e2e-migrate-"));
  copyFileSync(join(fixture, "fixture.db"), join(dir, "lancens.db"));
  server = await startServer({ dir });
});
after(async () => {
  await server?.stop();
  server?.cleanup();
});

test("namespace mode reads every version of a converted table with Lance", async () => {
  const ns = await lancedb.connectNamespace("rest", { uri: server.url });
  const t = await ns.openTable("docs", ["fx"]);
  const versions = (await t.listVersions()).map((v) => v.version);
  assert.deepEqual(versions, Object.keys(docs.branches.main).map(Number).sort((a, b) => a - b));
  for (const v of versions) {
    await t.checkout(v);
    assert.deepEqual(ids(await t.query().select(["id"]).toArray()), answer(docs.branches.main[v]), `version ${v}`);
  }
  await t.checkoutLatest();
  // Lance writes the converted table; the version after the row store's last.
  await t.add([{ id: 9001, text: "from namespace mode", category: "alpha", tags: ["ns"], vector: [0, 1, 0, 0, 0, 0, 0, 0], meta: null }]);
  assert.equal(await t.version(), versions.at(-1) + 1);
});

test("remote mode answers for a converted table, tags and time travel included", async () => {
  const remote = await lancedb.connect("db://upgrade", { apiKey: "k", hostOverride: server.url });
  const t = await remote.openTable("fx$docs");
  await t.checkout(docs.tags["before-schema"]);
  assert.deepEqual(ids(await t.query().select(["id"]).limit(1000).toArray()), answer(docs.branches.main[docs.tags["before-schema"]]));
  await t.checkoutLatest();
  const latest = Math.max(...Object.keys(docs.branches.main).map(Number));
  assert.equal(await t.countRows(), answer(docs.branches.main[latest]).length + 1);
});
