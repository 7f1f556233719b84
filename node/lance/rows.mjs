// The rows of the datasets node/lance's scripts write and check; Go's
// lance/table/tabletest writes the same ones (goRows).
import * as lancedb from "@lancedb/lancedb";
import * as arrow from "apache-arrow";

export const dim = 8;

// vector returns the vector of the row with the given id.
export const vector = (id) => Array.from({ length: dim }, (_, j) => Math.sin(id * dim + j));

export const rowSchema = new arrow.Schema([
  new arrow.Field("id", new arrow.Int64(), false),
  new arrow.Field("name", new arrow.Utf8(), true),
  new arrow.Field("vec", new arrow.FixedSizeList(dim, new arrow.Field("item", new arrow.Float32(), true)), true),
]);

// makeRows returns n rows from id start, with the columns of sch
// (double_id and twice are id * 2).
export function makeRows(start, n, sch = rowSchema) {
  return lancedb.makeArrowTable(
    Array.from({ length: n }, (_, k) => {
      const i = start + k;
      const all = { id: BigInt(i), name: i % 7 === 0 ? null : `row ${i}`, vec: vector(i), double_id: BigInt(2 * i), twice: BigInt(2 * i) };
      return Object.fromEntries(sch.fields.map((f) => [f.name, all[f.name]]));
    }),
    { schema: sch },
  );
}
