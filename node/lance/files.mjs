// Writes Lance data files with the LanceDB Node SDK for lance/file's Go
// tests to read back, with the rows each holds.
//
//   node files.mjs <out-dir> <storage-version>...
//
// For each storage version (2.0, 2.1, 2.2) and each type family below it
// creates a dataset <out-dir>/<version>/<family>.lance by appending several
// batches (one fragment, so one data file, each), and writes the batch
// behind every data file as an Arrow IPC file. <out-dir>/<version>/files.json
// lists them: [{family, file, expected, rows}], file and expected relative
// to the version's directory. Files of columns Lance derived from others
// (large lists, cast from lists) are listed with derived, the map of their
// columns to the expected columns they equal (null: all nulls), and
// expected is then the list of the family's batches (the file's row count
// says which it is).
import { mkdirSync, readdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import * as arrow from "apache-arrow";
import * as lancedb from "@lancedb/lancedb";

const [outDir, ...versions] = process.argv.slice(2);
if (!outDir || versions.length === 0) {
  console.error("usage: node files.mjs <out-dir> <storage-version>...");
  process.exit(2);
}

const item = (type) => new arrow.Field("item", type, true);
const field = (name, type, nullable = true) => new arrow.Field(name, type, nullable);
// nth is null every k rows (k = 0: never).
const nth = (k, f) => (i) => (k > 0 && i % k === 0 ? null : f(i));
const big = (x) => BigInt.asIntN(64, BigInt(x));
const ubig = (x) => BigInt.asUintN(64, BigInt(x));
const text = (i, n) => `row ${i} `.padEnd(n, "abcdefghijklmnopqrstuvwxyz".charAt(i % 26));
const bytes = (i, n) => Uint8Array.from({ length: n }, (_, k) => (i * 31 + k) % 256);
const floats = (i, n, scale = 1) => Array.from({ length: n }, (_, k) => ((i * 7 + k) % 1000) * scale);

// Each family: its columns (name, type, nullable, value of row i (null is
// a null), optional field metadata) and the sizes of the batches appended. minVersion gates columns
// a version cannot store (2.0 has no null structs).
const families = {
  ints: {
    batches: [1000, 1, 2500],
    columns: [
      ["i8", new arrow.Int8(), true, nth(7, (i) => (i % 256) - 128)],
      ["u8", new arrow.Uint8(), true, nth(9, (i) => i % 256)],
      ["i16", new arrow.Int16(), false, (i) => (i * 37) % 65536 - 32768],
      ["u16", new arrow.Uint16(), true, nth(4, (i) => (i * 13) % 65536)],
      ["i32", new arrow.Int32(), true, nth(3, (i) => i * 7919 - 1000000)],
      ["u32", new arrow.Uint32(), true, nth(11, (i) => (i * 2654435761) % 4294967296)],
      ["i64", new arrow.Int64(), false, (i) => big(i) * 1000000000007n - 5n],
      ["u64", new arrow.Uint64(), true, nth(13, (i) => ubig(i) * 18446744073709551n)],
      ["all_null", new arrow.Int32(), true, () => null],
      ["constant", new arrow.Int64(), false, () => 42n],
    ],
  },
  floats: {
    batches: [1000, 1, 2500],
    columns: [
      ["f16", new arrow.Float16(), true, nth(5, (i) => (i % 100) / 4)],
      ["f32", new arrow.Float32(), true, nth(6, (i) => i * 0.5 - 100)],
      ["f64", new arrow.Float64(), false, (i) => i / 3],
      ["all_null", new arrow.Float64(), true, () => null],
    ],
  },
  bools: {
    batches: [1000, 2, 2500], // a batch whose booleans are all null fails: see derived
    columns: [
      ["b", new arrow.Bool(), true, nth(4, (i) => i % 3 === 0)],
      ["nn", new arrow.Bool(), false, (i) => i % 5 < 2],
      ["constant", new arrow.Bool(), false, () => true],
    ],
    // apache-arrow (JS) writes all-null booleans without their values
    // buffer, which Lance refuses: Lance makes that column itself.
    derived: [{ name: "all_null", from: null, sql: "CAST(NULL AS BOOLEAN)" }],
  },
  strings: {
    batches: [1000, 1, 2500],
    columns: [
      ["dict", new arrow.Utf8(), true, nth(6, (i) => `cat${i % 7}`)],
      ["uniq", new arrow.Utf8(), true, nth(8, (i) => text(i, i % 50))],
      ["empty", new arrow.Utf8(), false, (i) => (i % 3 === 0 ? "" : `e${i}`)],
      ["bin", new arrow.Binary(), true, nth(7, (i) => bytes(i, i % 12))],
      ["all_null", new arrow.Utf8(), true, () => null],
      ["constant", new arrow.Utf8(), false, () => "same"],
      ["unicode", new arrow.Utf8(), true, nth(10, (i) => `héllo wörld ${i} ✓ 日本`)],
    ],
    // The SDK takes no large strings or binaries from apache-arrow: Lance
    // casts them.
    derived: [
      { name: "large", from: "uniq", sql: "arrow_cast(uniq, 'LargeUtf8')" },
      { name: "large_bin", from: "bin", sql: "arrow_cast(bin, 'LargeBinary')" },
    ],
  },
  long_strings: {
    batches: [120, 1, 90],
    chunk: 40,
    columns: [
      ["id", new arrow.Int32(), false, (i) => i],
      ["doc", new arrow.Utf8(), true, nth(9, (i) => text(i, 100000 + i))],
    ],
  },
  temporal: {
    batches: [1000, 1, 2500],
    columns: [
      ["date", new arrow.DateDay(), true, nth(7, (i) => Date.UTC(2000, 0, 1) + i * 86400000)],
      // apache-arrow's builders take timestamps in milliseconds.
      ["ts_s", new arrow.TimestampSecond(), true, nth(5, (i) => (1700000000 + i) * 1000)],
      ["ts_ms_utc", new arrow.TimestampMillisecond("UTC"), true, nth(6, (i) => 1700000000000 + i * 1001)],
      ["ts_us", new arrow.TimestampMicrosecond(), false, (i) => 1700000000000 + i * 17],
      ["ts_ns_ny", new arrow.TimestampNanosecond("America/New_York"), true, nth(4, (i) => 1700000000000 + i * 999)],
    ],
  },
  vectors: {
    batches: [3000, 1, 900],
    chunk: 1000,
    columns: [
      ["id", new arrow.Int64(), false, (i) => big(i)],
      ["vec", new arrow.FixedSizeList(1536, item(new arrow.Float32())), true, nth(11, (i) => floats(i, 1536, 0.001))],
      ["half", new arrow.FixedSizeList(8, item(new arrow.Float16())), true, nth(7, (i) => floats(i, 8, 0.25))],
      ["u8", new arrow.FixedSizeList(16, item(new arrow.Uint8())), false, (i) => Array.from(bytes(i, 16))],
      ["nulls_in", new arrow.FixedSizeList(3, item(new arrow.Int32())), true, nth(5, (i) => [i, i % 2 ? null : -i, 7])],
    ],
  },
  lists: {
    batches: [1000, 1, 2500],
    columns: [
      ["l", new arrow.List(item(new arrow.Int32())), true,
        nth(5, (i) => (i % 7 === 0 ? [] : Array.from({ length: 1 + (i % 4) }, (_, k) => ((i + k) % 3 === 0 ? null : i * 10 + k))))],
      ["ls", new arrow.List(item(new arrow.Utf8())), true, nth(6, (i) => Array.from({ length: i % 3 }, (_, k) => `s${i}.${k}`))],
      ["of_struct", new arrow.List(item(new arrow.Struct([field("x", new arrow.Float64()), field("y", new arrow.Utf8())]))), true,
        nth(4, (i) => Array.from({ length: i % 3 }, (_, k) => ({ x: k === 1 ? null : i + k / 10, y: `p${i}` })))],
      ["nested", new arrow.List(item(new arrow.List(item(new arrow.Int16())))), true,
        nth(9, (i) => Array.from({ length: i % 3 }, (_, k) => (k === 1 && i % 2 ? null : [k, i % 100]))) ],
      ["of_vec", new arrow.List(item(new arrow.FixedSizeList(2, item(new arrow.Float32())))), false, (i) => [[i, 1], [2, i]]],
    ],
    // apache-arrow (JS) has no large lists: Lance makes them, in new data
    // files of their own, by casting list columns.
    derived: [
      { name: "large_l", from: "l", sql: "arrow_cast(l, 'LargeList(nullable Int32)')" },
      { name: "large_ls", from: "ls", sql: "arrow_cast(ls, 'LargeList(nullable Utf8)')" },
    ],
  },
  // Encodings Lance uses when field metadata asks: compressed buffers and
  // packed structs.
  encodings: {
    batches: [1000, 1, 2500],
    columns: [
      ["zstd", new arrow.Utf8(), true, nth(7, (i) => `zstd value ${i} `.repeat(1 + (i % 4))), { "lance-encoding:compression": "zstd" }],
      ["lz4", new arrow.Binary(), true, nth(5, (i) => bytes(i, 3 + (i % 9))), { "lance-encoding:compression": "lz4" }],
      ["packed", new arrow.Struct([field("a", new arrow.Int32()), field("b", new arrow.Float64()), field("c", new arrow.Uint8())]), false,
        (i) => ({ a: i, b: i / 4, c: i % 256 }), { packed: "true" }],
    ],
  },
  // FSST, which Lance applies to a page of strings of 32 KiB or more
  // when metadata asks (smaller pages keep their strings as they are).
  fsst: {
    batches: [1000, 1, 2500],
    columns: [
      ["text", new arrow.Utf8(), true, nth(9, (i) => `the fsst text number ${i} with some common words`), { "lance-encoding:compression": "fsst" }],
      ["large", new arrow.Utf8(), false, (i) => text(i, 30 + (i % 40)), { "lance-encoding:compression": "fsst" }],
    ],
  },
  structs: {
    batches: [1000, 1, 2500],
    columns: [
      ["s", new arrow.Struct([
        field("a", new arrow.Int32()),
        field("b", new arrow.Utf8()),
        field("c", new arrow.Struct([field("d", new arrow.FixedSizeList(2, item(new arrow.Float32()))), field("e", new arrow.Bool())])),
      ]), true, (i) => ({ a: i % 4 === 0 ? null : i, b: `b${i % 50}`, c: { d: i % 6 === 0 ? null : [i, -i], e: i % 2 === 0 } })],
      ["nullable_struct", new arrow.Struct([field("v", new arrow.Int64())]), true, nth(3, (i) => ({ v: i % 2 ? null : big(i) }))],
    ],
    minVersion: { nullable_struct: "2.1" },
  },
};

// vectorOf builds a vector of values. apache-arrow's builder leaves out
// the items of a fixed-size list's trailing null rows; those are built by
// hand.
function vectorOf(values, type) {
  if (!(type instanceof arrow.FixedSizeList) || values.every((v) => v !== null)) return arrow.vectorFromArray(values, type);
  const dim = type.listSize;
  const items = values.flatMap((v) => v ?? Array(dim).fill(0));
  const bitmap = new Uint8Array(Math.ceil(values.length / 8));
  values.forEach((v, i) => { if (v !== null) bitmap[i >> 3] |= 1 << (i & 7); });
  const child = arrow.vectorFromArray(items, type.children[0].type).data[0];
  const nullCount = values.filter((v) => v === null).length;
  return arrow.makeVector(arrow.makeData({ type, length: values.length, nullCount, nullBitmap: bitmap, child }));
}

// makeBatch returns rows [start, start+n) of a family as a table of
// record batches of family.chunk rows: Lance cuts a page when a column's
// buffered values pass 8 MiB, so families with big values get several
// pages per column this way.
function makeBatch(family, version, start, n) {
  const chunk = family.chunk ?? n;
  const batches = [];
  let schema;
  for (let at = start; at < start + n; at += chunk) {
    const m = Math.min(chunk, start + n - at);
    const fields = [];
    const vectors = {};
    for (const [name, type, nullable, value, metadata] of family.columns) {
      if (family.minVersion?.[name] && version < family.minVersion[name]) continue;
      const values = Array.from({ length: m }, (_, k) => value(at + k));
      fields.push(new arrow.Field(name, type, nullable, new Map(Object.entries(metadata ?? {}))));
      vectors[name] = vectorOf(values, type);
    }
    const table = new arrow.Table(new arrow.Schema(fields), vectors);
    schema = table.schema;
    batches.push(...table.batches);
  }
  return new arrow.Table(schema, batches);
}

for (const version of versions) {
  const vdir = join(outDir, version);
  mkdirSync(vdir, { recursive: true });
  const db = await lancedb.connect(vdir, { storageOptions: { new_table_data_storage_version: version } });
  const listing = [];
  for (const [name, family] of Object.entries(families)) {
    const dataDir = join(vdir, `${name}.lance`, "data");
    let start = 0;
    let table;
    for (const [b, n] of family.batches.entries()) {
      const batch = makeBatch(family, version, start, n);
      const before = new Set(table ? readdirSync(dataDir) : []);
      if (table) await table.add(batch);
      else table = await db.createTable(name, batch);
      const added = readdirSync(dataDir).filter((f) => !before.has(f));
      if (added.length !== 1) throw new Error(`${name}: batch ${b} made ${added.length} data files`);
      const expected = `${name}.${b}.arrow`;
      writeFileSync(join(vdir, expected), arrow.tableToIPC(batch, "file"));
      listing.push({ family: name, file: join(`${name}.lance`, "data", added[0]), expected, rows: n });
      start += n;
    }
    if (family.derived) {
      const before = new Set(readdirSync(dataDir));
      await table.addColumns(family.derived.map(({ name, sql }) => ({ name, valueSql: sql })));
      const derived = Object.fromEntries(family.derived.map(({ name, from }) => [name, from]));
      const expected = family.batches.map((_, b) => `${name}.${b}.arrow`);
      for (const f of readdirSync(dataDir).filter((f) => !before.has(f))) {
        listing.push({ family: name, file: join(`${name}.lance`, "data", f), expected, derived });
      }
    }
  }
  writeFileSync(join(vdir, "files.json"), JSON.stringify(listing, null, 1));
}
