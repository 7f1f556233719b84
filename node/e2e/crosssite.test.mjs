// Cross-site requests in a real browser (Debian's Chromium, driven headless
// by playwright-core) against a lancens without keys on 127.0.0.1: a page
// served from another origin (another port of 127.0.0.1) fires the requests
// a page may send without a CORS preflight — a no-cors fetch that drops a
// namespace with a text/plain body, a body-less drop, an Arrow insert sent
// as text/plain and one sent without a type, and a text/plain form — and a
// page on a name that resolves to 127.0.0.1 (DNS rebinding: same origin as
// the server) tries the same with JSON and reads a listing. Nothing may
// change, and the rebound page may read nothing.
import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { existsSync } from "node:fs";
import { createServer } from "node:http";
import * as arrow from "apache-arrow";
import { chromium } from "playwright-core";
import { startServer } from "./server.mjs";

const executablePath = process.env.LANCENS_CHROMIUM ?? "/usr/bin/chromium";
const haveChromium = existsSync(executablePath);
// Without Chromium the tests skip, except in CI where they must run.
const skip = !haveChromium && process.env.CI !== "true" ? `no Chromium at ${executablePath} (make chromium installs it)` : false;

const rows = (ids) => arrow.tableToIPC(new arrow.Table({ id: arrow.vectorFromArray(ids, new arrow.Int32()) }), "stream");

// The attacker's page: fires every request, then records what it could see.
function attackPage(target, arrowBytes) {
  return `<!doctype html><html><body><iframe name="sink"></iframe>
<form id="form" method="POST" enctype="text/plain" target="sink" action="${target}/v1/namespace/formmade/create">
<input name='{"properties":{"a":"' value='b"}}'></form>
<script>
const target = ${JSON.stringify(target)};
const arrowBytes = new Uint8Array(${JSON.stringify(Array.from(arrowBytes))});
const shots = [
  // The audit's drop: text/plain body, no preflight.
  () => fetch(target + "/v1/namespace/victim/drop", { method: "POST", mode: "no-cors", body: '{"behavior":"Cascade"}' }),
  // A body-less drop, as the LanceDB SDK sends them.
  () => fetch(target + "/v1/table/victim$t/drop", { method: "POST", mode: "no-cors" }),
  // Arrow rows as text/plain, and as an untyped ArrayBuffer.
  () => fetch(target + "/v1/table/victim$t/insert", { method: "POST", mode: "no-cors", body: new Blob([arrowBytes], { type: "text/plain" }) }),
  () => fetch(target + "/v1/table/victim$t/insert", { method: "POST", mode: "no-cors", body: arrowBytes.buffer }),
  // A namespace made by a form.
  () => fetch(target + "/v1/namespace/fetchmade/create", { method: "POST", mode: "no-cors", body: "{}" }),
];
window.results = Promise.allSettled(shots.map((s) => s())).then((r) => r.map((x) => x.status));
document.getElementById("form").submit();
</script></body></html>`;
}

// The rebound page, same-origin with lancens: it may send JSON and read answers.
function reboundPage(arrowBytes) {
  return `<!doctype html><html><body><script>
const arrowBytes = new Uint8Array(${JSON.stringify(Array.from(arrowBytes))});
const post = (path, body, type) => fetch(path, { method: "POST", headers: type ? { "content-type": type } : {}, body })
  .then((r) => r.status, (e) => "error " + e);
window.results = Promise.all([
  post("/v1/namespace/victim/drop", '{"behavior":"Cascade"}', "application/json"),
  post("/v1/table/victim$t/insert", arrowBytes, "application/vnd.apache.arrow.stream"),
  post("/v1/namespace/rebound/create", "{}", "application/json"),
  fetch("/v1/namespace/%24/list").then((r) => r.status),
]);
</script></body></html>`;
}

