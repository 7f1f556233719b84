// A reader for the Arrow IPC stream format, enough for the answers of
// lancens' query route: one schema message, then record batches of
// primitive, string, boolean, list, fixed-size-list and struct columns,
// uncompressed and without dictionaries. readArrowStream returns
// { fields, rows } where rows are plain objects keyed by column name; it
// throws an Error naming the first thing it cannot read.

const utf8 = new TextDecoder();

// FlatTable reads one table of a FlatBuffer: fields are looked up through
// the table's vtable; an absent field yields the default.
class FlatTable {
  constructor(view, pos) {
    this.view = view;
    this.pos = pos;
    this.vtable = pos - view.getInt32(pos, true);
    this.vtableSize = view.getUint16(this.vtable, true);
  }

  offset(field) {
    const at = 4 + 2 * field;
    return at < this.vtableSize ? this.view.getUint16(this.vtable + at, true) : 0;
  }

  uint8(field, dflt = 0) {
    const o = this.offset(field);
    return o ? this.view.getUint8(this.pos + o) : dflt;
  }

  int16(field, dflt = 0) {
    const o = this.offset(field);
    return o ? this.view.getInt16(this.pos + o, true) : dflt;
  }

  int32(field, dflt = 0) {
    const o = this.offset(field);
    return o ? this.view.getInt32(this.pos + o, true) : dflt;
  }

  int64(field, dflt = 0) {
    const o = this.offset(field);
    return o ? Number(this.view.getBigInt64(this.pos + o, true)) : dflt;
  }

  table(field) {
    const o = this.offset(field);
    if (!o) return null;
    const at = this.pos + o;
    return new FlatTable(this.view, at + this.view.getUint32(at, true));
  }

  string(field) {
    const v = this.vector(field);
    if (!v) return null;
    return utf8.decode(new Uint8Array(this.view.buffer, this.view.byteOffset + v.start, v.length));
  }

  // vector returns { start, length } of a vector field, or null.
  vector(field) {
    const o = this.offset(field);
    if (!o) return null;
    let at = this.pos + o;
    at += this.view.getUint32(at, true);
    return { start: at + 4, length: this.view.getUint32(at, true) };
  }

  tables(field) {
    const v = this.vector(field);
    if (!v) return [];
    const out = [];
    for (let i = 0; i < v.length; i++) {
      const at = v.start + 4 * i;
      out.push(new FlatTable(this.view, at + this.view.getUint32(at, true)));
    }
    return out;
  }
}

// Type ids of the Arrow schema's Type union.
const T = {
  Null: 1, Int: 2, FloatingPoint: 3, Binary: 4, Utf8: 5, Bool: 6, Decimal: 7, Date: 8, Time: 9,
  Timestamp: 10, Interval: 11, List: 12, Struct: 13, Union: 14, FixedSizeBinary: 15,
  FixedSizeList: 16, Map: 17, Duration: 18, LargeBinary: 19, LargeUtf8: 20, LargeList: 21,
};
const typeNames = Object.fromEntries(Object.entries(T).map(([k, v]) => [v, k]));

const headerSchema = 1;
const headerDictionaryBatch = 2;
const headerRecordBatch = 3;

function readField(f) {
  const typeId = f.uint8(2);
  const t = f.table(3);
  const type = { id: typeId, name: typeNames[typeId] ?? `type ${typeId}` };
  switch (typeId) {
    case T.Int:
      type.bitWidth = t.int32(0);
      type.signed = t.uint8(1) !== 0;
      break;
    case T.FloatingPoint:
      type.precision = t.int16(0); // 0 half, 1 single, 2 double
      break;
    case T.FixedSizeList:
      type.listSize = t.int32(0);
      break;
    case T.FixedSizeBinary:
      type.byteWidth = t.int32(0);
      break;
    case T.Date:
    case T.Timestamp:
    case T.Time:
    case T.Duration:
      type.unit = t.int16(0, typeId === T.Date ? 1 : 0);
      if (typeId === T.Time) type.bitWidth = t.int32(1, 32);
      break;
  }
  if (f.offset(4)) throw new Error(`column ${f.string(0)}: dictionary-encoded columns are not supported`);
  return { name: f.string(0) ?? "", nullable: f.uint8(1) !== 0, type, children: f.tables(5).map(readField) };
}

