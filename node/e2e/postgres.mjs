// Starts a throwaway PostgreSQL server for an end-to-end test, as the Go
// tests' internal/testkit/pgtest does: Debian's server binaries, a cluster
// in a temporary directory, on a free loopback port, without fsync, run as
// the postgres user when the test runs as root (PostgreSQL refuses root).
import { execFile, spawn } from "node:child_process";
import { chownSync, existsSync, mkdtempSync, readFileSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { freePort } from "./server.mjs";

const run = promisify(execFile);

// minVersion is the oldest PostgreSQL major version lancens supports.
const minVersion = 15;

// postgresBinaries returns the directory of the newest PostgreSQL server
// binaries of version 15 or newer ($LANCENS_PG_BIN when set, otherwise
// /usr/lib/postgresql/<version>/bin), or null when there are none
// (`make postgres` installs them).
export function postgresBinaries() {
  if (process.env.LANCENS_PG_BIN) return process.env.LANCENS_PG_BIN;
  const root = "/usr/lib/postgresql";
  let versions = [];
  try { versions = readdirSync(root); } catch { return null; }
  const found = versions.map(Number).filter((v) => v >= minVersion)
    .filter((v) => ["postgres", "initdb", "createdb"].every((b) => existsSync(join(root, String(v), "bin", b))))
    .sort((a, b) => b - a);
  return found.length ? join(root, String(found[0]), "bin") : null;
}

// postgresUser returns the uid and gid to run the server as: the postgres
// user's when the caller is root, or {} to run as the caller.
function postgresUser() {
  if (process.getuid() !== 0) return {};
  const line = readFileSync("/etc/passwd", "utf8").split("\n").find((l) => l.startsWith("postgres:"));
  if (!line) throw new Error("running PostgreSQL as root needs the postgres user (the postgresql package creates it)");
  const [, , uid, gid] = line.split(":");
  return { uid: Number(uid), gid: Number(gid) };
}

// startPostgres initialises a cluster and starts its server, and resolves
// to { url, stop }: url is the connection string of an empty database of
// its own; stop shuts the server down and removes its directory. It
// rejects when the binaries are missing or the server does not come up
// within a minute (with the end of its log).
export async function startPostgres() {
  const bin = postgresBinaries();
  if (!bin) throw new Error("PostgreSQL 15 or newer is not installed: run make postgres");
  const user = postgresUser();
  const dir = mkdtempSync(join(tmpdir(), "lancens-pg-"));
  if (user.uid !== undefined) chownSync(dir, user.uid, user.gid);
  const data = join(dir, "data");
  await run(join(bin, "initdb"), ["-D", data, "-U", "postgres", "--auth=trust", "-E", "UTF8", "--locale=C", "--no-sync"], { ...user });
  const port = await freePort();
  const proc = spawn(join(bin, "postgres"), ["-D", data, "-p", String(port), "-c", "listen_addresses=127.0.0.1",
    "-c", `unix_socket_directories=${dir}`, "-c", "max_connections=200", "-c", "fsync=off",
    "-c", "synchronous_commit=off", "-c", "full_page_writes=off"], { ...user, stdio: ["ignore", "ignore", "pipe"] });
  let log = "";
  proc.stderr.on("data", (d) => { log += d; });
  const stop = async () => {
    if (proc.exitCode === null && proc.signalCode === null) {
      const exited = new Promise((resolve) => proc.on("exit", resolve));
      proc.kill("SIGINT"); // fast shutdown: open sessions are ended
      await exited;
    }
    rmSync(dir, { recursive: true, force: true });
  };
  // createdb succeeds once the server accepts connections.
  for (let deadline = Date.now() + 60_000; ;) {
    if (proc.exitCode !== null) {
      await stop();
      throw new Error(`postgres exited: ${log.slice(-2000)}`);
    }
    try {
      await run(join(bin, "createdb"), ["-h", "127.0.0.1", "-p", String(port), "-U", "postgres", "lancens"]);
      break;
    } catch (e) {
      if (Date.now() > deadline) {
        await stop();
        throw new Error(`postgres did not accept connections within a minute: ${e.stderr ?? e} ${log.slice(-2000)}`);
      }
      await new Promise((r) => setTimeout(r, 100));
    }
  }
  return { url: `postgres://postgres@127.0.0.1:${port}/lancens?sslmode=disable`, stop };
}
