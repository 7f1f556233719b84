// The console's side of the REST API: credentials kept in sessionStorage,
// one call function that turns every non-2xx answer into an ApiError with
// the Lance error code, identifiers in URL form, and the curl command
// equivalent to a call.

import { readArrowStream } from "./arrow.js";

const storageKey = "lancens.console.credentials";
export const arrowStream = "application/vnd.apache.arrow.stream";

// ApiError is a failed API call: the HTTP status, the Lance error code
// (null when the answer was not an ErrorResponse) and its message.
export class ApiError extends Error {
  constructor(status, code, message) {
    super(message);
    this.status = status;
    this.code = code;
  }
}

// credentials returns { kind: "key" | "bearer", secret } or null.
export function credentials() {
  const raw = sessionStorage.getItem(storageKey);
  return raw ? JSON.parse(raw) : null;
}

export function setCredentials(kind, secret) {
  sessionStorage.setItem(storageKey, JSON.stringify({ kind, secret }));
}

export function clearCredentials() {
  sessionStorage.removeItem(storageKey);
}

function authHeaders() {
  const c = credentials();
  if (!c || !c.secret) return {};
  return c.kind === "bearer" ? { Authorization: `Bearer ${c.secret}` } : { "x-api-key": c.secret };
}

// idPath is an identifier (array of names) as one URL path segment: the
// names joined by "$", the root namespace as "$".
export function idPath(parts) {
  return encodeURIComponent(parts.length ? parts.join("$") : "$");
}

// call sends one API request and resolves to { status, headers, body }:
// body is the parsed JSON, the decoded Arrow stream ({ fields, rows }) when
// accept is arrowStream, the text for text answers, or null when empty. A
// non-2xx answer rejects with an ApiError.
export async function call(path, { method = "POST", body, accept = "application/json" } = {}) {
  const headers = { Accept: accept, ...authHeaders() };
  if (body !== undefined) headers["Content-Type"] = "application/json";
  const res = await fetch(path, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
  const type = res.headers.get("Content-Type") ?? "";
  if (!res.ok) {
    let code = null;
    let message = `${res.status} ${res.statusText}`;
    if (type.includes("json")) {
      const e = await res.json().catch(() => null);
      if (e && typeof e.code === "number") code = e.code;
      if (e && e.error) message = e.error;
    }
    throw new ApiError(res.status, code, message);
  }
  let out = null;
  if (type.includes("arrow")) out = readArrowStream(await res.arrayBuffer());
  else if (type.includes("json")) out = await res.json();
  else out = await res.text();
  return { status: res.status, headers: res.headers, body: out };
}

// curl returns the shell command that makes the same call; the secret is
// left out, read from $LANCENS_KEY instead.
export function curl(path, { method = "POST", body, accept } = {}) {
  const url = new URL(path, location.origin).href;
  const parts = ["curl", "-sS", "-X", method, quote(url)];
  const c = credentials();
  if (c && c.secret) {
    parts.push("-H", c.kind === "bearer" ? `"Authorization: Bearer $LANCENS_KEY"` : `"x-api-key: $LANCENS_KEY"`);
  }
  if (accept) parts.push("-H", quote(`Accept: ${accept}`));
  if (body !== undefined) parts.push("-H", quote("Content-Type: application/json"), "-d", quote(JSON.stringify(body)));
  if (accept === arrowStream) parts.push("-o", "result.arrows");
  return parts.join(" ");
}

function quote(s) {
  return `'${s.replaceAll("'", `'\\''`)}'`;
}

// Pages of listings: list (namespaces or tables) in namespace parts.
export async function listPage(kind, parts, pageToken, limit) {
  const q = new URLSearchParams({ limit: String(limit) });
  if (pageToken) q.set("page_token", pageToken);
  const route = kind === "tables" ? "table/list" : "list";
  const { body } = await call(`/v1/namespace/${idPath(parts)}/${route}?${q}`, { method: "GET" });
  return { items: body[kind === "tables" ? "tables" : "namespaces"] ?? [], next: body.page_token || null };
}

// principal resolves to what GET /auth/principal says of the credentials
// in use: { principal, role, scoped, scopes, credentials_required }. It is
// read once per sign-in (forgetPermissions drops it).
let principalCache = null;
export function principal() {
  principalCache ??= call("/auth/principal", { method: "GET" }).then((r) => r.body);
  principalCache.catch(() => { principalCache = null; });
  return principalCache;
}

// covers reports whether namespace parts lies inside one of the
// principal's scopes (everything does for an unscoped principal).
function covers(p, parts) {
  if (!p.scoped) return true;
  return p.scopes.some((s) => {
    const scope = s.split("$");
    return scope.length <= parts.length && scope.every((name, i) => parts[i] === name);
  });
}

// canWrite reports whether the principal may change things in namespace
// parts (tables, indexes, child namespaces below the top level): a write
// or admin role with the namespace in scope. Nothing is sent to find out
// but the one principal call.
export async function canWrite(parts) {
  try {
    const p = await principal();
    return (p.role === "write" || p.role === "admin") && covers(p, parts);
  } catch {
    return false;
  }
}

// canCreateNamespaceIn reports whether the principal may create a child of
// namespace parts: as canWrite, and a top-level namespace needs admin.
export async function canCreateNamespaceIn(parts) {
  if (!(await canWrite(parts))) return false;
  return parts.length > 0 || (await principal()).role === "admin";
}

export function forgetPermissions() {
  principalCache = null;
}
