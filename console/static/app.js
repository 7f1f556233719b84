// The console's pages and router. Pages are addressed by the URL fragment:
// #/ns/<id> a namespace, #/table/<id> a table, #/query/<id> its query page,
// #/pca/<id> its 2-D projection, #/status the server; <id> is the
// identifier's names joined by "$".

import {
  ApiError, arrowStream, call, canCreateNamespaceIn, canWrite, clearCredentials, credentials, curl, forgetPermissions, idPath,
  listPage, principal, setCredentials,
} from "./api.js";
import { parseMetrics } from "./metrics.js";
import { pca2 } from "./pca.js";

const main = document.getElementById("main");
const nav = document.getElementById("nav");
let timers = [];

// h builds an element: attributes (on* become listeners), then children
// (strings, nodes, arrays; null and false are skipped).
function h(tag, attrs = {}, ...children) {
  const svg = ["svg", "circle", "g", "text", "line", "title", "rect"].includes(tag);
  const el = svg ? document.createElementNS("http://www.w3.org/2000/svg", tag) : document.createElement(tag);
  for (const [k, v] of Object.entries(attrs ?? {})) {
    if (v === null || v === undefined || v === false) continue;
    if (k.startsWith("on")) el.addEventListener(k.slice(2), v);
    else if (k === "value" && !svg) el.value = v;
    else el.setAttribute(k, v === true ? "" : v);
  }
  for (const c of children.flat(Infinity)) {
    if (c === null || c === undefined || c === false) continue;
    el.append(c instanceof Node ? c : String(c));
  }
  return el;
}

function errorBox(e) {
  if (e instanceof ApiError) {
    const code = e.code === null ? "" : `Lance error code ${e.code}, `;
    return h("div", { class: "error", role: "alert" }, `${code}HTTP ${e.status}: ${e.message}`);
  }
  return h("div", { class: "error", role: "alert" }, String(e?.message ?? e));
}

function every(ms, fn) {
  const t = setInterval(fn, ms);
  timers.push(t);
  return () => clearInterval(t);
}

// parseId reads what idHash wrote: names encoded one by one, joined by
// "$" (which the encoding never leaves in a name). A part that does not
// decode is kept as it is, so a hand-edited address cannot break the page.
function parseId(s) {
  if (!s) return [];
  return s.split("$").map((part) => {
    try {
      return decodeURIComponent(part);
    } catch {
      return part;
    }
  });
}

function idHash(kind, parts) {
  return `#/${kind}/${parts.map(encodeURIComponent).join("$")}`;
}

function nameOf(parts) {
  return parts.length ? parts[parts.length - 1] : "(root)";
}

function breadcrumbs(parts, last) {
  const crumbs = [h("a", { href: "#/ns/" }, "(root)")];
  parts.forEach((p, i) => {
    crumbs.push(" / ");
    crumbs.push(i === parts.length - 1 && !last ? h("span", {}, p) : h("a", { href: idHash("ns", parts.slice(0, i + 1)) }, p));
  });
  if (last) crumbs.push(" / ", h("span", {}, last));
  return h("nav", { "aria-label": "Breadcrumbs", class: "muted" }, crumbs);
}

function fmtTime(ms) {
  return ms ? new Date(ms).toISOString().replace("T", " ").slice(0, 19) + " UTC" : "";
}

function fmtBytes(n) {
  if (n === null || n === undefined || Number.isNaN(n)) return "—";
  const units = ["B", "KiB", "MiB", "GiB", "TiB"];
  let i = 0;
  while (n >= 1024 && i < units.length - 1) { n /= 1024; i++; }
  return `${n.toFixed(i ? 1 : 0)} ${units[i]}`;
}

function fmtValue(v) {
  if (v === null || v === undefined) return h("span", { class: "muted" }, "NULL");
  if (Array.isArray(v)) {
    const shown = v.slice(0, 4).map((x) => typeof x === "number" ? Number(x.toPrecision(4)) : x);
    return `[${shown.join(", ")}${v.length > 4 ? `, … ${v.length} items` : ""}]`;
  }
  if (typeof v === "object") return JSON.stringify(v);
  if (typeof v === "number" && !Number.isInteger(v)) return String(Number(v.toPrecision(6)));
  return String(v);
}

// typeString renders a field type of the JSON Arrow schema.
function typeString(t) {
  if (!t) return "?";
  if (t.type === "fixed_size_list") return `fixed_size_list<${typeString(t.fields?.[0]?.type)}>[${t.length}]`;
  if (t.type === "list" || t.type === "large_list") return `${t.type}<${typeString(t.fields?.[0]?.type)}>`;
  if (t.type === "struct") return `struct<${(t.fields ?? []).map((f) => `${f.name}: ${typeString(f.type)}`).join(", ")}>`;
  return t.type;
}

function isVectorField(f) {
  const t = f.type;
  return t?.type === "fixed_size_list" && ["float16", "float32", "float64"].includes(t.fields?.[0]?.type?.type);
}

function isScalarField(f) {
  return !["fixed_size_list", "list", "large_list", "struct", "binary", "large_binary"].includes(f.type?.type);
}

async function describe(parts) {
  const { body } = await call(`/v1/table/${idPath(parts)}/describe`, { body: { load_detailed_metadata: true } });
  return body;
}

// isUnconverted says whether d is a table an earlier lancens kept inside
// its database file, which lancens migrate has not converted yet.
function isUnconverted(d) {
  return (d.location ?? "").startsWith("lancens://");
}

