// Table and index statistics of lancens against LanceDB embedded (the
// Lance engine itself, in a local directory) for the same operations:
// where both report a statistic, they must agree.
import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import * as lancedb from "@lancedb/lancedb";
import { startServer } from "./server.mjs";

function makeRows(n, start = 0) {
  const rows = [];
  for (let i = start; i < start + n; i++) {
    rows.push({ id: i, text: `row ${i} about ${["cats", "dogs", "birds"][i % 3]}`, vector: [Math.sin(i), Math.cos(i), (i % 7) / 7, (i % 11) / 11] });
  }
  return rows;
}

// waitIndexed polls an index until it covers every row (a lancens build
// runs in the background).
async function waitIndexed(tbl, name) {
  for (let i = 0; i < 600; i++) {
    const s = await tbl.indexStats(name);
    if (s && s.numUnindexedRows === 0) return s;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`index ${name} never covered every row`);
}

// lanceDeleted is Lance's num_deleted_rows from stats(): the rows of the
// fragments (physical rows) less the rows the table shows; with at most
// two fragments min and max are their lengths.
function lanceDeleted(stats) {
  const { numFragments, lengths } = stats.fragmentStats;
  assert.ok(numFragments <= 2);
  const physical = numFragments === 1 ? lengths.min : lengths.min + lengths.max;
  return physical - stats.numRows;
}

describe("statistics agree with LanceDB embedded", () => {
  let server, remote, local, dir;

  before(async () => {
    server = await startServer({ apiKey: "k" });
    remote = await lancedb.connect("db://stats", { apiKey: "k", hostOverride: server.url });
    dir = mkdtempSync(join(tmpdir(), "lancens-embedded-"));
    local = await lancedb.connect(dir);
  });
  after(async () => {
    await server.stop();
    server.cleanup();
    rmSync(dir, { recursive: true, force: true });
  });

  // both runs f on the same table in lancens and in LanceDB embedded.
  const both = async (f) => [await f(remote, "r"), await f(local, "l")];

  async function describeStats(name) {
    const res = await fetch(`${server.url}/v1/table/${name}/describe`, {
      method: "POST", headers: { "x-api-key": "k", "content-type": "application/json" }, body: "{}",
    });
    assert.equal(res.status, 200);
    return (await res.json()).stats;
  }

  test("rows, fragments and num_deleted_rows after updates and deletes", async () => {
    const [r, l] = await both(async (db) => {
      const t = await db.createTable("rows", makeRows(2001));
      await t.update({ where: "id < 3", values: { text: "updated" } });
      await t.delete("id >= 1000 AND id < 1010");
      await t.delete("id = 1");
      return t;
    });
    const [rs, ls] = [await r.stats(), await l.stats()];
    assert.equal(rs.numRows, ls.numRows);
    assert.deepEqual(rs.fragmentStats, ls.fragmentStats);
    const deleted = lanceDeleted(ls);
    assert.equal(deleted, 14);
    assert.deepEqual(await describeStats("rows"), { num_deleted_rows: deleted, num_fragments: ls.fragmentStats.numFragments });

    // Every row rewritten: the old fragments are gone, nothing is deleted.
    await r.update({ values: { text: "all" } });
    await l.update({ values: { text: "all" } });
    const [rs2, ls2] = [await r.stats(), await l.stats()];
    assert.deepEqual(rs2.fragmentStats, ls2.fragmentStats);
    assert.equal(lanceDeleted(ls2), 0);
    assert.deepEqual(await describeStats("rows"), { num_deleted_rows: 0, num_fragments: 1 });
  });

  test("index coverage follows appends, time travel and restore", async () => {
    // Version 1 has rows, version 2 more; the indexes are built then (Lance
    // commits a version per index, lancens none).
    const [r, l] = await both(async (db) => {
      const t = await db.createTable("idx", makeRows(1000));
      await t.add(makeRows(990, 1000));
      await t.createIndex("vector", { config: lancedb.Index.ivfPq({ numPartitions: 2, numSubVectors: 2 }), name: "vec" });
      await t.createIndex("id", { config: lancedb.Index.btree(), name: "ids" });
      await t.createIndex("text", { config: lancedb.Index.fts(), name: "words" });
      return t;
    });
    await waitIndexed(r, "vec");
    const built = [await r.version(), await l.version()];
    const compare = async (what, names = ["vec", "ids", "words"]) => {
      for (const name of names) {
        const [rs, ls] = [await r.indexStats(name), await l.indexStats(name)];
        assert.deepEqual(
          { rows: rs?.numIndexedRows, unindexed: rs?.numUnindexedRows, type: rs?.indexType, distance: rs?.distanceType },
          { rows: ls?.numIndexedRows, unindexed: ls?.numUnindexedRows, type: ls?.indexType, distance: ls?.distanceType },
          `${what}: ${name}`);
      }
      assert.deepEqual((await r.listIndices()).map((i) => i.name).sort(), (await l.listIndices()).map((i) => i.name).sort(), what);
    };
    await compare("built");
    await r.add(makeRows(5, 5000));
    await l.add(makeRows(5, 5000));
    // lancens' scalar and full-text indexes take new rows at once, Lance's
    // on optimize: only the vector index compares here.
    await compare("after an append", ["vec"]);
    await r.checkout(1);
    await l.checkout(1);
    await compare("a version older than the indexes");
    await r.checkout(built[0]);
    await l.checkout(built[1]);
    await compare("the version the indexes were built on");
    for (const t of [r, l]) {
      await t.restore();
      await t.checkoutLatest();
    }
    await waitIndexed(r, "vec");
    await compare("restored to that version");
  });
});
