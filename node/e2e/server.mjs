// Starts a real lancens binary (and, for object-storage tests, a Versity S3
// Gateway) for an end-to-end test and stops it after.
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, statSync } from "node:fs";
import { createServer } from "node:net";
import { homedir, tmpdir } from "node:os";
import { join, relative } from "node:path";
import { createInterface } from "node:readline";

const binary = process.env.LANCENS_BIN ?? join(import.meta.dirname, "..", "..", "bin", "lancens");

// startServer runs `lancens serve` on a free port with a fresh database and
// warehouse (or the given directory, to restart on the same data) and
// resolves to { url, dir, stop }. warehouse replaces the local warehouse
// (an s3:// URI, say); db replaces the SQLite file (a postgres:// URL, say);
// args are more flags.
export async function startServer({ dir, apiKey, warehouse, db, args: extra = [] } = {}) {
  dir ??= mkdtempSync(join(tmpdir(), "lancens-e2e-"));
  const args = ["serve", "--addr", "127.0.0.1:0", "--db", db ?? join(dir, "lancens.db"), "--warehouse", warehouse ?? join(dir, "warehouse"),
    "--log-level", "warn", "--sync", "NORMAL", ...extra];
  if (apiKey) args.push("--api-key", apiKey);
  const proc = spawn(binary, args, { stdio: ["ignore", "pipe", "pipe"] });
  let stderr = "";
  proc.stderr.on("data", (d) => { stderr += d; });
  const url = await new Promise((resolve, reject) => {
    const lines = createInterface({ input: proc.stdout });
    lines.on("line", (line) => {
      const m = line.match(/listening on (http:\/\/\S+)/);
      if (m) resolve(m[1]);
    });
    proc.on("exit", (code) => reject(new Error(`lancens exited with ${code}: ${stderr}`)));
  });
  const stop = async () => {
    if (proc.exitCode !== null) return;
    const exited = new Promise((resolve) => proc.on("exit", resolve));
    proc.kill("SIGTERM");
    await exited;
  };
  return { url, dir, stop, stderr: () => stderr, cleanup: () => rmSync(dir, { recursive: true, force: true }) };
}

// gatewayBinary finds versitygw where `make versitygw` installs it (or
// $LANCENS_VERSITYGW); null when it is not there.
export function gatewayBinary() {
  const candidates = [process.env.LANCENS_VERSITYGW, join(homedir(), ".cache", "lancens", "bin", "versitygw")];
  return candidates.find((p) => p && existsSync(p)) ?? null;
}

// freePort resolves to a TCP port on loopback that nothing listens on now.
export async function freePort() {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.listen(0, "127.0.0.1", () => {
      const { port } = srv.address();
      srv.close(() => resolve(port));
    });
    srv.on("error", reject);
  });
}

// startGateway runs the Versity S3 Gateway on loopback with one bucket
// per name in buckets, each a directory under the returned dir, and
// resolves to { endpoint, dir, options, stop }: options are the Lance
// storage options that reach it.
export async function startGateway(buckets = ["lance"]) {
  const bin = gatewayBinary();
  if (!bin) throw new Error("versitygw not found: run `make versitygw`");
  const dir = mkdtempSync(join(tmpdir(), "lancens-s3-"));
  for (const b of buckets) mkdirSync(join(dir, b));
  const port = await freePort();
  const access = "lancens-e2e", secret = "lancens-e2e-secret";
  const proc = spawn(bin, ["--port", `127.0.0.1:${port}`, "--access", access, "--secret", secret, "--quiet", "posix", dir],
    { stdio: ["ignore", "ignore", "pipe"] });
  let stderr = "";
  proc.stderr.on("data", (d) => { stderr += d; });
  const endpoint = `http://127.0.0.1:${port}`;
  for (let i = 0; ; i++) {
    if (proc.exitCode !== null) throw new Error(`versitygw exited: ${stderr}`);
    try {
      await fetch(endpoint + "/");
      break;
    } catch (e) {
      if (i > 300) throw new Error(`versitygw did not answer: ${e} ${stderr}`);
      await new Promise((r) => setTimeout(r, 50));
    }
  }
  const options = {
    aws_endpoint: endpoint, aws_region: "us-east-1", allow_http: "true",
    aws_access_key_id: access, aws_secret_access_key: secret,
  };
  const stop = async () => {
    if (proc.exitCode === null) {
      const exited = new Promise((resolve) => proc.on("exit", resolve));
      proc.kill("SIGTERM");
      await exited;
    }
    rmSync(dir, { recursive: true, force: true });
  };
  return { endpoint, dir, options, stop };
}

// storageArgs turns storage options into lancens serve flags.
export const storageArgs = (options) => Object.entries(options).flatMap(([k, v]) => ["--storage-option", `${k}=${v}`]);

// api POSTs body (or {}) as JSON to path on the server at url, asserts a
// 200 answer and resolves to its JSON body (undefined when empty).
export async function api(url, path, body) {
  const res = await fetch(url + path, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body ?? {}) });
  const text = await res.text();
  assert.equal(res.status, 200, `${path}: ${text}`);
  return text ? JSON.parse(text) : undefined;
}

// files lists the files under dir, relative to it; dot directories (the
// gateway's own bookkeeping) are left out.
export function files(dir) {
  const out = [];
  const walk = (d) => {
    for (const e of readdirSync(d, { withFileTypes: true })) {
      if (e.name.startsWith(".")) continue;
      const p = join(d, e.name);
      if (e.isDirectory()) walk(p);
      else out.push(relative(dir, p));
    }
  };
  try { statSync(dir); } catch { return out; }
  walk(dir);
  return out.sort();
}