function kindBadge(d) {
  return isUnconverted(d)
    ? h("span", { class: "badge managed", title: "rows kept in the database file of an earlier lancens: convert them with lancens migrate" }, "not converted")
    : h("span", { class: "badge files", title: "a Lance dataset at its location, written by lancens and by Lance clients" }, "Lance files");
}

// ---------- navigation and sign-in ----------

function renderNav() {
  const c = credentials();
  const items = [];
  if (c !== null) items.push(h("a", { href: "#/ns/" }, "Namespaces"), h("a", { href: "#/status" }, "Status"));
  items.push(h("span", { class: "spacer" }));
  // A server without keys has nothing to sign out of.
  if (c?.secret) {
    items.push(h("button", {
      class: "link", type: "button",
      onclick: () => { clearCredentials(); forgetPermissions(); location.hash = "#/"; route(); },
    }, "Sign out"));
  }
  nav.replaceChildren(...items);
}

function loginPage() {
  const status = h("div", { "aria-live": "polite" });
  const kind = h("select", { id: "cred-kind", name: "kind" },
    h("option", { value: "key" }, "API key (x-api-key)"), h("option", { value: "bearer" }, "Bearer token"));
  const secret = h("input", { id: "cred-secret", name: "secret", type: "password", autocomplete: "off" });
  const form = h("form", {
    onsubmit: async (ev) => {
      ev.preventDefault();
      setCredentials(kind.value, secret.value.trim());
      forgetPermissions();
      try {
        await call("/v1/namespace/%24/list?limit=1", { method: "GET" });
        if (!location.hash.startsWith("#/") || location.hash === "#/login") location.hash = "#/ns/";
        route();
      } catch (e) {
        clearCredentials();
        status.replaceChildren(errorBox(e));
      }
    },
  },
  h("label", { for: "cred-kind" }, "Credential type", kind),
  h("label", { for: "cred-secret" }, "API key or token", secret),
  h("p", { class: "note" }, "Kept in this tab's session storage only. Leave empty for a server without keys."),
  h("button", { type: "submit" }, "Connect"));
  return h("section", { class: "login" }, h("h1", {}, "Connect to lancens"), form, status);
}

// ---------- namespaces ----------

async function treeLevel(parts, current) {
  const ul = h("ul", { role: "group" });
  let page;
  try {
    page = await listPage("namespaces", parts, null, 100);
  } catch (e) {
    return h("ul", {}, h("li", {}, errorBox(e)));
  }
  for (const name of page.items) {
    const child = [...parts, name];
    const onPath = current.length >= child.length && child.every((p, i) => current[i] === p);
    const here = onPath && current.length === child.length;
    const li = h("li", { role: "treeitem", "aria-expanded": onPath ? "true" : "false" });
    const sub = h("div");
    const toggle = h("button", {
      class: "toggle", type: "button", "aria-label": `Expand ${name}`,
      onclick: async () => {
        const open = li.getAttribute("aria-expanded") === "true";
        li.setAttribute("aria-expanded", open ? "false" : "true");
        toggle.textContent = open ? "▸" : "▾";
        sub.replaceChildren(open ? "" : await treeLevel(child, current));
      },
    }, onPath ? "▾" : "▸");
    li.append(toggle, h("a", { href: idHash("ns", child), "aria-current": here ? "page" : null }, name), sub);
    if (onPath) sub.append(await treeLevel(child, current));
    ul.append(li);
  }
  if (page.next) ul.append(h("li", { class: "muted" }, "more namespaces: use the table of children"));
  return ul;
}

async function namespacePage(parts) {
  const tree = h("nav", { class: "tree", "aria-label": "Namespace tree" },
    h("ul", { role: "tree" }, h("li", { role: "treeitem" },
      h("a", { href: "#/ns/", "aria-current": parts.length === 0 ? "page" : null }, "(root)"), await treeLevel([], parts))));
  const body = h("section", { "aria-labelledby": "ns-title" });
  const title = parts.length ? `Namespace ${parts.join(" / ")}` : "Root namespace";
  body.append(breadcrumbs(parts), h("h1", { id: "ns-title" }, title));

  const writable = await canWrite(parts);
  if (!writable) body.append(h("p", {}, h("span", { class: "badge ro" }, "read-only"), " You may look but not change anything here."));
  const mayCreate = await canCreateNamespaceIn(parts);

  // Child namespaces.
  const children = h("div");
  body.append(h("h2", {}, "Namespaces"), children);
  pagedList(children, "namespaces", parts, (names) => names.length
    ? h("ul", {}, names.map((n) => h("li", {}, h("a", { href: idHash("ns", [...parts, n]) }, n))))
    : h("p", { class: "note" }, "No child namespaces."));

  if (mayCreate) {
    const name = h("input", { id: "new-ns", required: true, pattern: "[^$]+" });
    const out = h("div", { "aria-live": "polite" });
    body.append(h("form", {
      class: "inline",
      onsubmit: async (ev) => {
        ev.preventDefault();
        try {
          await call(`/v1/namespace/${idPath([...parts, name.value])}/create`, { body: {} });
          location.hash = idHash("ns", [...parts, name.value]);
        } catch (e) {
          out.replaceChildren(errorBox(e));
        }
      },
    }, h("label", { for: "new-ns" }, "New child namespace", name), h("button", { type: "submit" }, "Create namespace")), out);
  }

  // Tables.
  const tables = h("div");
  body.append(h("h2", {}, "Tables"), tables);
  pagedList(tables, "tables", parts, async (names) => {
    if (!names.length) return h("p", { class: "note" }, "This namespace has no tables.");
    const described = await Promise.all(names.map((n) => describe([...parts, n]).catch((e) => e)));
    return h("table", { class: "grid", id: "tables" },
      h("thead", {}, h("tr", {}, h("th", { scope: "col" }, "Table"), h("th", { scope: "col" }, "Kind"),
        h("th", { scope: "col" }, "Version"), h("th", { scope: "col" }, "Location"))),
      h("tbody", {}, names.map((n, i) => {
        const d = described[i];
        const link = h("a", { href: idHash("table", [...parts, n]) }, n);
        if (d instanceof Error) return h("tr", {}, h("td", {}, link), h("td", { colspan: 3 }, errorBox(d)));
        return h("tr", {}, h("td", {}, link), h("td", {}, kindBadge(d)), h("td", {}, d.version ?? "—"), h("td", {}, d.location));
      })));
  });
  return h("div", { class: "layout" }, tree, body);
}

