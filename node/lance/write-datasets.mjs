// Writes Lance datasets with the LanceDB SDK for lancens's Go tests of the
// Lance format, and records what Lance reads back.
//
//   node write-datasets.mjs job.json
//
// job.json lists datasets: {"datasets": [{"dir", "name", "version",
// "writes": ["batch0.arrow", ...], "out"}]}. For each one the first write
// creates the table (storage version `version`, or the SDK's default when
// it is empty) and each later write appends; every write is an Arrow IPC
// file handed to the SDK unchanged, so every Arrow type Lance accepts can
// be tested (apache-arrow in JavaScript has no large_list, for one). The
// script then scans the table with row ids and writes each batch Lance
// returns, still as the Arrow IPC bytes the SDK produced, to
// `out`/scan-N.arrow, and `out`/result.json: {"files": [[data files new
// after write 0], [... after write 1], ...], "batches": N}. A dataset
// without writes is only opened and scanned (a table whose files Go
// wrote).

import { readFileSync, writeFileSync, readdirSync, mkdirSync, existsSync } from 'node:fs';
import { join } from 'node:path';
import * as lancedb from '@lancedb/lancedb';

const job = JSON.parse(readFileSync(process.argv[2], 'utf8'));

function dataFiles(dir) {
  const d = join(dir, 'data');
  return existsSync(d) ? readdirSync(d).filter((f) => f.endsWith('.lance')).sort() : [];
}

for (const ds of job.datasets) {
  const db = await lancedb.connect(ds.dir);
  const storage = ds.version ? { new_table_data_storage_version: ds.version } : {};
  const tableDir = join(ds.dir, `${ds.name}.lance`);
  ds.writes ??= [];
  let table = ds.writes.length === 0 ? await db.openTable(ds.name) : undefined;
  const files = [];
  for (const [i, path] of ds.writes.entries()) {
    const before = new Set(dataFiles(tableDir));
    const buf = readFileSync(path);
    if (i === 0) {
      const inner = await db.inner.createTable(ds.name, buf, 'create', [], storage);
      table = await db.openTable(ds.name);
      void inner;
    } else {
      await table.inner.add(buf, 'append');
    }
    files.push(dataFiles(tableDir).filter((f) => !before.has(f)));
  }
  mkdirSync(ds.out, { recursive: true });
  const it = await table.query().withRowId().nativeExecute();
  let n = 0;
  for (let b = await it.next(); b; b = await it.next()) {
    writeFileSync(join(ds.out, `scan-${n}.arrow`), b);
    n++;
  }
  writeFileSync(join(ds.out, 'result.json'), JSON.stringify({ files, batches: n }));
}
