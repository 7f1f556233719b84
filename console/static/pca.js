// Principal component analysis of a few hundred vectors, for the console's
// 2-D picture: the top two eigenvectors of the sample covariance, found by
// power iteration. The covariance is never formed: C·v is computed as
// Xᵀ(X·v)/(n−1) on the centred rows, so a step costs O(n·d) and
// 1536-dimensional embeddings stay cheap.

// pca2 projects rows (arrays of equal length d ≥ 1, at least one row) onto
// their first two principal components. It returns { points, components,
// variances, mean }: points[i] = [x, y] for rows[i], components the two unit
// eigenvectors, variances their eigenvalues (variance along each). When the
// data has fewer than two directions of variance, the missing component is
// a zero vector with variance 0 (its coordinate is 0). It throws on empty
// input or rows of different lengths.
export function pca2(rows, { iterations = 300, tolerance = 1e-10 } = {}) {
  const n = rows.length;
  if (n === 0) throw new Error("pca2: no rows");
  const d = rows[0].length;
  if (d === 0) throw new Error("pca2: empty vectors");
  const mean = new Float64Array(d);
  for (const r of rows) {
    if (r.length !== d) throw new Error("pca2: rows of different lengths");
    for (let j = 0; j < d; j++) mean[j] += r[j];
  }
  for (let j = 0; j < d; j++) mean[j] /= n;
  const x = rows.map((r) => Float64Array.from(r, (v, j) => v - mean[j]));
  const scale = n > 1 ? 1 / (n - 1) : 1;
  // The total variance (the covariance's trace) sets what counts as none:
  // a direction with less than a 1e-12 share of it is rounding noise.
  let trace = 0;
  for (const r of x) for (let j = 0; j < d; j++) trace += r[j] * r[j] * scale;
  const negligible = 1e-12 * trace;

  const covTimes = (v) => {
    const out = new Float64Array(d);
    for (const r of x) {
      let dot = 0;
      for (let j = 0; j < d; j++) dot += r[j] * v[j];
      if (dot === 0) continue;
      for (let j = 0; j < d; j++) out[j] += dot * r[j];
    }
    for (let j = 0; j < d; j++) out[j] *= scale;
    return out;
  };

  const components = [];
  const variances = [];
  for (let c = 0; c < 2; c++) {
    let v = startVector(d, c);
    deflate(v, components);
    let lambda = 0;
    for (let it = 0; it < iterations; it++) {
      const w = covTimes(v);
      deflate(w, components);
      const norm = length(w);
      if (norm <= negligible) { v = new Float64Array(d); lambda = 0; break; }
      for (let j = 0; j < d; j++) w[j] /= norm;
      const change = Math.abs(norm - lambda);
      v = w;
      lambda = norm;
      if (change <= tolerance * Math.max(1, lambda)) break;
    }
    components.push(v);
    variances.push(lambda);
  }
  const points = x.map((r) => components.map((v) => {
    let dot = 0;
    for (let j = 0; j < d; j++) dot += r[j] * v[j];
    return dot;
  }));
  return { points, components: components.map((v) => Array.from(v)), variances, mean: Array.from(mean) };
}

// startVector is a fixed, non-degenerate start, so results are repeatable.
function startVector(d, salt) {
  const v = new Float64Array(d);
  for (let j = 0; j < d; j++) v[j] = 1 + ((j * 7919 + salt * 104729) % 101) / 101;
  const norm = length(v);
  for (let j = 0; j < d; j++) v[j] /= norm;
  return v;
}

// deflate removes from v its parts along the (unit or zero) vectors found.
function deflate(v, found) {
  for (const u of found) {
    let dot = 0;
    for (let j = 0; j < v.length; j++) dot += v[j] * u[j];
    for (let j = 0; j < v.length; j++) v[j] -= dot * u[j];
  }
}

function length(v) {
  let sum = 0;
  for (let j = 0; j < v.length; j++) sum += v[j] * v[j];
  return Math.sqrt(sum);
}
