// The web console in a real browser: Debian's Chromium, driven headless by
// playwright-core (no browser is ever downloaded). Data is made through the
// API; then the browser signs in, browses namespaces and tables, runs a
// filtered query, a full-text and a vector search, builds an index and
// watches it finish, draws the projection and reads the status page; no
// page shows stray text; under access control a read-only key gets no
// write controls (read from /auth/principal, with no probing writes); a
// server without keys opens with no sign-in step.
// Screenshots go to a temporary folder named in the log.
import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { existsSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import * as arrow from "apache-arrow";
import { chromium } from "playwright-core";
import { startServer } from "./server.mjs";

const executablePath = process.env.LANCENS_CHROMIUM ?? "/usr/bin/chromium";
const haveChromium = existsSync(executablePath);
// Without Chromium the tests skip, except in CI where they must run.
const skip = !haveChromium && process.env.CI !== "true" ? `no Chromium at ${executablePath} (make chromium installs it)` : false;

const key = "console-e2e-key";
const categories = ["fruit", "tool", "toy"];
const words = { fruit: ["apple", "pear", "plum"], tool: ["hammer", "saw", "drill"], toy: ["kite", "ball", "yoyo"] };
const dim = 8;
const bigRows = 20000;

// The rows of the managed table: three clusters of vectors, one per category.
function makeRows(n) {
  const rows = [];
  for (let i = 0; i < n; i++) {
    const cat = categories[i % 3];
    const centre = categories.indexOf(cat);
    const vector = Array.from({ length: dim }, (_, j) => (j === centre ? 4 : 0) + Math.sin(i * 7 + j * 13) * 0.3);
    rows.push({ id: i, name: `${words[cat][Math.floor(i / 3) % 3]} number ${i}`, category: cat, price: i * 1.5, vector });
  }
  return rows;
}

// bigTable is an Arrow stream of n rows of random 64-dimensional vectors:
// enough that building an index on them takes a moment to watch.
function bigTable(n) {
  const bigDim = 64;
  const vectorType = new arrow.FixedSizeList(bigDim, new arrow.Field("item", new arrow.Float32(), true));
  let seed = 1;
  const next = () => (seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648;
  const vectors = Array.from({ length: n }, () => Array.from({ length: bigDim }, next));
  return arrow.tableToIPC(new arrow.Table({
    id: arrow.vectorFromArray(Array.from({ length: n }, (_, i) => i), new arrow.Int32()),
    vector: arrow.vectorFromArray(vectors, vectorType),
  }), "stream");
}

function arrowBody(rows) {
  const vectorType = new arrow.FixedSizeList(dim, new arrow.Field("item", new arrow.Float32(), true));
  const table = new arrow.Table({
    id: arrow.vectorFromArray(rows.map((r) => r.id), new arrow.Int32()),
    name: arrow.vectorFromArray(rows.map((r) => r.name), new arrow.Utf8()),
    category: arrow.vectorFromArray(rows.map((r) => r.category), new arrow.Utf8()),
    price: arrow.vectorFromArray(rows.map((r) => r.price), new arrow.Float64()),
    vector: arrow.vectorFromArray(rows.map((r) => r.vector), vectorType),
  });
  return arrow.tableToIPC(table, "stream");
}

describe("web console", { skip }, () => {
  let server;
  let browser;
  let page;
  let shots;
  const rows = makeRows(300);
  // The only origins the page may reach: the servers of the test.
  const origins = [];

  const api = async (path, body, { method = "POST", contentType = "application/json" } = {}) => {
    const res = await fetch(server.url + path, {
      method, headers: { "x-api-key": key, "content-type": contentType },
      body: method === "GET" ? undefined : contentType === "application/json" ? JSON.stringify(body ?? {}) : body,
    });
    const text = await res.text();
    return { status: res.status, body: text && res.headers.get("content-type")?.includes("json") ? JSON.parse(text) : text };
  };
  const ok = async (path, body, opts) => {
    const r = await api(path, body, opts);
    assert.equal(r.status, 200, `${path}: ${JSON.stringify(r.body)}`);
    return r.body;
  };
  const shot = (name) => page.screenshot({ path: join(shots, `${name}.png`), fullPage: true });

  before(async () => {
    assert.ok(haveChromium, `Chromium is required under CI=true: no ${executablePath} (make chromium installs it)`);
    server = await startServer({ apiKey: key });
    origins.push(server.url);
    await ok("/v1/namespace/shop/create");
    await ok("/v1/namespace/shop$eu/create");
    await ok("/v1/namespace/empty/create");
    await ok("/v1/table/shop$items/create", arrowBody(rows), { contentType: "application/vnd.apache.arrow.stream" });
    await ok("/v1/table/shop$items/create_index", { column: "name", index_type: "FTS" });
    await ok("/v1/table/shop$big/create", bigTable(bigRows), { contentType: "application/vnd.apache.arrow.stream" });
    await ok("/v1/table/shop$items/tags/create", { tag: "golden", version: 1 });
    await ok("/v1/table/shop$items/branches/create", { name: "experiment", from_version: 1 });
    for (let i = 0; i < 6; i++) await ok(`/v1/table/shop$files${i}/declare`, {});
    shots = mkdtempSync(join(tmpdir(), "lancens-console-shots-"));
    console.log(`console screenshots: ${shots}`);
    browser = await chromium.launch({
      executablePath, headless: true,
      args: ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
        "--disable-sync", "--no-first-run"],
    });
    page = await browser.newPage({ viewport: { width: 1024, height: 800 } });
    page.setDefaultTimeout(20_000);
    page.on("pageerror", (e) => { throw e; });
    // Nothing may leave the server's origin.
    await page.route("**/*", (route) => {
      if (!origins.some((o) => route.request().url().startsWith(o))) return route.abort();
      return route.continue();
    });
  });
  after(async () => {
    await browser?.close();
    await server?.stop();
    server?.cleanup();
  });

  test("a wrong key is refused with its Lance code; the right one signs in", async () => {
    await page.goto(`${server.url}/console/`);
    await page.getByLabel("API key or token").fill("wrong");
    await page.getByRole("button", { name: "Connect" }).click();
    await page.getByRole("alert").filter({ hasText: "Lance error code 16" }).waitFor();
    await page.getByLabel("API key or token").fill(key);
    await page.getByRole("button", { name: "Connect" }).click();
    await page.getByRole("heading", { name: "Root namespace" }).waitFor();
    assert.equal(await page.evaluate(() => Object.keys(sessionStorage).length), 1);
  });

  test("namespace tree, table kinds and paging", async () => {
    await page.getByRole("navigation", { name: "Namespace tree" }).getByRole("link", { name: "shop" }).click();
    await page.getByRole("heading", { name: "Namespace shop" }).waitFor();
    await page.getByRole("navigation", { name: "Namespace tree" }).getByRole("link", { name: "eu" }).waitFor();
    const tables = page.locator("#tables");
    await tables.waitFor();
    await page.getByLabel("tables per page").selectOption("5");
    const pager = page.getByRole("group", { name: "tables pages" });
    await page.waitForFunction(() => document.querySelectorAll("#tables tbody tr").length === 5);
    await pager.getByText("Page 1").waitFor();
    const firstPage = await page.locator("#tables tbody tr td:first-child").allTextContents();
    assert.equal(firstPage.length, 5);
    await pager.getByRole("button", { name: "Next" }).click();
    await pager.getByText("Page 2").waitFor();
    const secondPage = await page.locator("#tables tbody tr td:first-child").allTextContents();
    assert.deepEqual([...firstPage, ...secondPage].sort(), ["big", "files0", "files1", "files2", "files3", "files4", "files5", "items"]);
    const kinds = Object.fromEntries(await page.locator("#tables tbody tr").evaluateAll((trs) =>
      trs.map((tr) => [tr.cells[0].textContent, tr.cells[1].textContent])));
    // Every table is Lance files, whatever made it.
    for (const [name, kind] of Object.entries(kinds)) assert.equal(kind, "Lance files", name);
    assert.ok(await page.getByRole("button", { name: "Create namespace" }).isVisible(), "a key that may write gets write controls");
    await shot("namespace");
  });

  test("an empty namespace says so", async () => {
    await page.goto(`${server.url}/console/#/ns/empty`);
    await page.getByText("This namespace has no tables.").waitFor();
    await page.getByText("No child namespaces.").waitFor();
  });

  test("the table page: schema, rows, location, versions, indexes", async () => {
    await page.goto(`${server.url}/console/#/ns/shop`);
    await page.locator("#tables").getByRole("link", { name: "items" }).click();
    await page.getByRole("heading", { name: /Table items/ }).waitFor();
    await page.locator("#row-count").filter({ hasText: "300" }).waitFor();
    const schema = await page.locator("#schema tbody tr td:first-child").allTextContents();
    assert.deepEqual(schema, ["id", "name", "category", "price", "vector"]);
    assert.match(await page.locator("#schema tbody tr").last().textContent(), /fixed_size_list<float32>\[8\]/);
    assert.match(await page.locator("#location").textContent(),
      new RegExp(`^${server.dir}/warehouse/shop/items-[0-9a-f]+\\.lance$`));
    await page.locator("#versions li").first().waitFor();
    const described = await ok("/v1/table/shop$items/describe", {});
    assert.match(await page.locator("#versions li").first().textContent(), new RegExp(`^v${described.version}\\b`));
    assert.match(await page.locator("#versions li").filter({ hasText: /^v1\b/ }).textContent(), /tag golden/);
    assert.equal(await page.locator("#branches li").first().textContent(), "experiment (from v1)");
    await page.locator('#indexes tr[data-index="name_idx"] .status').filter({ hasText: "SUCCEEDED" }).waitFor();
    // The first rows are on the page, without running a query.
    await page.locator("#first-rows tbody tr").first().waitFor();
    assert.deepEqual(await page.locator("#first-rows tbody tr td:first-child").allTextContents(), rows.slice(0, 10).map((r) => String(r.id)));
    assert.deepEqual(await page.locator("#first-rows thead th").allTextContents(), ["id", "name", "category", "price", "vector"]);
    await shot("table");
  });

  test("an index built from the console is watched until it finishes", async () => {
    await page.goto(`${server.url}/console/#/table/shop$big`);
    await page.locator("#indexes").getByText("No indexes.").waitFor();
    await page.getByLabel("Column").selectOption("vector");
    await page.getByLabel("Index type").selectOption("IVF_PQ");
    await page.getByLabel("Distance (vector indexes)").selectOption("cosine");
    // Record every status the page shows for the new index.
    await page.evaluate(() => {
      window.shownStatuses = [];
      new MutationObserver(() => {
        const s = document.querySelector('#indexes tr[data-index="vector_idx"] .status')?.textContent;
        if (s && s !== window.shownStatuses.at(-1)) window.shownStatuses.push(s);
      }).observe(document.getElementById("indexes"), { childList: true, subtree: true, characterData: true });
    });
    await page.getByRole("button", { name: "Create index" }).click();
    const row = page.locator('#indexes tr[data-index="vector_idx"]');
    await row.waitFor();
    await row.locator(".status").filter({ hasText: "SUCCEEDED" }).waitFor({ timeout: 60_000 });
    const shown = await page.evaluate(() => window.shownStatuses);
    console.log(`index statuses shown: ${shown.join(" → ")}`);
    assert.deepEqual(shown, ["BUILDING", "SUCCEEDED"], "the page showed the build running, then finished");
    assert.equal(await row.locator("td").nth(5).textContent(), `${bigRows} of ${bigRows}`);
    const progress = row.locator("progress");
    assert.equal(await progress.evaluate((p) => p.value === p.max), true);
    await page.locator("#jobs td").filter({ hasText: "Succeeded" }).waitFor({ timeout: 30_000 });
    const list = await ok("/v1/table/shop$big/index/list", {});
    assert.equal(list.indexes.find((ix) => ix.index_name === "vector_idx")?.status, "SUCCEEDED");
    await shot("index-built");
  });

  test("a filtered query shows the expected rows, the version read and the curl", async () => {
    await page.goto(`${server.url}/console/#/table/shop$items`);
    await page.getByRole("link", { name: "Query this table" }).click();
    await page.getByRole("heading", { name: "Query items" }).waitFor();
    await page.getByLabel("Filter (SQL)").fill("category = 'tool' AND id < 30");
    await page.getByLabel("Order by").selectOption("id");
    await page.locator("#q-dir").selectOption("desc");
    await page.getByLabel("Limit").fill("50");
    await page.getByRole("button", { name: "Run query" }).click();
    const want = rows.filter((r) => r.category === "tool" && r.id < 30).map((r) => String(r.id)).reverse();
    await page.locator("#result-summary").filter({ hasText: `${want.length} rows` }).waitFor();
    const ids = await page.locator("#result-table tbody tr td:first-child").allTextContents();
    assert.deepEqual(ids, want);
    const described = await ok("/v1/table/shop$items/describe", {});
    assert.match(await page.locator("#result-summary").textContent(), new RegExp(`version read ${described.version}$`));
    // The next page of the same query, and only some columns.
    await page.getByLabel("Offset").fill("3");
    await page.getByLabel("Limit").fill("4");
    await page.getByRole("group", { name: "Columns" }).getByLabel("vector").uncheck();
    await page.getByRole("group", { name: "Columns" }).getByLabel("price").uncheck();
    await page.getByRole("button", { name: "Run query" }).click();
    await page.locator("#result-summary").filter({ hasText: "4 rows" }).waitFor();
    assert.deepEqual(await page.locator("#result-table tbody tr td:first-child").allTextContents(), want.slice(3, 7));
    assert.deepEqual(await page.locator("#result-table thead th").allTextContents(), ["id", "name", "category"]);
    await page.getByLabel("Offset").fill("0");
    await page.getByLabel("Limit").fill("50");
    await page.getByRole("group", { name: "Columns" }).getByLabel("vector").check();
    await page.getByRole("group", { name: "Columns" }).getByLabel("price").check();
    const command = await page.locator("#curl").textContent();
    assert.match(command, /\/v1\/table\/shop%24items\/query/);
    assert.match(command, /x-api-key: \$LANCENS_KEY/);
    assert.ok(!command.includes(key), "the curl command does not show the key");
    await shot("query");
  });

  test("an API error is shown with its Lance code; every control has a label", async () => {
    await page.getByLabel("Filter (SQL)").fill("no_such_column > 1");
    await page.getByRole("button", { name: "Run query" }).click();
    const alert = page.locator("#results").getByRole("alert");
    await alert.waitFor();
    const probe = await api("/v1/table/shop$items/query", { vector: null, k: 1, filter: "no_such_column > 1" });
    assert.ok(probe.status >= 400);
    assert.match(await alert.textContent(), new RegExp(`^Lance error code ${probe.body.code}, HTTP ${probe.status}: `));
    const unlabelled = await page.evaluate(() => [...document.querySelectorAll("input, select, textarea, button")]
      .filter((el) => !(el.labels?.length || el.getAttribute("aria-label") || (el.tagName === "BUTTON" && el.textContent.trim())))
      .map((el) => el.outerHTML));
    assert.deepEqual(unlabelled, []);
  });

  test("full-text search finds the rows with the word", async () => {
    await page.getByLabel("Filter (SQL)").fill("");
    await page.getByLabel("Order by").selectOption("");
    await page.getByLabel("Full-text search").fill("hammer");
    await page.getByRole("button", { name: "Run query" }).click();
    const want = rows.filter((r) => r.name.startsWith("hammer ")).length;
    await page.locator("#result-summary").filter({ hasText: `${Math.min(want, 50)} rows` }).waitFor();
    const names = await page.locator("#result-table tbody tr td:nth-child(2)").allTextContents();
    assert.ok(names.length > 0 && names.every((n) => n.startsWith("hammer ")), names.join("; "));
    await shot("fts");
  });

  test("find similar runs a vector search from a row", async () => {
    await page.getByLabel("Full-text search").fill("");
    await page.getByLabel("Filter (SQL)").fill("id = 42");
    await page.getByRole("button", { name: "Run query" }).click();
    await page.locator("#result-summary").filter({ hasText: "1 rows" }).waitFor();
    await page.getByLabel("Filter (SQL)").fill("");
    await page.getByLabel("k (nearest rows)").fill("5");
    await page.getByRole("button", { name: "Find similar" }).first().click();
    await page.locator("#result-summary").filter({ hasText: "5 rows" }).waitFor();
    const ids = await page.locator("#result-table tbody tr td:first-child").allTextContents();
    assert.equal(ids[0], "42", "the row itself is the nearest");
    const cats = await page.locator("#result-table tbody tr td:nth-child(3)").allTextContents();
    assert.deepEqual(cats, Array(5).fill(rows[42].category), "its neighbours are in its cluster");
    assert.match(await page.locator("#curl").textContent(), /"single_vector"/);
    await shot("vector-search");
  });

  test("the projection draws every sampled row and shows one on hover", async () => {
    await page.goto(`${server.url}/console/#/pca/shop$items`);
    await page.getByLabel("Colour by").selectOption("category");
    await page.getByRole("button", { name: "Draw" }).click();
    await page.locator("#pca-summary").filter({ hasText: "300 rows" }).waitFor();
    assert.equal(await page.locator("#pca-svg circle").count(), 300);
    assert.equal(new Set(await page.locator("#pca-svg circle").evaluateAll((cs) => cs.map((c) => c.getAttribute("fill")))).size, 3);
    // Hovering and keyboard focus both show the row behind a point.
    const shown = async () => Object.fromEntries(await page.locator("#pca-hover tr").evaluateAll((trs) =>
      trs.map((tr) => [tr.cells[0].textContent, tr.cells[1].textContent])));
    await page.locator("#pca-svg circle").nth(7).dispatchEvent("mouseenter");
    await page.locator("#pca-hover table").waitFor();
    let row = await shown();
    assert.equal(row.name, rows[Number(row.id)].name);
    await page.locator("#pca-svg circle").nth(100).focus();
    await page.locator("#pca-hover").filter({ hasNotText: `number ${row.id}` }).waitFor();
    row = await shown();
    assert.equal(row.category, rows[Number(row.id)].category);
    await shot("projection");
  });

  test("the status page shows health, and metrics or why there are none", async () => {
    await page.goto(`${server.url}/console/#/status`);
    await page.getByRole("heading", { name: "Server status" }).waitFor();
    await page.locator("#status-cards").waitFor();
    const card = (label) => page.locator(".card").filter({ has: page.locator(".label", { hasText: label }) }).locator(".value");
    assert.equal(await card("Liveness").textContent(), "ok");
    assert.equal(await card("Readiness").textContent(), "ok");
    await page.locator("#metric-cards").waitFor();
    const metrics = await api("/metrics", undefined, { method: "GET" });
    const version = metrics.body.match(/^lancens_build_info\{[^}]*version="([^"]*)"/m)?.[1];
    assert.ok(version, "the server reports its version");
    assert.ok((await card("Version").textContent()).startsWith(version));
    assert.ok(Number(await card("Requests").textContent()) > 0);
    assert.match(await card("Uptime").textContent(), /^\d+ (s|min)/);
    await shot("status");
  });

  test("a server whose metrics are on another address: the status page says so", async () => {
    const other = await startServer({ apiKey: key, args: ["--metrics-addr", "127.0.0.1:0"] });
    origins.push(other.url);
    try {
      await page.goto(`${other.url}/console/`);
      await page.getByLabel("API key or token").fill(key);
      await page.getByRole("button", { name: "Connect" }).click();
      await page.getByText("This namespace has no tables.").waitFor();
      await page.goto(`${other.url}/console/#/status`);
      await page.locator("#no-metrics").waitFor();
      assert.equal(await page.locator("#metric-cards").count(), 0);
    } finally {
      await other.stop();
      other.cleanup();
    }
  });

  test("no page shows stray text (false, true, undefined, null, [object …])", async () => {
    const stray = /\b(false|true|undefined|null|NaN)\b|\[object /;
    const pages = [
      ["#/ns/", "Root namespace"], ["#/ns/shop", "Namespace shop"], ["#/ns/empty", "Namespace empty"],
      ["#/ns/shop$eu", "Namespace shop / eu"], ["#/table/shop$items", "Table items"], ["#/table/shop$files0", "Table files0"],
      ["#/table/shop$big", "Table big"], ["#/query/shop$items", "Query items"], ["#/pca/shop$items", "Projection of items"],
      ["#/status", "Server status"],
    ];
    for (const [hash, heading] of pages) {
      await page.goto(`${server.url}/console/${hash}`);
      await page.getByRole("heading", { name: heading }).first().waitFor();
      await page.waitForLoadState("networkidle");
      // Code (the curl command, with its JSON) may say null or true.
      const text = await page.evaluate(() => {
        const body = document.body.cloneNode(true);
        body.querySelectorAll("pre, code").forEach((el) => el.remove());
        document.documentElement.append(body);
        const out = body.innerText;
        body.remove();
        return out;
      });
      assert.doesNotMatch(text, stray, `${hash}: ${text.match(stray)?.[0]} in ${JSON.stringify(text.slice(0, 2000))}`);
    }
    // The sign-in page too.
    const fresh = await (await browser.newContext()).newPage();
    await fresh.goto(`${server.url}/console/`);
    await fresh.getByRole("button", { name: "Connect" }).waitFor();
    assert.doesNotMatch(await fresh.evaluate(() => document.body.innerText), stray);
    assert.equal(await fresh.locator("#nav").evaluate((n) => n.textContent), "", "the header shows nothing before sign-in");
    await fresh.context().close();
  });

  test("permissions come from /auth/principal: the console sends no probing writes", async () => {
    const metrics = (await api("/metrics", undefined, { method: "GET" })).body;
    assert.doesNotMatch(metrics, /lancens_http_requests_total\{[^}]*route="DropTable"/, "the console sent DropTable requests");
    assert.match(metrics, /lancens_http_requests_total\{[^}]*route="DescribePrincipal"/);
  });

  test("a table without vectors gets no vector controls", async () => {
    await ok("/v1/table/shop$plain/create", arrow.tableToIPC(arrow.tableFromArrays({ n: Int32Array.from([1, 2, 3]) }), "stream"),
      { contentType: "application/vnd.apache.arrow.stream" });
    await page.goto(`${server.url}/console/#/query/shop$plain`);
    await page.locator("#result-summary").filter({ hasText: "3 rows" }).waitFor();
    await page.getByText("This table has no vector column.").waitFor();
    await page.goto(`${server.url}/console/#/pca/shop$plain`);
    await page.getByText("This table has no vector column to project.").waitFor();
  });
});

describe("web console under access control", { skip }, () => {
  let server;
  let browser;
  const admin = "console-admin-key";
  const keys = { read: "console-read-key", write: "console-write-shop-key" };

  before(async () => {
    assert.ok(haveChromium, `Chromium is required under CI=true: no ${executablePath} (make chromium installs it)`);
    const dir = mkdtempSync(join(tmpdir(), "lancens-console-auth-"));
    const config = join(dir, "auth.yaml");
    writeFileSync(config, [
      "keys:",
      "  - name: reader", `    key: ${keys.read}`, "    role: read",
      "  - name: shop-writer", `    key: ${keys.write}`, "    role: write", "    namespaces: [shop]",
    ].join("\n") + "\n");
    server = await startServer({ apiKey: admin, args: ["--auth-config", config] });
    const post = async (path, body, contentType = "application/json") => {
      const res = await fetch(server.url + path, { method: "POST", headers: { "x-api-key": admin, "content-type": contentType },
        body: contentType === "application/json" ? JSON.stringify(body ?? {}) : body });
      assert.equal(res.status, 200, `${path}: ${await res.text()}`);
    };
    await post("/v1/namespace/shop/create");
    await post("/v1/table/shop$items/create", arrowBody(makeRows(10)), "application/vnd.apache.arrow.stream");
    browser = await chromium.launch({
      executablePath, headless: true,
      args: ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
        "--disable-sync", "--no-first-run"],
    });
  });
  after(async () => {
    await browser?.close();
    await server?.stop();
    server?.cleanup();
  });

  const signIn = async (secret) => {
    const page = await (await browser.newContext({ viewport: { width: 1024, height: 800 } })).newPage();
    page.setDefaultTimeout(20_000);
    await page.goto(`${server.url}/console/`);
    await page.getByLabel("API key or token").fill(secret);
    await page.getByRole("button", { name: "Connect" }).click();
    await page.getByRole("heading", { name: "Root namespace" }).waitFor();
    return page;
  };

  test("a read-only key sees no write controls", async () => {
    const page = await signIn(keys.read);
    await page.getByText("read-only", { exact: true }).waitFor();
    assert.equal(await page.getByRole("button", { name: "Create namespace" }).count(), 0);
    await page.goto(`${server.url}/console/#/ns/shop`);
    await page.locator("#tables").waitFor();
    assert.equal(await page.getByRole("button", { name: "Create namespace" }).count(), 0);
    await page.goto(`${server.url}/console/#/table/shop$items`);
    await page.locator("#indexes").getByText("No indexes.").waitFor();
    assert.equal(await page.locator("form#create-index").count(), 0);
    await page.goto(`${server.url}/console/#/query/shop$items`);
    await page.locator("#result-summary").filter({ hasText: "10 rows" }).waitFor();
    await page.context().close();
  });

  test("a key that may write in one namespace gets write controls there only", async () => {
    const page = await signIn(keys.write);
    await page.getByText("read-only", { exact: true }).waitFor();
    await page.goto(`${server.url}/console/#/ns/shop`);
    await page.getByRole("button", { name: "Create namespace" }).waitFor();
    await page.goto(`${server.url}/console/#/table/shop$items`);
    await page.locator("form#create-index").waitFor();
    await page.context().close();
    // No page view probed with a write: no refused DropTable, no 404s.
    const res = await fetch(`${server.url}/metrics`, { headers: { "x-api-key": admin } });
    assert.doesNotMatch(await res.text(), /lancens_http_requests_total\{[^}]*route="DropTable"/);
  });
});

