// Unit tests of the console's browser-free modules: the Arrow IPC stream
// reader (checked against apache-arrow's writer), the PCA (checked against
// eigenvectors known in closed form) and the metrics parser.
import { describe, test } from "node:test";
import assert from "node:assert/strict";
import * as arrow from "apache-arrow";
import { readArrowStream } from "../../console/static/arrow.js";
import { pca2 } from "../../console/static/pca.js";
import { parseMetrics } from "../../console/static/metrics.js";

describe("console Arrow reader", () => {
  const f32 = new arrow.Float32();
  const cases = [
    { name: "int8", type: new arrow.Int8(), values: [1, -2, null, 127] },
    { name: "uint16", type: new arrow.Uint16(), values: [0, 65535, null, 7] },
    { name: "int32", type: new arrow.Int32(), values: [-5, null, 2147483647, 0] },
    { name: "int64", type: new arrow.Int64(), values: [1n, -9007199254740991n, null, 42n], want: [1, -9007199254740991, null, 42] },
    { name: "float32", type: f32, values: [0.5, null, -1.25, 3] },
    { name: "float64", type: new arrow.Float64(), values: [Math.PI, -0, null, 1e300] },
    { name: "bool", type: new arrow.Bool(), values: [true, false, null, true] },
    { name: "utf8", type: new arrow.Utf8(), values: ["a", "", null, "ünïcode ✓"] },
    { name: "large_utf8", type: new arrow.LargeUtf8(), values: ["x", null, "yz", ""] },
    { name: "vector", type: new arrow.FixedSizeList(3, new arrow.Field("item", f32, true)), values: [[1, 2, 3], null, [0.5, 0, -1], [9, 8, 7]] },
    { name: "list", type: new arrow.List(new arrow.Field("item", new arrow.Int32(), true)), values: [[1], [], null, [2, 3, 4]] },
    { name: "struct", type: new arrow.Struct([new arrow.Field("a", new arrow.Int32(), true), new arrow.Field("b", new arrow.Utf8(), true)]),
      values: [{ a: 1, b: "one" }, null, { a: null, b: "three" }, { a: 4, b: null }] },
    { name: "date", type: new arrow.DateDay(), values: [new Date("2024-02-29T00:00:00Z"), null, new Date("1970-01-01T00:00:00Z"), new Date("2000-01-01T00:00:00Z")],
      want: ["2024-02-29", null, "1970-01-01", "2000-01-01"] },
  ];
  const toPlain = (v) => {
    if (v === null || v === undefined) return null;
    if (typeof v === "bigint") return Number(v);
    if (v instanceof arrow.Vector || ArrayBuffer.isView(v)) return Array.from(v, toPlain);
    if (typeof v === "object" && typeof v.toJSON === "function") return JSON.parse(JSON.stringify(v.toJSON()));
    return v;
  };

  for (const c of cases) {
    test(c.name, () => {
      const vec = arrow.vectorFromArray(c.values, c.type);
      const table = new arrow.Table({ [c.name]: vec, id: arrow.vectorFromArray([0, 1, 2, 3], new arrow.Int32()) });
      const got = readArrowStream(arrow.tableToIPC(table, "stream"));
      assert.deepEqual(got.fields.map((f) => f.name), [c.name, "id"]);
      const want = c.want ?? c.values.map(toPlain);
      const values = got.rows.map((r) => r[c.name]);
      if (c.type instanceof arrow.Float32 || c.name === "vector") {
        // float32 values round-trip exactly when they are exact in float32.
        assert.deepEqual(values, want);
      } else {
        assert.deepEqual(values, want);
      }
      assert.deepEqual(got.rows.map((r) => r.id), [0, 1, 2, 3]);
    });
  }

  test("several batches keep their order", () => {
    const a = arrow.tableFromArrays({ n: Int32Array.from([1, 2]) });
    const b = arrow.tableFromArrays({ n: Int32Array.from([3]) });
    const got = readArrowStream(arrow.tableToIPC(a.concat(b), "stream"));
    assert.deepEqual(got.rows.map((r) => r.n), [1, 2, 3]);
  });

  test("an empty result has its schema and no rows", () => {
    const t = arrow.tableFromArrays({ n: Int32Array.from([]) });
    const got = readArrowStream(arrow.tableToIPC(t, "stream"));
    assert.deepEqual(got.fields.map((f) => f.name), ["n"]);
    assert.equal(got.rows.length, 0);
  });

  test("a truncated stream is an error", () => {
    const bytes = arrow.tableToIPC(arrow.tableFromArrays({ n: Int32Array.from([1, 2, 3]) }), "stream");
    assert.throws(() => readArrowStream(bytes.subarray(0, bytes.length - 20)), /truncated/);
  });

  test("dictionary columns are refused by name", () => {
    const dict = arrow.vectorFromArray(["a", "b", "a"], new arrow.Dictionary(new arrow.Utf8(), new arrow.Int32()));
    const bytes = arrow.tableToIPC(new arrow.Table({ d: dict }), "stream");
    assert.throws(() => readArrowStream(bytes), /dictionary/);
  });
});