// pagedList shows one page of a listing with a page-size choice and
// previous/next buttons that follow the server's page tokens.
function pagedList(container, kind, parts, renderItems) {
  const tokens = [null];
  let index = 0;
  const size = h("select", { "aria-label": `${kind} per page`, class: "page-size" },
    [5, 20, 50, 100].map((n) => h("option", { value: n, selected: n === 20 }, n)));
  const prev = h("button", { type: "button", class: "secondary" }, "Previous");
  const next = h("button", { type: "button", class: "secondary" }, "Next");
  const label = h("span", { class: "muted" });
  const slot = h("div");
  let latest = 0;
  const load = async () => {
    const mine = ++latest;
    prev.disabled = next.disabled = true;
    try {
      const page = await listPage(kind, parts, tokens[index], Number(size.value));
      if (mine !== latest) return; // a newer page was asked for meanwhile
      tokens[index + 1] = page.next;
      slot.replaceChildren(await renderItems(page.items));
      label.textContent = `Page ${index + 1}`;
      prev.disabled = index === 0;
      next.disabled = !page.next;
    } catch (e) {
      slot.replaceChildren(errorBox(e));
    }
  };
  prev.addEventListener("click", () => { index--; load(); });
  next.addEventListener("click", () => { index++; load(); });
  size.addEventListener("change", () => { tokens.length = 1; index = 0; load(); });
  container.append(slot, h("div", { class: "pager", role: "group", "aria-label": `${kind} pages` },
    prev, label, next, h("label", { class: "check" }, "Per page ", size)));
  load();
}

// ---------- a table ----------

const jobsKey = "lancens.console.jobs";

function sessionJobs(parts) {
  const all = JSON.parse(sessionStorage.getItem(jobsKey) ?? "{}");
  return all[parts.join("$")] ?? [];
}

function rememberJob(parts, job) {
  const all = JSON.parse(sessionStorage.getItem(jobsKey) ?? "{}");
  const key = parts.join("$");
  all[key] = [job, ...(all[key] ?? [])].slice(0, 50);
  sessionStorage.setItem(jobsKey, JSON.stringify(all));
}

const terminalIndex = new Set(["SUCCEEDED", "FAILED", "CANCELLED"]);

// firstRows is how many rows the table page shows.
const firstRows = 10;
const terminalTx = new Set(["Succeeded", "Failed", "Canceled", "Cancelled", "Aborted"]);

