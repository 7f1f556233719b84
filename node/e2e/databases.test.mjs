// The LanceDB SDK in remote mode against a lancens serving one database per
// top-level namespace (--route-databases) with access control
// (--auth-config): connect("db://alpha", …) and connect("db://beta", …)
// each see only their own tables, and each key reaches only its database.
import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import * as lancedb from "@lancedb/lancedb";
import { startServer } from "./server.mjs";

const authConfig = `
keys:
  - { name: alpha-writer, key: key-alpha, role: write, namespaces: [alpha] }
  - { name: beta-writer, key: key-beta, role: write, namespaces: [beta] }
  - { name: alpha-reader, key: key-alpha-read, role: read, namespaces: [alpha] }
  - { name: operator, key: key-admin, role: admin }
`;

const rows = (n, tag) => Array.from({ length: n }, (_, i) => ({ id: i, text: `${tag} ${i}`, vector: [i, 1, 0, 0.5] }));

describe("LanceDB remote mode, one database per top-level namespace", () => {
  let server;
  const connect = (db, apiKey) => lancedb.connect(`db://${db}`, { apiKey, hostOverride: server.url });

  before(async () => {
    const dir = mkdtempSync(join(tmpdir(), "lancens-e2e-"));
    writeFileSync(join(dir, "auth.yaml"), authConfig);
    server = await startServer({ dir, args: ["--route-databases", "--auth-config", join(dir, "auth.yaml")] });
    // A database is a top-level namespace, which an admin creates.
    for (const db of ["alpha", "beta"]) {
      const res = await fetch(`${server.url}/v1/namespace/${db}/create`, {
        method: "POST", headers: { "x-api-key": "key-admin", "content-type": "application/json" }, body: "{}",
      });
      assert.equal(res.status, 200, await res.text());
    }
  });
  after(async () => {
    await server.stop();
    server.cleanup();
  });

  test("two databases, one key each, no cross-visibility", async () => {
    const alpha = await connect("alpha", "key-alpha");
    const beta = await connect("beta", "key-beta");
    await alpha.createTable("docs", rows(5, "alpha"));
    await alpha.createTable("only_alpha", rows(2, "alpha"));
    await beta.createTable("docs", rows(3, "beta"));

    assert.deepEqual(await alpha.tableNames(), ["docs", "only_alpha"]);
    assert.deepEqual(await beta.tableNames(), ["docs"]);
    assert.equal(await (await alpha.openTable("docs")).countRows(), 5);
    const betaDocs = await beta.openTable("docs");
    assert.equal(await betaDocs.countRows(), 3);
    const hits = await betaDocs.search([0, 1, 0, 0.5]).limit(10).toArray();
    assert.deepEqual(hits.map((r) => r.text).sort(), ["beta 0", "beta 1", "beta 2"]);
    await assert.rejects(beta.openTable("only_alpha"), /not found/i);

    // The catalog sees the databases as namespaces.
    const res = await fetch(`${server.url}/v1/table`, { headers: { "x-api-key": "key-admin" } });
    assert.deepEqual((await res.json()).tables, ["alpha$docs", "alpha$only_alpha", "beta$docs"]);
  });

  test("a key reaches only its own database", async () => {
    const intruder = await connect("beta", "key-alpha");
    await assert.rejects(intruder.tableNames(), /403/);
    await assert.rejects(intruder.createTable("planted", rows(1, "x")), /403/);
    const admin = await connect("beta", "key-admin");
    assert.deepEqual(await admin.tableNames(), ["docs"]);
    const missing = await connect("gamma", "key-admin");
    await assert.rejects(missing.tableNames(), /404|not found/i);
  });

  test("a read-only key reads its database and changes nothing", async () => {
    const reader = await connect("alpha", "key-alpha-read");
    const docs = await reader.openTable("docs");
    assert.equal(await docs.countRows(), 5);
    await assert.rejects(docs.add(rows(1, "late")), /403/);
    await assert.rejects(docs.delete("id = 0"), /403/);
    await assert.rejects(reader.dropTable("docs"), /403/);
    assert.equal(await docs.countRows(), 5);
  });
});