describe("cross-site requests against a server without keys", { skip }, () => {
  let server;
  let attacker;
  let browser;
  const evilHost = "rebind.evil.test";

  const api = async (path, body, contentType = "application/json") => {
    const res = await fetch(server.url + path, {
      method: "POST", headers: { "content-type": contentType },
      body: contentType === "application/json" ? JSON.stringify(body ?? {}) : body,
    });
    return { status: res.status, body: await res.text() };
  };
  const count = async () => {
    const r = await api("/v1/table/victim$t/count_rows", {});
    assert.equal(r.status, 200, r.body);
    return Number(r.body);
  };
  const exists = async (ns) => (await api(`/v1/namespace/${ns}/exists`, {})).status === 200;

  before(async () => {
    assert.ok(haveChromium, `Chromium is required under CI=true: no ${executablePath} (make chromium installs it)`);
    server = await startServer();
    assert.equal((await api("/v1/namespace/victim/create")).status, 200);
    const created = await api("/v1/table/victim$t/create", rows([1, 2, 3]), "application/vnd.apache.arrow.stream");
    assert.equal(created.status, 200, created.body);
    assert.equal(await count(), 3);

    const html = attackPage(server.url, rows([666]));
    attacker = createServer((req, res) => {
      res.writeHead(200, { "content-type": "text/html" });
      res.end(html);
    });
    await new Promise((resolve) => attacker.listen(0, "127.0.0.1", resolve));
    browser = await chromium.launch({
      executablePath, headless: true,
      args: ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
        "--disable-sync", "--no-first-run", `--host-resolver-rules=MAP ${evilHost} 127.0.0.1`,
        // A page that reaches loopback from a name the browser deems public is
        // blocked by the browser itself (Private/Local Network Access); this
        // test is about what the server does when a browser lets it through.
        "--disable-features=BlockInsecurePrivateNetworkRequests,PrivateNetworkAccessSendPreflights,LocalNetworkAccessChecks"],
    });
  });

  after(async () => {
    await browser?.close();
    await new Promise((resolve) => (attacker ? attacker.close(resolve) : resolve()));
    await server?.stop();
    server?.cleanup();
  });

  test("a page on another origin changes nothing", async () => {
    const page = await browser.newPage();
    const requests = [];
    page.on("request", (r) => { if (r.url().startsWith(server.url)) requests.push(`${r.method()} ${r.url()}`); });
    await page.goto(`http://127.0.0.1:${attacker.address().port}/`);
    const outcomes = await page.evaluate(() => window.results);
    // Every request left the browser (no-cors fetches resolve opaquely).
    assert.deepEqual(outcomes, ["fulfilled", "fulfilled", "fulfilled", "fulfilled", "fulfilled"]);
    await page.waitForTimeout(500); // the form's navigation
    await page.close();
    assert.ok(requests.length >= 6, `the browser sent ${requests.length} requests to lancens: ${requests.join(", ")}`);

    assert.ok(await exists("victim"), "namespace victim was dropped");
    assert.equal(await count(), 3, "table victim$t changed");
    assert.ok(!(await exists("formmade")), "a form made a namespace");
    assert.ok(!(await exists("fetchmade")), "a no-cors fetch made a namespace");
  });

  test("a page on a rebound name may neither change nor read anything", async () => {
    const port = new URL(server.url).port;
    const page = await browser.newPage();
    // The attacker's name first served its own page, then resolved to
    // 127.0.0.1: the page is same-origin with lancens.
    await page.route(`http://${evilHost}:${port}/`, (route) =>
      route.fulfill({ status: 200, contentType: "text/html", body: reboundPage(rows([777])) }));
    await page.goto(`http://${evilHost}:${port}/`);
    const statuses = await page.evaluate(() => window.results);
    await page.close();
    assert.deepEqual(statuses, [403, 403, 403, 403]);
    assert.ok(await exists("victim"), "namespace victim was dropped");
    assert.equal(await count(), 3, "table victim$t changed");
    assert.ok(!(await exists("rebound")), "the rebound page made a namespace");
  });
});