async function tablePage(parts) {
  const d = await describe(parts);
  const base = `/v1/table/${idPath(parts)}`;
  const writable = await canWrite(parts.slice(0, -1));
  const fields = d.schema?.fields ?? [];
  const page = h("section", { "aria-labelledby": "table-title" });
  page.append(breadcrumbs(parts.slice(0, -1), nameOf(parts)),
    h("h1", { id: "table-title" }, `Table ${nameOf(parts)} `, kindBadge(d), writable ? "" : [" ", h("span", { class: "badge ro" }, "read-only")]),
    h("div", { class: "row" }, h("a", { href: idHash("query", parts) }, "Query this table"),
      fields.some(isVectorField) && h("a", { href: idHash("pca", parts) }, "Projection of a vector column")));

  const rows = h("div", { class: "value", id: "row-count" }, "…");
  call(`${base}/count_rows`, { body: {} }).then((r) => { rows.textContent = String(r.body); },
    () => { rows.textContent = "—"; });
  page.append(h("div", { class: "cards" },
    h("div", { class: "card" }, h("div", { class: "label" }, "Rows"), rows),
    h("div", { class: "card" }, h("div", { class: "label" }, "Version"), h("div", { class: "value" }, d.version ?? "—")),
    h("div", { class: "card" }, h("div", { class: "label" }, "Fragments / deleted rows"),
      h("div", { class: "value" }, d.stats ? `${d.stats.num_fragments} / ${d.stats.num_deleted_rows}` : "—")),
    h("div", { class: "card" }, h("div", { class: "label" }, "Location"), h("div", { class: "value", id: "location" }, d.location))));

  page.append(h("h2", {}, "Schema"), fields.length
    ? h("table", { class: "grid", id: "schema" },
      h("thead", {}, h("tr", {}, h("th", { scope: "col" }, "Column"), h("th", { scope: "col" }, "Type"), h("th", { scope: "col" }, "Nullable"))),
      h("tbody", {}, fields.map((f) => h("tr", {}, h("td", {}, f.name), h("td", {}, typeString(f.type)), h("td", {}, f.nullable ? "yes" : "no")))))
    : h("p", { class: "note" }, "No schema recorded (a declared table, or Lance files only)."));

  // The first rows, as a query with no filter returns them.
  const first = h("div", { id: "first-rows", "aria-live": "polite" }, "…");
  page.append(h("h2", {}, "First rows"), first);
  if (fields.length) {
    call(`${base}/query`, { body: { vector: null, k: firstRows }, accept: arrowStream }).then((res) => {
      first.replaceChildren(resultTable(res.body, [], null),
        h("p", { class: "note" }, "More rows, filters and searches: ", h("a", { href: idHash("query", parts) }, "the query page"), "."));
    }, (e) => first.replaceChildren(errorBox(e)));
  } else {
    first.replaceChildren(h("p", { class: "note" }, "No rows to show: the table has no schema lancens can read."));
  }

  // Versions and tags as one timeline, newest first.
  const timeline = h("div", { id: "versions" }, "…");
  page.append(h("h2", {}, "Versions and tags"), timeline);
  Promise.all([
    call(`${base}/version/list`, { body: { descending: true, limit: 100 } }),
    call(`${base}/tags/list`, { body: { limit: 100 } }).catch(() => ({ body: { tags: {} } })),
  ]).then(([v, t]) => {
    const tags = {};
    for (const [name, tag] of Object.entries(t.body.tags ?? {})) (tags[tag.version] ??= []).push(name);
    const versions = [...(v.body.versions ?? [])].sort((a, b) => b.version - a.version);
    timeline.replaceChildren(versions.length
      ? h("ol", { class: "timeline" }, versions.map((x) => h("li", {},
        h("strong", {}, `v${x.version}`), " ", h("span", { class: "muted" }, fmtTime(x.timestamp_millis)), " ",
        x.metadata?.operation ?? "", " ", (tags[x.version] ?? []).map((n) => h("span", { class: "badge" }, `tag ${n}`)))))
      : h("p", { class: "note" }, "No versions yet."));
  }, (e) => timeline.replaceChildren(errorBox(e)));

  const branches = h("div", { id: "branches" }, "…");
  page.append(h("h2", {}, "Branches"), branches);
  call(`${base}/branches/list`, { body: {} }).then(({ body }) => {
    const list = Object.entries(body.branches ?? {});
    branches.replaceChildren(list.length
      ? h("ul", {}, list.map(([name, b]) => h("li", {}, name, b.parentVersion !== undefined ? ` (from ${b.parentBranch ? `${b.parentBranch} ` : ""}v${b.parentVersion})` : "")))
      : h("p", { class: "note" }, "Only the main branch."));
  }, (e) => branches.replaceChildren(errorBox(e)));

  // Indexes, refreshed every second while one builds.
  const indexes = h("div", { id: "indexes", "aria-live": "polite" }, "…");
  page.append(h("h2", {}, "Indexes"), indexes);
  let stopIndexes = null;
  const loadIndexes = async () => {
    try {
      const { body } = await call(`${base}/index/list`, { body: {} });
      const list = body.indexes ?? [];
      indexes.replaceChildren(list.length ? h("table", { class: "grid" },
        h("thead", {}, h("tr", {}, ["Index", "Type", "Columns", "Status", "Progress", "Indexed rows", "Size"].map((c) => h("th", { scope: "col" }, c)))),
        h("tbody", {}, list.map((ix) => {
          const done = ix.num_indexed_rows ?? 0;
          const total = done + (ix.num_unindexed_rows ?? 0);
          return h("tr", { "data-index": ix.index_name },
            h("td", {}, ix.index_name), h("td", {}, ix.index_type ?? ""), h("td", {}, ix.columns.join(", ")),
            h("td", { class: "status" }, h("span", { class: `badge ${ix.status === "SUCCEEDED" ? "good" : ix.status === "FAILED" ? "bad" : ""}` }, ix.status)),
            h("td", {}, h("progress", { max: total || 1, value: done, "aria-label": `${ix.index_name} progress` })),
            h("td", {}, `${done} of ${total}`), h("td", {}, fmtBytes(ix.size_bytes)));
        }))) : h("p", { class: "note" }, "No indexes."));
      const building = list.some((ix) => !terminalIndex.has(ix.status));
      if (building && !stopIndexes) stopIndexes = every(1000, loadIndexes);
      if (!building && stopIndexes) { stopIndexes(); stopIndexes = null; }
    } catch (e) {
      indexes.replaceChildren(errorBox(e));
    }
  };
  loadIndexes();

  if (writable && fields.length) {
    const column = h("select", { id: "ix-column" }, fields.map((f) => h("option", { value: f.name }, f.name)));
    const type = h("select", { id: "ix-type" },
      ["BTREE", "BITMAP", "LABEL_LIST", "FTS", "IVF_FLAT", "IVF_PQ", "IVF_SQ", "IVF_HNSW_SQ", "IVF_HNSW_PQ"].map((t) => h("option", { value: t }, t)));
    const metric = h("select", { id: "ix-metric" }, ["l2", "cosine", "dot"].map((m) => h("option", { value: m }, m)));
    const out = h("div", { "aria-live": "polite" });
    page.append(h("form", {
      class: "inline", id: "create-index",
      onsubmit: async (ev) => {
        ev.preventDefault();
        const vector = type.value.startsWith("IVF");
        const req = { column: column.value, index_type: type.value, ...(vector ? { distance_type: metric.value } : {}) };
        try {
          const { body } = await call(`${base}/create_index`, { body: req });
          if (body.transaction_id) rememberJob(parts, { id: body.transaction_id, what: `create ${type.value} index on ${column.value}`, at: Date.now() });
          out.replaceChildren(h("p", { class: "note" }, `Index build started${body.transaction_id ? ` (transaction ${body.transaction_id})` : ""}.`));
          loadIndexes();
          loadJobs();
        } catch (e) {
          out.replaceChildren(errorBox(e));
        }
      },
    }, h("label", { for: "ix-column" }, "Column", column), h("label", { for: "ix-type" }, "Index type", type),
    h("label", { for: "ix-metric" }, "Distance (vector indexes)", metric), h("button", { type: "submit" }, "Create index")), out);
  }

  // The job log: the transactions this session started on the table, live.
  const jobs = h("div", { id: "jobs", "aria-live": "polite" });
  page.append(h("h2", {}, "Transaction and job log"),
    h("p", { class: "note" }, "Commits appear in the timeline above; background jobs started from this console are followed here."), jobs);
  let stopJobs = null;
  const loadJobs = async () => {
    const list = sessionJobs(parts);
    const described = await Promise.all(list.map((j) => call(`/v1/transaction/${encodeURIComponent(j.id)}/describe`, { body: {} })
      .then((r) => r.body, (e) => ({ error: e }))));
    jobs.replaceChildren(list.length ? h("table", { class: "grid" },
      h("thead", {}, h("tr", {}, ["Started", "What", "Transaction", "Status", "Details"].map((c) => h("th", { scope: "col" }, c)))),
      h("tbody", {}, list.map((j, i) => {
        const t = described[i];
        const props = Object.entries(t.properties ?? {}).filter(([k]) => !["table_uuid", "operation"].includes(k));
        return h("tr", {}, h("td", {}, fmtTime(j.at)), h("td", {}, j.what), h("td", {}, h("code", {}, j.id)),
          h("td", {}, t.error ? errorBox(t.error) : t.status), h("td", {}, props.map(([k, v]) => `${k}=${v}`).join(" ")));
      }))) : h("p", { class: "note" }, "No jobs started from this console on this table."));
    const running = described.some((t) => !t.error && !terminalTx.has(t.status));
    // A job that runs or has just ended may change the indexes.
    if (running || stopJobs) loadIndexes();
    if (running && !stopJobs) stopJobs = every(1000, loadJobs);
    if (!running && stopJobs) { stopJobs(); stopJobs = null; }
  };
  loadJobs();
  return page;
}