// BatchReader walks the nodes and buffers of one record batch in schema order.
class BatchReader {
  constructor(batch, body) {
    this.view = new DataView(body.buffer, body.byteOffset, body.byteLength);
    const nodes = batch.vector(1);
    const buffers = batch.vector(2);
    const fv = batch.view;
    this.nodes = [];
    for (let i = 0; i < (nodes?.length ?? 0); i++) {
      const at = nodes.start + 16 * i;
      this.nodes.push({ length: Number(fv.getBigInt64(at, true)), nulls: Number(fv.getBigInt64(at + 8, true)) });
    }
    this.buffers = [];
    for (let i = 0; i < (buffers?.length ?? 0); i++) {
      const at = buffers.start + 16 * i;
      this.buffers.push({ offset: Number(fv.getBigInt64(at, true)), length: Number(fv.getBigInt64(at + 8, true)) });
    }
    this.nextNode = 0;
    this.nextBuffer = 0;
  }

  node() {
    return this.nodes[this.nextNode++];
  }

  buffer() {
    return this.buffers[this.nextBuffer++];
  }

  // column decodes one field (and its children) into an array of JS values.
  column(field) {
    const node = this.node();
    const n = node.length;
    const type = field.type;
    if (type.id === T.Null) return new Array(n).fill(null);
    const validity = this.buffer();
    const valid = (i) => validity.length === 0 || node.nulls === 0 ||
      (this.view.getUint8(validity.offset + (i >> 3)) >> (i & 7)) & 1;
    const out = new Array(n);
    const v = this.view;
    switch (type.id) {
      case T.Int: {
        const data = this.buffer().offset;
        const w = type.bitWidth / 8;
        for (let i = 0; i < n; i++) {
          if (!valid(i)) { out[i] = null; continue; }
          const at = data + w * i;
          switch (type.bitWidth) {
            case 8: out[i] = type.signed ? v.getInt8(at) : v.getUint8(at); break;
            case 16: out[i] = type.signed ? v.getInt16(at, true) : v.getUint16(at, true); break;
            case 32: out[i] = type.signed ? v.getInt32(at, true) : v.getUint32(at, true); break;
            default: out[i] = Number(type.signed ? v.getBigInt64(at, true) : v.getBigUint64(at, true));
          }
        }
        return out;
      }
      case T.FloatingPoint: {
        if (type.precision === 0) throw new Error(`column ${field.name}: half floats are not supported`);
        const data = this.buffer().offset;
        for (let i = 0; i < n; i++) {
          if (!valid(i)) { out[i] = null; continue; }
          out[i] = type.precision === 1 ? v.getFloat32(data + 4 * i, true) : v.getFloat64(data + 8 * i, true);
        }
        return out;
      }
      case T.Bool: {
        const data = this.buffer().offset;
        for (let i = 0; i < n; i++) out[i] = valid(i) ? ((v.getUint8(data + (i >> 3)) >> (i & 7)) & 1) === 1 : null;
        return out;
      }
      case T.Date:
      case T.Timestamp:
      case T.Time:
      case T.Duration: {
        const data = this.buffer().offset;
        const wide = type.id === T.Timestamp || type.id === T.Duration || (type.id === T.Date && type.unit === 1) ||
          (type.id === T.Time && type.bitWidth === 64);
        for (let i = 0; i < n; i++) {
          if (!valid(i)) { out[i] = null; continue; }
          const raw = wide ? Number(v.getBigInt64(data + 8 * i, true)) : v.getInt32(data + 4 * i, true);
          out[i] = formatTemporal(type, raw);
        }
        return out;
      }
      case T.Utf8:
      case T.Binary:
      case T.LargeUtf8:
      case T.LargeBinary: {
        const large = type.id === T.LargeUtf8 || type.id === T.LargeBinary;
        const offsets = this.buffer().offset;
        const data = this.buffer().offset;
        const off = (i) => large ? Number(v.getBigInt64(offsets + 8 * i, true)) : v.getInt32(offsets + 4 * i, true);
        for (let i = 0; i < n; i++) {
          if (!valid(i)) { out[i] = null; continue; }
          const bytes = new Uint8Array(v.buffer, v.byteOffset + data + off(i), off(i + 1) - off(i));
          out[i] = type.id === T.Utf8 || type.id === T.LargeUtf8 ? utf8.decode(bytes) : hex(bytes);
        }
        return out;
      }
      case T.FixedSizeBinary: {
        const data = this.buffer().offset;
        for (let i = 0; i < n; i++) {
          out[i] = valid(i) ? hex(new Uint8Array(v.buffer, v.byteOffset + data + type.byteWidth * i, type.byteWidth)) : null;
        }
        return out;
      }
      case T.List:
      case T.LargeList: {
        const large = type.id === T.LargeList;
        const offsets = this.buffer().offset;
        const values = this.column(field.children[0]);
        const off = (i) => large ? Number(v.getBigInt64(offsets + 8 * i, true)) : v.getInt32(offsets + 4 * i, true);
        for (let i = 0; i < n; i++) out[i] = valid(i) ? values.slice(off(i), off(i + 1)) : null;
        return out;
      }
      case T.FixedSizeList: {
        const values = this.column(field.children[0]);
        const size = type.listSize;
        for (let i = 0; i < n; i++) out[i] = valid(i) ? values.slice(size * i, size * (i + 1)) : null;
        return out;
      }
      case T.Struct: {
        const children = field.children.map((c) => [c.name, this.column(c)]);
        for (let i = 0; i < n; i++) out[i] = valid(i) ? Object.fromEntries(children.map(([k, col]) => [k, col[i]])) : null;
        return out;
      }
      default:
        throw new Error(`column ${field.name}: Arrow type ${type.name} is not supported`);
    }
  }
}

