// Indexes beside the data: lancens keeps the
// files of the indexes it builds under the table's root, in _lancens/,
// outside the manifest. The LanceDB SDK writing the same table in
// namespace mode, compacting it and cleaning up its old versions (its
// optimize, with deleteUnverified) leaves them alone, and lancens keeps
// searching through them, exactly for the fragments written since.
import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import { readdirSync, statSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import * as lancedb from "@lancedb/lancedb";
import { api, startServer } from "./server.mjs";

const rows = (start, n, tag = "r") => Array.from({ length: n }, (_, i) => ({
  id: start + i, vector: [Math.sin(start + i), Math.cos(start + i), (start + i) % 5, 1], text: `${tag} birds ${(start + i) % 7}`,
}));

// indexFiles lists the files below a table's _lancens/ with their sizes.
function indexFiles(root) {
  const out = {};
  const walk = (dir) => {
    for (const e of readdirSync(dir, { withFileTypes: true })) {
      const p = join(dir, e.name);
      if (e.isDirectory()) walk(p);
      else out[p.slice(root.length)] = statSync(p).size;
    }
  };
  walk(join(root, "_lancens"));
  return out;
}

let server;
before(async () => { server = await startServer(); });
after(async () => {
  await server?.stop();
  server?.cleanup();
});

test("Lance's optimize and cleanup leave lancens's index files alone", async () => {
  const remote = await lancedb.connect("db://idx", { apiKey: "k", hostOverride: server.url });
  const ns = await lancedb.connectNamespace("rest", { uri: server.url });
  const r = await remote.createTable("t", rows(0, 300));
  await r.createIndex("vector", { config: lancedb.Index.ivfPq({ numPartitions: 2, numSubVectors: 2 }), name: "vec", waitTimeoutSeconds: 60 });
  await r.createIndex("id", { config: lancedb.Index.btree(), name: "ids" });
  await r.createIndex("text", { config: lancedb.Index.fts(), name: "words", waitTimeoutSeconds: 60 });
  const desc = await api(server.url, "/v1/table/t/describe", {});
  const root = desc.location.startsWith("file://") ? fileURLToPath(desc.location) : desc.location;
  const before = indexFiles(root);
  assert.equal(Object.keys(before).length, 3, JSON.stringify(before));
  assert.match(await r.vectorSearch([0, 1, 0, 1]).limit(3).explainPlan(), /search through IVF_PQ index vec[^]*covers 1 of 1 fragments/);

  // The SDK writes the table in namespace mode, sees none of lancens's
  // indexes in the manifest, then compacts it and removes every old
  // version and every file it does not know.
  const n = await ns.openTable("t");
  assert.deepEqual(await n.listIndices(), []);
  await n.add(rows(300, 20, "ns"));
  await n.delete("id < 5");
  const stats = await n.optimize({ cleanupOlderThan: new Date(Date.now() + 60_000), deleteUnverified: true });
  assert.ok(stats.compaction.fragmentsRemoved > 0, JSON.stringify(stats));
  assert.ok(stats.prune.oldVersionsRemoved > 0, JSON.stringify(stats));
  assert.equal(await n.countRows(), 315);
  assert.deepEqual(indexFiles(root), before);

  // lancens still lists and uses its indexes: the compacted fragments are
  // not covered any more, and are searched exactly.
  const listed = Object.fromEntries((await r.listIndices()).map((i) => [i.name, i]));
  assert.deepEqual(Object.keys(listed).sort(), ["ids", "vec", "words"]);
  const st = await r.indexStats("vec");
  assert.equal(st.numIndexedRows + st.numUnindexedRows, 315);
  const near = await r.vectorSearch([Math.sin(310), Math.cos(310), 0, 1]).limit(1).toArray();
  assert.equal(Number(near[0].id), 310);
  assert.equal((await r.query().where("id = 3").toArray()).length, 0);
  assert.equal((await r.search("ns", "fts").limit(100).toArray()).length, 20);
  assert.match(await r.vectorSearch([0, 1, 0, 1]).limit(3).explainPlan(), /exact search/);
});