// ---------- queries ----------

async function queryPage(parts, preset = {}) {
  const d = await describe(parts);
  const fields = d.schema?.fields ?? [];
  const vectorFields = fields.filter(isVectorField);
  const base = `/v1/table/${idPath(parts)}`;
  const page = h("section", { "aria-labelledby": "query-title" });
  page.append(breadcrumbs(parts.slice(0, -1), nameOf(parts)),
    h("h1", { id: "query-title" }, `Query ${nameOf(parts)}`),
    h("p", {}, h("a", { href: idHash("table", parts) }, "Back to the table")));
  if (!fields.length) {
    page.append(h("p", { class: "note" }, "This table has no schema lancens can query."));
    return page;
  }
  const input = (id, label, attrs = {}) => {
    const el = h("input", { id, name: id, ...attrs });
    return [el, h("label", { for: id }, label, el)];
  };
  const [filter, filterL] = input("q-filter", "Filter (SQL)", { size: 40, placeholder: "id > 10 AND cat = 'c1'" });
  const [limit, limitL] = input("q-limit", "Limit", { type: "number", min: 1, value: 20, size: 6 });
  const [offset, offsetL] = input("q-offset", "Offset", { type: "number", min: 0, value: 0, size: 6 });
  const [version, versionL] = input("q-version", "Version (latest if empty)", { type: "number", min: 0, size: 8 });
  const order = h("select", { id: "q-order" }, h("option", { value: "" }, "(none)"),
    fields.filter(isScalarField).map((f) => h("option", { value: f.name }, f.name)));
  const direction = h("select", { id: "q-dir", "aria-label": "Order direction" }, h("option", { value: "asc" }, "ascending"), h("option", { value: "desc" }, "descending"));
  const columns = h("fieldset", { class: "row" }, h("legend", {}, "Columns"),
    fields.map((f) => h("label", { class: "check" }, h("input", { type: "checkbox", name: "col", value: f.name, checked: true }), f.name)));
  const [fts, ftsL] = input("q-fts", "Full-text search", { size: 30 });
  const ftsColumn = h("select", { id: "q-fts-col" }, h("option", { value: "" }, "(every indexed column)"),
    fields.filter((f) => ["utf8", "large_utf8"].includes(f.type?.type)).map((f) => h("option", { value: f.name }, f.name)));
  const vecColumn = h("select", { id: "q-vec-col" }, vectorFields.map((f) => h("option", { value: f.name }, f.name)));
  const vector = h("textarea", { id: "q-vector", rows: 2, placeholder: "[0.1, 0.2, …]" });
  const metric = h("select", { id: "q-metric" }, ["l2", "cosine", "dot"].map((m) => h("option", { value: m }, m)));
  const [k, kL] = input("q-k", "k (nearest rows)", { type: "number", min: 1, value: 10, size: 6 });
  const results = h("div", { id: "results", "aria-live": "polite" });
  const curlBox = h("pre", { class: "curl", id: "curl" });

  const run = async () => {
    const body = { vector: null, k: Number(limit.value) || 20 };
    if (filter.value.trim()) body.filter = filter.value.trim();
    const chosen = [...columns.querySelectorAll("input[name=col]:checked")].map((c) => c.value);
    if (chosen.length && chosen.length < fields.length) body.columns = { column_names: chosen };
    if (Number(offset.value) > 0) body.offset = Number(offset.value);
    if (version.value !== "") body.version = Number(version.value);
    if (vector.value.trim()) {
      let v;
      try {
        v = JSON.parse(vector.value);
        if (!Array.isArray(v) || !v.every((x) => typeof x === "number")) throw new Error();
      } catch {
        results.replaceChildren(errorBox(new Error("The query vector must be a JSON array of numbers.")));
        return;
      }
      body.vector = { single_vector: v };
      body.vector_column = vecColumn.value;
      body.distance_type = metric.value;
      body.k = Number(k.value) || 10;
    } else if (fts.value.trim()) {
      body.full_text_query = { string_query: { query: fts.value.trim(), ...(ftsColumn.value ? { columns: [ftsColumn.value] } : {}) } };
    } else if (order.value) {
      body.order_by = [{ column_name: order.value, ascending: direction.value === "asc" }];
    }
    const path = `${base}/query`;
    curlBox.textContent = curl(path, { body, accept: arrowStream });
    results.replaceChildren(h("p", { class: "note" }, "Running…"));
    try {
      const res = await call(path, { body, accept: arrowStream });
      const read = res.headers.get("X-Lancens-Table-Version");
      results.replaceChildren(
        h("p", { id: "result-summary" }, `${res.body.rows.length} rows`, read ? ` · version read ${read}` : ""),
        resultTable(res.body, vectorFields.map((f) => f.name), (row, col) => {
          vecColumn.value = col;
          vector.value = JSON.stringify(row[col]);
          fts.value = "";
          run();
        }));
    } catch (e) {
      results.replaceChildren(errorBox(e));
    }
  };
  if (preset.vector) vector.value = JSON.stringify(preset.vector);
  const form = h("form", { id: "query-form", onsubmit: (ev) => { ev.preventDefault(); run(); } },
    h("div", { class: "row" }, filterL, limitL, offsetL, versionL,
      h("label", { for: "q-order" }, "Order by", order), h("label", { class: "check" }, direction)),
    columns,
    h("h2", {}, "Full-text search"), h("div", { class: "row" }, ftsL, h("label", { for: "q-fts-col" }, "In column", ftsColumn)),
    h("h2", {}, "Vector search"),
    vectorFields.length
      ? h("div", { class: "row" }, h("label", { for: "q-vec-col" }, "Vector column", vecColumn),
        h("label", { for: "q-metric" }, "Distance", metric), kL,
        h("label", { for: "q-vector", class: "grow" }, "Query vector (or use “Find similar” on a row)", vector))
      : h("p", { class: "note" }, "This table has no vector column."),
    h("div", { class: "row" }, h("button", { type: "submit" }, "Run query"),
      h("button", { type: "button", class: "secondary", onclick: () => { vector.value = ""; fts.value = ""; run(); } }, "Clear searches and run")));
  const copy = h("button", {
    type: "button", class: "secondary",
    onclick: async () => {
      try { await navigator.clipboard.writeText(curlBox.textContent); copy.textContent = "Copied"; } catch { copy.textContent = "Select the text to copy"; }
    },
  }, "Copy curl command");
  page.append(form, h("h2", {}, "Results"), results, h("h2", {}, "The request as curl"), curlBox, copy);
  run();
  return page;
}

