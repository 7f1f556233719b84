// Benchmark peer: runs the workloads of `make bench` on LanceDB embedded
// (local mode) and prints one JSON object of measurements on stdout.
//
//   node bench.mjs <workload> <json arguments>
import * as lancedb from "@lancedb/lancedb";
import { readFileSync } from "node:fs";
import { tableFromIPC } from "apache-arrow";

const [workload, rawArgs] = process.argv.slice(2);
const args = JSON.parse(rawArgs ?? "{}");

const now = () => Number(process.hrtime.bigint()) / 1e6; // milliseconds

// times runs fn `iterations` times and returns each duration in ms.
async function times(iterations, fn) {
  const out = [];
  for (let i = 0; i < iterations; i++) {
    const t0 = now();
    await fn(i);
    out.push(now() - t0);
  }
  return out;
}

function readArrow(path) {
  return tableFromIPC(readFileSync(path));
}

const workloads = {
  // Creates a table from the first batch of rows and appends the rest,
  // batch by batch, as a client ingesting data would.
  async ingest({ dir, table, file, batchRows }) {
    const data = readArrow(file);
    const db = await lancedb.connect(dir);
    const t0 = now();
    let tbl;
    for (let start = 0; start < data.numRows; start += batchRows) {
      const batch = data.slice(start, Math.min(start + batchRows, data.numRows));
      if (!tbl) {
        tbl = await db.createTable(table, batch, { mode: "overwrite" });
      } else {
        await tbl.add(batch);
      }
    }
    return { ms: now() - t0, rows: await tbl.countRows() };
  },

  // Loads a file into a table in one go (set-up, not measured).
  async load({ dir, table, file }) {
    const db = await lancedb.connect(dir);
    const tbl = await db.createTable(table, readArrow(file), { mode: "overwrite" });
    return { rows: await tbl.countRows() };
  },

  async count({ dir, table, filter, iterations }) {
    const tbl = await (await lancedb.connect(dir)).openTable(table);
    let result;
    const lat = await times(iterations, async () => { result = await tbl.countRows(filter); });
    return { lat, result };
  },

  async query({ dir, table, filter, columns, limit, iterations }) {
    const tbl = await (await lancedb.connect(dir)).openTable(table);
    let rows;
    const lat = await times(iterations, async () => {
      rows = (await tbl.query().where(filter).select(columns).limit(limit).toArrow()).numRows;
    });
    return { lat, rows };
  },
};

const fn = workloads[workload];
if (!fn) {
  console.error(`unknown workload ${workload}`);
  process.exit(2);
}
console.log(JSON.stringify(await fn(args)));
