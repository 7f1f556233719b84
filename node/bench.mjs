// Benchmark peer: runs the workloads of `make bench` on LanceDB embedded
// (local mode, or on S3 directly and in namespace mode for the object-store
// and remote-s3 suites) and prints one JSON object of measurements on stdout.
//
//   node bench.mjs <workload> <json arguments>
import * as lancedb from "@lancedb/lancedb";
import { closeSync, createReadStream, fsyncSync, openSync, readFileSync, readdirSync, statSync } from "node:fs";
import { join } from "node:path";
import { RecordBatchReader, Table, tableFromIPC } from "apache-arrow";

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

// timesWithCPU runs fn `iterations` times and returns each run's duration
// (lat) and the CPU time the process spent in it (cpu: user and system, of
// every thread, the SDK's Rust ones included), in ms.
async function timesWithCPU(iterations, fn) {
  const lat = [];
  const cpu = [];
  for (let i = 0; i < iterations; i++) {
    const c0 = process.cpuUsage();
    const t0 = now();
    await fn(i);
    lat.push(now() - t0);
    const c = process.cpuUsage(c0);
    cpu.push((c.user + c.system) / 1000);
  }
  return { lat, cpu };
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

  // Appends small batches through namespace connections: Lance writes
  // the data and manifest files, the namespace ("rest": a catalog server,
  // "dir": Lance's directory namespace) records each version. With
  // several namespaces the adds alternate between them, so that each
  // sees the machine in the same state; returns each namespace's timed
  // add latencies and row count, in the order given.
  async nsadd({ namespaces, table, rows, warmup, iterations }) {
    const batch = (start) => Array.from({ length: rows }, (_, i) => ({
      id: start + i, vector: [start + i, 1, 0, 0], name: `row ${start + i}`,
    }));
    const runs = [];
    for (const { impl, config } of namespaces) {
      const db = await lancedb.connectNamespace(impl, config);
      runs.push({ tbl: await db.createTable(table, batch(0)), next: rows, lat: [] });
    }
    const add = async (run) => { await run.tbl.add(batch(run.next)); run.next += rows; };
    for (let i = 0; i < warmup; i++) for (const run of runs) await add(run);
    for (let i = 0; i < iterations; i++) {
      for (const run of runs) {
        const t0 = now();
        await add(run);
        run.lat.push(now() - t0);
      }
    }
    return Promise.all(runs.map(async (run) => ({ lat: run.lat, rows: await run.tbl.countRows() })));
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

// indexConfig builds a LanceDB index config from the bench's description.
function indexConfig({ type, params }) {
  const p = { distanceType: "l2", ...params };
  switch (type) {
    case "IVF_FLAT": return lancedb.Index.ivfFlat(p);
    case "IVF_PQ": return lancedb.Index.ivfPq(p);
    case "IVF_HNSW_SQ": return lancedb.Index.hnswSq(p);
    case "IVF_HNSW_PQ": return lancedb.Index.hnswPq(p);
  }
  throw new Error(`no LanceDB index type ${type}`);
}

Object.assign(workloads, {
  // Builds a vector index (timed) and runs the queries, returning each
  // query's result ids and latency.
  async vector({ dir, table, index, queriesFile, k, nprobes, refineFactor, ef, iterations, filter }) {
    const tbl = await (await lancedb.connect(dir)).openTable(table);
    let buildMs = 0;
    if (index) {
      const t0 = now();
      await tbl.createIndex("vector", { config: indexConfig(index), replace: true });
      buildMs = now() - t0;
    }
    const queries = JSON.parse(readFileSync(queriesFile, "utf8"));
    const run = async (q) => {
      let s = tbl.vectorSearch(q).limit(k).select(["id"]);
      if (nprobes) s = s.nprobes(nprobes);
      if (refineFactor) s = s.refineFactor(refineFactor);
      if (ef) s = s.ef(ef);
      if (filter) s = s.where(filter);
      const res = await s.toArrow();
      return Array.from(res.getChild("id").toArray(), Number);
    };
    for (const q of queries.slice(0, 5)) await run(q); // warm up
    const ids = [];
    const lat = [];
    for (let it = 0; it < iterations; it++) {
      for (const q of queries) {
        const t0 = now();
        const r = await run(q);
        lat.push(now() - t0);
        if (it === 0) ids.push(r);
      }
    }
    return { buildMs, ids, lat };
  },

  // Builds a full-text index (timed) and runs string queries.
  async fts({ dir, table, queries, k, iterations }) {
    const tbl = await (await lancedb.connect(dir)).openTable(table);
    const t0 = now();
    await tbl.createIndex("text", { config: lancedb.Index.fts(), replace: true });
    const buildMs = now() - t0;
    const run = async (q) => (await tbl.search(q, "fts").limit(k).select(["id"]).toArrow()).numRows;
    for (const q of queries) await run(q);
    const lat = [];
    const rows = [];
    for (let it = 0; it < iterations; it++) {
      for (const q of queries) {
        const t1 = now();
        const n = await run(q);
        lat.push(now() - t1);
        if (it === 0) rows.push(n);
      }
    }
    return { buildMs, lat, rows };
  },
});

Object.assign(workloads, {
  // Appends `commits` batches of `rows` rows to a new table on S3, one
  // commit each, and returns each append's latency: through a namespace
  // (lancens coordinating the commits, handing out the storage options) or
  // straight to the bucket with Lance's own S3 commit.
  async s3commits({ namespace, uri, storageOptions, table, rows, commits }) {
    const db = namespace
      ? await lancedb.connectNamespace("rest", { uri: namespace })
      : await lancedb.connect(uri, { storageOptions });
    const batch = (start) => Array.from({ length: rows }, (_, i) => ({ id: start + i, vector: [i, 1, 0, 0], name: `row ${start + i}` }));
    const tbl = await db.createTable(table, batch(0), { mode: "overwrite" });
    await tbl.add(batch(rows)); // warm up
    const lat = await times(commits, (i) => tbl.add(batch((i + 2) * rows)));
    const expected = (commits + 2) * rows;
    if (await tbl.countRows() !== expected) throw new Error(`${table}: ${await tbl.countRows()} rows, want ${expected}`);
    return { lat };
  },
});

Object.assign(workloads, {
  // One remote-mode query (kind: count, query or vector) of a table in a
  // bucket, read straight from storage: cold is the connect, openTable and
  // first query of this process, lat the `iterations` queries after it.
  // digest is the first answer, spelled as the bench spells lancens's: the
  // count, the number of rows, or the ids found in ascending order.
  async s3read({ uri, storageOptions, table, kind, filter, columns, limit, queriesFile, k, iterations }) {
    const queries = queriesFile ? JSON.parse(readFileSync(queriesFile, "utf8")) : [];
    let tbl;
    const run = async (i) => {
      switch (kind) {
        case "count": return String(await tbl.countRows(filter));
        case "query": return String((await tbl.query().where(filter).select(columns).limit(limit).toArrow()).numRows);
        case "vector": {
          const res = await tbl.vectorSearch(queries[i % queries.length]).limit(k).select(["id"]).toArrow();
          const ids = Array.from(res.getChild("id").toArray(), Number).sort((a, b) => a - b);
          return `[${ids.join(" ")}]`;
        }
      }
      throw new Error(`no query kind ${kind}`);
    };
    const t0 = now();
    tbl = await (await lancedb.connect(uri, { storageOptions })).openTable(table);
    const digest = await run(0);
    const cold = now() - t0;
    const lat = await times(iterations, (i) => run(i + 1));
    return { cold, lat, digest };
  },
});

// dirBytes returns the bytes of the files under dir.
function dirBytes(dir) {
  let total = 0;
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const p = join(dir, e.name);
    total += e.isDirectory() ? dirBytes(p) : statSync(p).size;
  }
  return total;
}

Object.assign(workloads, {
  // The soak of `make bench`: `versions` updates of a tenth of the rows
  // each (price + 1 where id % 10 = v % 10), with optimize and cleanup of
  // every old version each `cleanupEvery` versions, then the table's size
  // and filtered-query latency, and the size of a fresh table of the same
  // live rows.
  async soak({ dir, file, versions, cleanupEvery, filter, iterations }) {
    const db = await lancedb.connect(dir);
    const tbl = await db.createTable("soak", readArrow(file), { mode: "overwrite" });
    for (let v = 1; v <= versions; v++) {
      await tbl.update({ where: `id % 10 = ${v % 10}`, valuesSql: { price: "price + 1" } });
      if (v % cleanupEvery === 0) await tbl.optimize({ cleanupOlderThan: new Date() });
    }
    let rows;
    const query = async () => { rows = (await tbl.query().where(filter).select(["id", "price"]).limit(100).toArrow()).numRows; };
    await query(); // warm up
    const soakLat = await times(iterations, query);
    await db.createTable("fresh", await tbl.query().toArrow(), { mode: "overwrite" });
    return { soakBytes: dirBytes(join(dir, "soak.lance")), freshBytes: dirBytes(join(dir, "fresh.lance")), soakLat, rows };
  },
});

// syncTree fsyncs every file and directory under path.
function syncTree(path) {
  if (statSync(path).isDirectory()) {
    for (const e of readdirSync(path)) syncTree(join(path, e));
  }
  const fd = openSync(path, "r");
  try { fsyncSync(fd); } finally { closeSync(fd); }
}

Object.assign(workloads, {
  // The lance suite's write: loads an Arrow IPC stream (untimed; streamed,
  // as a file of 3 GB is too big to read whole), then creates a table from
  // it at a storage version ("" for the SDK's default), timed; then the
  // time its files take to sync (the SDK does not sync them).
  async lancewrite({ dir, table, file, version }) {
    const batches = [];
    for await (const b of await RecordBatchReader.from(createReadStream(file))) batches.push(b);
    const data = new Table(batches);
    const db = await lancedb.connect(dir);
    const storageOptions = version ? { new_table_data_storage_version: version } : undefined;
    const t0 = now();
    const tbl = await db.createTable(table, data, { mode: "create", storageOptions });
    const ms = now() - t0;
    const t1 = now();
    syncTree(join(dir, `${table}.lance`));
    const syncMs = now() - t1;
    return { ms, syncMs, rows: await tbl.countRows() };
  },

  // Streams every row of the columns named (all when null), batch by
  // batch, `iterations` times after `warmup` untimed ones; each run opens
  // the table. Returns each run's time and CPU time.
  async lancescan({ dir, table, columns, iterations, warmup }) {
    const db = await lancedb.connect(dir);
    let rows;
    const run = async () => {
      const tbl = await db.openTable(table);
      let q = tbl.query();
      if (columns) q = q.select(columns);
      rows = 0;
      for await (const batch of q) rows += batch.numRows;
    };
    for (let i = 0; i < warmup; i++) await run();
    return { ...await timesWithCPU(iterations, run), rows };
  },

  // Takes the rows at offsets (all columns) from a table opened once, and
  // returns each take's time and CPU time, and the ids taken.
  async lancetake({ dir, table, offsets, iterations, warmup }) {
    const tbl = await (await lancedb.connect(dir)).openTable(table);
    let res;
    const run = async () => { res = await tbl.takeOffsets(offsets).toArrow(); };
    for (let i = 0; i < warmup; i++) await run();
    return { ...await timesWithCPU(iterations, run), ids: Array.from(res.getChild("id").toArray(), Number) };
  },
});

const fn = workloads[workload];
if (!fn) {
  console.error(`unknown workload ${workload}`);
  process.exit(2);
}
console.log(JSON.stringify(await fn(args)));