function resultTable({ fields, rows }, vectorColumns, findSimilar) {
  const similarCol = vectorColumns.find((c) => fields.some((f) => f.name === c));
  if (!rows.length) return h("p", { class: "note" }, "No rows.");
  return h("table", { class: "grid", id: "result-table" },
    h("thead", {}, h("tr", {}, fields.map((f) => h("th", { scope: "col" }, f.name)), similarCol && h("th", { scope: "col" }, "Similar"))),
    h("tbody", {}, rows.map((r) => h("tr", {}, fields.map((f) => h("td", {}, fmtValue(r[f.name]))),
      similarCol && h("td", {}, Array.isArray(r[similarCol])
        ? h("button", { type: "button", class: "secondary find-similar", onclick: () => findSimilar(r, similarCol) }, "Find similar")
        : "")))));
}

// ---------- the 2-D projection ----------

const palette = ["#0b5cad", "#d1242f", "#1a7f37", "#8250df", "#bf8700", "#0a7d8c", "#cf222e", "#6e7781", "#e16f24", "#3d5afe", "#a0114d", "#2da44e"];

async function pcaPage(parts) {
  const d = await describe(parts);
  const fields = d.schema?.fields ?? [];
  const vectorFields = fields.filter(isVectorField);
  const page = h("section", { "aria-labelledby": "pca-title" });
  page.append(breadcrumbs(parts.slice(0, -1), nameOf(parts)),
    h("h1", { id: "pca-title" }, `Projection of ${nameOf(parts)}`),
    h("p", {}, h("a", { href: idHash("table", parts) }, "Back to the table")));
  if (!vectorFields.length) {
    page.append(h("p", { class: "note" }, "This table has no vector column to project."));
    return page;
  }
  const column = h("select", { id: "pca-col" }, vectorFields.map((f) => h("option", { value: f.name }, f.name)));
  const colour = h("select", { id: "pca-colour" }, h("option", { value: "" }, "(none)"),
    fields.filter(isScalarField).map((f) => h("option", { value: f.name }, f.name)));
  const sample = h("input", { id: "pca-sample", type: "number", min: 2, max: 5000, value: 500, size: 6 });
  const filter = h("input", { id: "pca-filter", size: 30 });
  const out = h("div", { id: "pca-out" });
  const draw = async () => {
    out.replaceChildren(h("p", { class: "note" }, "Sampling…"));
    const body = { vector: null, k: Number(sample.value) || 500 };
    if (filter.value.trim()) body.filter = filter.value.trim();
    try {
      const res = await call(`/v1/table/${idPath(parts)}/query`, { body, accept: arrowStream });
      out.replaceChildren(plot(res.body.rows.filter((r) => Array.isArray(r[column.value])), column.value, colour.value));
    } catch (e) {
      out.replaceChildren(errorBox(e));
    }
  };
  page.append(h("form", { class: "inline", onsubmit: (ev) => { ev.preventDefault(); draw(); } },
    h("label", { for: "pca-col" }, "Vector column", column), h("label", { for: "pca-colour" }, "Colour by", colour),
    h("label", { for: "pca-sample" }, "Sample rows", sample), h("label", { for: "pca-filter" }, "Filter", filter),
    h("button", { type: "submit" }, "Draw")), out);
  draw();
  return page;
}