describe("console PCA", () => {
  // A deterministic pseudo-random source, so the tests are repeatable.
  const random = (seed) => () => {
    seed = (seed * 1103515245 + 12345) % 2147483648;
    return seed / 2147483648 - 0.5;
  };
  const near = (a, b, eps, what) => assert.ok(Math.abs(a - b) <= eps, `${what}: ${a} is not within ${eps} of ${b}`);

  test("axis-aligned variances come out as the eigenvalues, largest first", () => {
    // Independent coordinates with standard deviations 5, 2, 0.5: the
    // covariance is nearly diagonal, its eigenvectors the axes.
    const r = random(7);
    const rows = Array.from({ length: 2000 }, () => [0.5 * r() * Math.sqrt(12), 5 * r() * Math.sqrt(12), 2 * r() * Math.sqrt(12)]);
    const { components, variances } = pca2(rows);
    near(Math.abs(components[0][1]), 1, 0.01, "first component along y");
    near(Math.abs(components[1][2]), 1, 0.01, "second component along z");
    near(variances[0], 25, 2.5, "first variance");
    near(variances[1], 4, 0.4, "second variance");
  });

  test("a rotated plane: components match the closed form and are orthonormal", () => {
    // Points (a, b) with var(a)=9, var(b)=1, rotated by 30° into 3-D with
    // a constant third coordinate and an offset: exact eigenvectors are the
    // rotated axes, eigenvalues the sample variances of a and b.
    const r = random(11);
    const th = Math.PI / 6;
    const u = [Math.cos(th), Math.sin(th), 0];
    const v = [-Math.sin(th), Math.cos(th), 0];
    const ab = Array.from({ length: 500 }, () => [3 * r() * Math.sqrt(12), r() * Math.sqrt(12)]);
    const mean = (xs) => xs.reduce((s, x) => s + x, 0) / xs.length;
    const ma = mean(ab.map((p) => p[0])), mb = mean(ab.map((p) => p[1]));
    const cov = (i, j, mi, mj) => ab.reduce((s, p) => s + (p[i] - mi) * (p[j] - mj), 0) / (ab.length - 1);
    // Decorrelate a and b so the closed form is exact.
    const cab = cov(0, 1, ma, mb) / cov(1, 1, mb, mb);
    for (const p of ab) p[0] -= cab * (p[1] - mb);
    const a0 = mean(ab.map((p) => p[0]));
    const va = cov(0, 0, a0, a0), vb = cov(1, 1, mb, mb);
    const rows = ab.map(([a, b]) => [10 + a * u[0] + b * v[0], -3 + a * u[1] + b * v[1], 4]);
    const { components, variances, points, mean: m } = pca2(rows);
    const dot = (x, y) => x.reduce((s, xi, i) => s + xi * y[i], 0);
    near(Math.abs(dot(components[0], u)), 1, 1e-6, "first component");
    near(Math.abs(dot(components[1], v)), 1, 1e-6, "second component");
    near(dot(components[0], components[1]), 0, 1e-9, "orthogonal");
    near(variances[0], va, 1e-6 * va, "first variance");
    near(variances[1], vb, 1e-6 * vb, "second variance");
    near(m[0], mean(rows.map((x) => x[0])), 1e-9, "mean");
    // The projection is centred and its first coordinate is ±(a − mean a).
    near(mean(points.map((p) => p[0])), 0, 1e-9, "centred");
    const s = Math.sign(dot(components[0], u));
    points.forEach((p, i) => near(p[0], s * (ab[i][0] - a0), 1e-6, `point ${i}`));
  });

  test("data on a line has a zero second component", () => {
    const rows = Array.from({ length: 10 }, (_, i) => [i, 2 * i, -i]);
    const { variances, points } = pca2(rows);
    assert.ok(variances[0] > 1);
    near(variances[1], 0, 1e-9, "second variance");
    for (const p of points) near(p[1], 0, 1e-9, "second coordinate");
  });

  test("identical rows and single rows project to the origin", () => {
    for (const rows of [[[1, 2, 3], [1, 2, 3]], [[4, 5]]]) {
      const { points, variances } = pca2(rows);
      assert.deepEqual(variances, [0, 0]);
      for (const p of points) assert.deepEqual(p.map(Math.abs), [0, 0]);
    }
  });

  test("bad input is refused", () => {
    assert.throws(() => pca2([]), /no rows/);
    assert.throws(() => pca2([[1, 2], [1]]), /different lengths/);
    assert.throws(() => pca2([[]]), /empty/);
  });
});

describe("console metrics parser", () => {
  test("names, labels and values", () => {
    const got = parseMetrics([
      "# HELP lancens_build_info Build.",
      "# TYPE lancens_build_info gauge",
      'lancens_build_info{revision="abc123",version="v1.2.3"} 1',
      'lancens_http_requests_total{code="200",method="POST",route="QueryTable"} 17',
      'weird{path="a\\"b,c=d"} 2.5e+03',
      "process_start_time_seconds 1.7e+09",
      "",
    ].join("\n"));
    assert.deepEqual(got, [
      { name: "lancens_build_info", labels: { revision: "abc123", version: "v1.2.3" }, value: 1 },
      { name: "lancens_http_requests_total", labels: { code: "200", method: "POST", route: "QueryTable" }, value: 17 },
      { name: "weird", labels: { path: 'a\\"b,c=d' }, value: 2500 },
      { name: "process_start_time_seconds", labels: {}, value: 1.7e9 },
    ]);
  });
});