function formatTemporal(type, raw) {
  if (type.id === T.Date) return new Date(type.unit === 0 ? raw * 86400000 : raw).toISOString().slice(0, 10);
  if (type.id === T.Timestamp) {
    const ms = [raw * 1000, raw, raw / 1000, raw / 1e6][type.unit];
    return new Date(ms).toISOString();
  }
  return raw;
}

function hex(bytes) {
  return Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("");
}

// readArrowStream decodes an Arrow IPC stream (ArrayBuffer or Uint8Array)
// into { fields, rows }. It throws an Error for a truncated stream, a
// compressed body, a dictionary or a type it does not read.
export function readArrowStream(input) {
  const bytes = input instanceof Uint8Array ? input : new Uint8Array(input);
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  let at = 0;
  let fields = null;
  const rows = [];
  while (at + 4 <= bytes.byteLength) {
    let size = view.getInt32(at, true);
    at += 4;
    if (size === -1) {
      if (at + 4 > bytes.byteLength) break;
      size = view.getInt32(at, true);
      at += 4;
    }
    if (size === 0) break;
    if (at + size > bytes.byteLength) throw new Error("truncated Arrow stream");
    const message = new FlatTable(view, at + view.getUint32(at, true));
    at += size;
    const bodyLength = message.int64(3);
    if (at + bodyLength > bytes.byteLength) throw new Error("truncated Arrow stream");
    const body = bytes.subarray(at, at + bodyLength);
    at += bodyLength;
    const kind = message.uint8(1);
    const header = message.table(2);
    if (kind === headerSchema) {
      fields = header.tables(1).map(readField);
    } else if (kind === headerRecordBatch) {
      if (!fields) throw new Error("record batch before the schema");
      if (header.offset(3)) throw new Error("compressed Arrow bodies are not supported");
      const reader = new BatchReader(header, body);
      const length = header.int64(0);
      const columns = fields.map((f) => reader.column(f));
      for (let i = 0; i < length; i++) {
        const row = {};
        fields.forEach((f, c) => { row[f.name] = columns[c][i]; });
        rows.push(row);
      }
    } else if (kind === headerDictionaryBatch) {
      throw new Error("dictionary batches are not supported");
    }
  }
  if (!fields) throw new Error("no schema in the Arrow stream");
  return { fields, rows };
}