function plot(rows, vectorColumn, colourColumn) {
  if (rows.length < 2) return h("p", { class: "note" }, "Fewer than two rows with a vector: nothing to project.");
  const { points, variances } = pca2(rows.map((r) => r[vectorColumn]));
  const W = 640, H = 480, pad = 24;
  const xs = points.map((p) => p[0]), ys = points.map((p) => p[1]);
  const [x0, x1, y0, y1] = [Math.min(...xs), Math.max(...xs), Math.min(...ys), Math.max(...ys)];
  const sx = (x) => pad + (x1 > x0 ? (x - x0) / (x1 - x0) : 0.5) * (W - 2 * pad);
  const sy = (y) => H - pad - (y1 > y0 ? (y - y0) / (y1 - y0) : 0.5) * (H - 2 * pad);
  const values = colourColumn ? rows.map((r) => r[colourColumn]) : [];
  const distinct = [...new Set(values.map(String))];
  const numeric = colourColumn && distinct.length > palette.length && values.every((v) => typeof v === "number" || v === null);
  const nums = values.filter((v) => typeof v === "number");
  const [v0, v1] = [Math.min(...nums), Math.max(...nums)];
  const colourOf = (i) => {
    if (!colourColumn) return palette[0];
    if (numeric) {
      const v = values[i];
      if (v === null) return "#999";
      const t = v1 > v0 ? (v - v0) / (v1 - v0) : 0.5;
      return `hsl(${240 - 240 * t}, 75%, 45%)`;
    }
    return palette[distinct.indexOf(String(values[i])) % palette.length];
  };
  const hover = h("div", { class: "hover", id: "pca-hover", "aria-live": "polite" }, "Point at a dot (or focus it with Tab) to see its row.");
  let marked = null;
  const show = (i, circle) => {
    marked?.removeAttribute("stroke");
    marked = circle;
    circle.setAttribute("stroke", "#000");
    circle.setAttribute("stroke-width", "2");
    const r = rows[i];
    hover.replaceChildren(h("table", { class: "grid" }, h("tbody", {}, Object.entries(r).map(([k, v]) => h("tr", {}, h("th", { scope: "row" }, k), h("td", {}, fmtValue(v)))))));
  };
  const svg = h("svg", { viewBox: `0 0 ${W} ${H}`, role: "img", "aria-label": `PCA projection of ${rows.length} rows of ${vectorColumn}`, id: "pca-svg" },
    h("line", { x1: pad, y1: H - pad, x2: W - pad, y2: H - pad, stroke: "#d0d7de" }),
    h("line", { x1: pad, y1: pad, x2: pad, y2: H - pad, stroke: "#d0d7de" }),
    points.map((p, i) => h("circle", {
      cx: sx(p[0]).toFixed(1), cy: sy(p[1]).toFixed(1), r: 4, fill: colourOf(i), "fill-opacity": 0.8, tabindex: 0,
      "data-row": i, onmouseenter: (ev) => show(i, ev.currentTarget), onfocus: (ev) => show(i, ev.currentTarget),
    })));
  const total = variances[0] + variances[1];
  const legend = colourColumn && !numeric
    ? h("ul", { class: "legend", "aria-label": "Colours" }, distinct.slice(0, palette.length).map((v, i) => {
      const sw = h("span", { class: "swatch" });
      sw.style.background = palette[i];
      return h("li", {}, sw, v);
    }))
    : colourColumn ? h("p", { class: "note" }, `${colourColumn}: blue is ${v0}, red is ${v1}.`) : null;
  return h("div", {},
    h("p", { class: "note", id: "pca-summary" }, `${rows.length} rows; variance along the axes ${variances[0].toPrecision(3)} and ${variances[1].toPrecision(3)}` +
      (total > 0 ? ` (${(100 * variances[0] / total).toFixed(0)}% / ${(100 * variances[1] / total).toFixed(0)}% of the two)` : "")),
    legend, h("div", { class: "plot" }, svg, hover));
}

