// Starts a real lancens binary for an end-to-end test and stops it after.
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createInterface } from "node:readline";

const binary = process.env.LANCENS_BIN ?? join(import.meta.dirname, "..", "..", "bin", "lancens");

// startServer runs `lancens serve` on a free port with a fresh database and
// warehouse (or the given directory, to restart on the same data), adding
// args to its command line, and resolves to { url, dir, stop }.
export async function startServer({ dir, apiKey, args: extra = [] } = {}) {
  dir ??= mkdtempSync(join(tmpdir(), "lancens-e2e-"));
  const args = ["serve", "--addr", "127.0.0.1:0", "--db", join(dir, "lancens.db"), "--warehouse", join(dir, "warehouse"),
    "--log-level", "warn", "--sync", "NORMAL"];
  if (apiKey) args.push("--api-key", apiKey);
  args.push(...extra);
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
