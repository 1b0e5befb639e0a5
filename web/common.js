// common.js - what every page module shares: storage, the API token, requests and
// their errors, stream readers, the server's limits and languages, text direction.
// No DOM work here beyond $(): panels own their elements.

export const $ = (id) => document.getElementById(id);

export const KEYS = {
  token: 'fanyi.token', history: 'fanyi.history', draft: 'fanyi.draft',
  targets: 'fanyi.targets', uiLang: 'fanyi.ui-lang', glossaries: 'fanyi.glossaries',
  client: 'fanyi.client', docJob: 'fanyi.document',
};

export function storageGet(key, fallback) {
  try { const v = localStorage.getItem(key); return v === null ? fallback : v; } catch { return fallback; }
}
export function storageSet(key, value) {
  try { if (value === null) localStorage.removeItem(key); else localStorage.setItem(key, value); } catch { /* private mode */ }
}
export function storageJson(key, fallback) {
  try { const v = JSON.parse(storageGet(key, 'null')); return v === null ? fallback : v; } catch { return fallback; }
}

// Code points, counted without building an array (a 100k-character paste is counted per keystroke).
export function countChars(text) {
  let n = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c < 0xd800 || c > 0xdbff) n++;
  }
  return n;
}

// Touch screens have no Ctrl+Enter and no hover.
export const coarse = typeof matchMedia === 'function' && matchMedia('(pointer: coarse)').matches;

// ---- requests -------------------------------------------------------------------

export class ServerError extends Error {
  constructor(message, status) { super(message); this.status = status || 0; }
}

export function token() { return storageGet(KEYS.token, ''); }

export function headers(type, accept) {
  const h = { 'Content-Type': type || 'application/json', 'Accept': accept || 'text/event-stream' };
  const t = token();
  if (t) h.Authorization = `Bearer ${t}`;
  return h;
}

export function errorOf(body) {
  if (!body) return '';
  if (typeof body.error === 'string') return body.error;
  return (body.error && (body.error.message || '')) || body.message || '';
}

export async function errorText(resp) {
  try { return errorOf(await resp.json()); } catch { return ''; }  // not JSON
}

// Parses a text/event-stream body, calling onEvent(name, jsonData) per event. The
// buffer is scanned from an offset, not sliced per event: a chunk holding hundreds
// of events costs its length once.
export async function readEvents(resp, onEvent) {
  const reader = resp.body.getReader();
  const decoder = new TextDecoder();
  let buf = '';
  for (;;) {
    const { value, done } = await reader.read();
    if (done) break;
    buf += decoder.decode(value, { stream: true });
    if (buf.includes('\r')) buf = buf.replace(/\r\n?/g, '\n');
    let at = 0, cut;
    while ((cut = buf.indexOf('\n\n', at)) >= 0) {
      let name = 'message', data = null;
      for (const line of buf.slice(at, cut).split('\n')) {
        if (line.startsWith('event:')) name = line.slice(6).trim();
        else if (line.startsWith('data:')) data = (data === null ? '' : `${data}\n`) + line.slice(5).replace(/^ /, '');
      }
      at = cut + 2;
      if (data !== null) onEvent(name, JSON.parse(data));
    }
    buf = buf.slice(at);
  }
}

// ---- the server ---------------------------------------------------------------

// /version: limits and whether a token is needed; /languages: [{code, name, targets, dir?}]
// in Fanyi's codes (LibreTranslate's zh-Hans is zh here).
export const server = { maxChars: 0, authRequired: false, version: '', langs: [] };

export async function loadServer() {
  const get = async (path) => { try { return await (await fetch(path, { cache: 'no-store' })).json(); } catch { return null; } };
  const [info, list] = await Promise.all([get('/version'), get('/languages')]);
  if (info) {
    if (Number.isInteger(info.max_chars) && info.max_chars > 0) server.maxChars = info.max_chars;
    server.authRequired = Boolean(info.auth_required);
    server.version = info.version || '';
  }
  const own = (c) => (c === 'zh-Hans' ? 'zh' : c);
  if (Array.isArray(list)) {
    server.langs = list.filter((l) => l && l.code && Array.isArray(l.targets) && l.targets.length)
      .map((l) => ({ ...l, code: own(l.code), targets: l.targets.map(own) }));
  }
  return server;
}

// The targets a source offers ("auto": every target).
export function targetsOf(source) {
  if (source === 'auto') return [...new Set(server.langs.flatMap((l) => l.targets))].sort();
  const l = server.langs.find((x) => x.code === source);
  return l ? l.targets : [];
}

// Right-to-left scripts. /languages may say (a "dir" per language); until it does,
// these tags (and their regional forms) are the right-to-left languages the
// Firefox catalogue has or may have.
const RTL = new Set(['ar', 'arc', 'ckb', 'dv', 'fa', 'he', 'iw', 'ks', 'ku-Arab', 'pa-Arab', 'ps', 'sd', 'syr', 'ug', 'ur', 'yi']);

export function dirOf(code) {
  if (!code) return 'auto';
  const l = server.langs.find((x) => x.code === code);
  if (l && (l.dir === 'rtl' || l.dir === 'ltr')) return l.dir;
  const parts = code.split('-');
  return RTL.has(code) || RTL.has(parts[0]) || RTL.has(`${parts[0]}-${parts[1]}`) ? 'rtl' : 'ltr';
}