// ---------- server status ----------

async function statusPage() {
  const page = h("section", { "aria-labelledby": "status-title" }, h("h1", { id: "status-title" }, "Server status"));
  const probe = async (path) => {
    try {
      const res = await fetch(path);
      return { ok: res.ok, status: res.status, text: await res.text() };
    } catch (e) {
      return { ok: false, status: 0, text: String(e) };
    }
  };
  const [health, ready] = await Promise.all([probe("/healthz"), probe("/readyz")]);
  const state = (r) => r.ok ? h("span", { class: "badge good" }, "ok")
    : r.status === 404 || r.status === 401 ? h("span", { class: "badge" }, "not offered by this server")
      : h("span", { class: "badge bad" }, `failing (HTTP ${r.status})`);
  let metrics = null;
  let metricsNote = null;
  try {
    const res = await call("/metrics", { method: "GET", accept: "text/plain" });
    metrics = parseMetrics(res.body);
  } catch (e) {
    metricsNote = e instanceof ApiError && e.status === 404
      ? h("p", { class: "note", id: "no-metrics" }, "This server has no /metrics endpoint, so there are no metrics to show.")
      : errorBox(e);
  }
  const get = (name) => metrics?.filter((m) => m.name === name) ?? [];
  const sum = (name, pred = () => true) => get(name).filter(pred).reduce((a, m) => a + m.value, 0);
  const build = get("lancens_build_info")[0];
  const start = get("process_start_time_seconds")[0]?.value;
  const uptime = start ? Math.max(0, Date.now() / 1000 - start) : null;
  const card = (label, value) => h("div", { class: "card" }, h("div", { class: "label" }, label), h("div", { class: "value" }, value));
  page.append(h("div", { class: "cards", id: "status-cards" },
    card("Liveness (/healthz)", state(health)),
    card("Readiness (/readyz)", state(ready)),
    card("Version", build ? `${build.labels.version ?? "?"} ${build.labels.revision ? `(${build.labels.revision.slice(0, 12)})` : ""}` : "unknown"),
    card("Uptime", uptime === null ? "unknown" : fmtDuration(uptime))));
  if (metricsNote) page.append(metricsNote);
  if (metrics) {
    page.append(h("h2", {}, "Key metrics"), h("div", { class: "cards", id: "metric-cards" },
      card("Requests", sum("lancens_http_requests_total")),
      card("Server errors (5xx)", sum("lancens_http_requests_total", (m) => String(m.labels.code ?? "").startsWith("5"))),
      card("Commits", get("lancens_commits_total").filter((m) => m.value > 0).map((m) => `${m.labels.result} ${m.value}`).join(", ") || "0"),
      card("Background jobs", get("lancens_jobs").filter((m) => m.value > 0).map((m) => `${m.labels.kind} ${m.labels.state} ${m.value}`).join(", ") || "none"),
      card("Database size", fmtBytes(sum("lancens_db_size_bytes"))),
      card("Cache", `${fmtBytes(sum("lancens_cache_bytes"))} of ${fmtBytes(sum("lancens_cache_budget_bytes"))}`),
      card("Go heap", fmtBytes(sum("go_memstats_heap_alloc_bytes"))),
      card("Goroutines", sum("go_goroutines"))));
  }
  return page;
}

function fmtDuration(s) {
  const d = Math.floor(s / 86400), hh = Math.floor(s / 3600) % 24, m = Math.floor(s / 60) % 60;
  return d ? `${d} d ${hh} h` : hh ? `${hh} h ${m} min` : m ? `${m} min ${Math.floor(s % 60)} s` : `${Math.floor(s)} s`;
}

// ---------- router ----------

// openWithoutCredentials asks the server who a request without
// credentials is: a server without keys answers (the anonymous admin), and
// the console then opens without a sign-in step. It reports whether it did.
async function openWithoutCredentials() {
  setCredentials("key", "");
  forgetPermissions();
  try {
    const p = await principal();
    if (!p.credentials_required) {
      renderNav();
      return true;
    }
  } catch {
    // 401: the server wants credentials.
  }
  clearCredentials();
  forgetPermissions();
  return false;
}

async function route() {
  timers.forEach(clearInterval);
  timers = [];
  renderNav();
  const hash = location.hash.slice(1) || "/ns/";
  if (!credentials() && !(await openWithoutCredentials())) {
    main.replaceChildren(loginPage());
    document.getElementById("cred-secret")?.focus();
    return;
  }
  const [, kind = "ns", rest = ""] = hash.match(/^\/([a-z]+)\/?(.*)$/) ?? [];
  const parts = parseId(rest);
  main.replaceChildren(h("p", { class: "note" }, "Loading…"));
  try {
    let view;
    switch (kind) {
      case "table": view = await tablePage(parts); break;
      case "query": view = await queryPage(parts); break;
      case "pca": view = await pcaPage(parts); break;
      case "status": view = await statusPage(); break;
      default: view = await namespacePage(parts);
    }
    if (location.hash.slice(1) === hash || (!location.hash && hash === "/ns/")) main.replaceChildren(view);
  } catch (e) {
    if (e instanceof ApiError && e.status === 401) {
      clearCredentials();
      main.replaceChildren(loginPage(), errorBox(e));
      renderNav();
      return;
    }
    main.replaceChildren(errorBox(e));
  }
}

window.addEventListener("hashchange", route);
route();