describe("web console on a server without keys", { skip }, () => {
  let server;
  let browser;

  before(async () => {
    assert.ok(haveChromium, `Chromium is required under CI=true: no ${executablePath} (make chromium installs it)`);
    server = await startServer();
    const res = await fetch(`${server.url}/v1/namespace/open/create`, { method: "POST", headers: { "content-type": "application/json" }, body: "{}" });
    assert.equal(res.status, 200);
    browser = await chromium.launch({
      executablePath, headless: true,
      args: ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
        "--disable-sync", "--no-first-run"],
    });
  });
  after(async () => {
    await browser?.close();
    await server?.stop();
    server?.cleanup();
  });

  test("opens directly, with no Connect step, and may write", async () => {
    const page = await (await browser.newContext({ viewport: { width: 1024, height: 800 } })).newPage();
    page.setDefaultTimeout(20_000);
    await page.goto(`${server.url}/console/`);
    await page.getByRole("heading", { name: "Root namespace" }).waitFor();
    assert.equal(await page.getByRole("button", { name: "Connect" }).count(), 0);
    assert.equal(await page.getByRole("button", { name: "Sign out" }).count(), 0, "nothing to sign out of");
    await page.getByRole("navigation", { name: "Namespace tree" }).getByRole("link", { name: "open" }).waitFor();
    await page.getByRole("button", { name: "Create namespace" }).waitFor();
    await page.context().close();
  });
});
