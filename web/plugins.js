// plugins.js - the "Connect a plug-in" page (plugins.html): for every client in
// clients.json, the settings to enter (with this server's address) and a Test button
// that sends the client's own request to this server.
//
// clients.json is the one table of clients; `fanyi doctor --clients` reads the same
// file (compiled into the binary) and fills its templates by the same rules:
//   {base} this server's address, {host} the same without the scheme, {token} the API
//   token ('' without one), {key} the token or any text, {?token} "?token=…" when there
//   is a token, {token?} as a whole field value: the token, the field left out without
//   one; {text} the sample for the source language; {src:S}/{tgt:S} the direction's
//   languages written with code table S; {"$json": X} X as a JSON string.
// A check translates the first sample of its source language the server translates to
// something. It passes when the answer is a 200, the translation at its "answer" path is
// there and not empty, each "expect" path holds its value, and the translation is
// POST /translate's for the same text (with the "native" fields; false: not compared).
import { $, server, loadServer, token } from './common.js';
import { t, applyStrings, onLangChange, langName } from './i18n.js';
import { initMenu, onToken } from './menu.js';

const ui = {
  intro: $('plug-intro'), token: $('plug-token'), direction: $('plug-direction'), all: $('plug-all'),
  summary: $('plug-summary'), list: $('plug-list'), toc: $('plug-toc'), doctor: $('plug-doctor'),
  doctorCopy: $('plug-doctor-copy'),
};

const state = { table: null, pairs: [], results: new Map(), samples: new Map() };

// ---- templates ----------------------------------------------------------------------

function codeIn(table, scheme, lang) {
  const map = table.codes[scheme];
  if (!map) throw new Error(`clients.json: no code table "${scheme}"`);
  const v = map[lang] !== undefined ? map[lang] : map['*'];
  return v.replace('{code}', lang).replace('{CODE}', lang.toUpperCase());
}

// ctx: {base, token, text, src, tgt, table}
function fillString(s, ctx) {
  return s.replace(/\{(\?token|token\?|base|host|token|key|text|(?:src|tgt):\w+)\}/g, (m, k) => {
    if (k === 'base') return ctx.base;
    if (k === 'host') return ctx.base.replace(/^\w+:\/\//, '').replace(/\/.*$/, '');
    if (k === 'token' || k === 'token?') return ctx.token;
    if (k === 'key') return ctx.token || 'fanyi';
    if (k === '?token') return ctx.token ? `?token=${encodeURIComponent(ctx.token)}` : '';
    if (k === 'text') return ctx.text;
    const [side, scheme] = k.split(':');
    return codeIn(ctx.table, scheme, side === 'src' ? ctx.src : ctx.tgt);
  });
}

function fill(v, ctx) {
  if (typeof v === 'string') return fillString(v, ctx);
  if (Array.isArray(v)) return v.map((x) => fill(x, ctx));
  if (v && typeof v === 'object') {
    if ('$json' in v) return JSON.stringify(fill(v.$json, ctx));
    const out = {};
    for (const [k, x] of Object.entries(v)) {
      if (x === '{token?}' && !ctx.token) continue;
      out[k] = fill(x, ctx);
    }
    return out;
  }
  return v;
}

// ---- answers ------------------------------------------------------------------------

function at(value, path) {
  let v = value;
  for (const part of path.split('.')) {
    if (v === null || typeof v !== 'object') return undefined;
    v = Array.isArray(v) ? (/^\d+$/.test(part) ? v[Number(part)] : undefined) : v[part];
  }
  return v;
}

// The JSON inside a model's text answer (what Kiss Translator's parser reads).
function innerJson(s) {
  if (typeof s !== 'string') return undefined;
  const a = s.search(/[[{]/), b = Math.max(s.lastIndexOf('}'), s.lastIndexOf(']'));
  try { return a >= 0 && b > a ? JSON.parse(s.slice(a, b + 1)) : undefined; } catch { return undefined; }
}

// path "a.0.b|c.0": after each "|", the text found so far is parsed as JSON.
function answerAt(body, path) {
  let v = body;
  path.split('|').forEach((p, i) => { v = at(i ? innerJson(v) : v, p); });
  if (Array.isArray(v) && v.every((x) => typeof x === 'string')) return v.join('\n');
  return typeof v === 'string' ? v : undefined;
}

// A server-sent event stream's translation: the answer path of every data event, joined.
function streamAnswer(text, path) {
  let out = '', any = false;
  for (const line of text.split(/\r?\n/)) {
    if (!line.startsWith('data:')) continue;
    const data = line.slice(5).trim();
    if (data === '[DONE]') break;
    let ev;
    try { ev = JSON.parse(data); } catch { continue; }
    const piece = answerAt(ev, path);
    if (piece !== undefined) { out += piece; any = true; }
  }
  return any ? out : undefined;
}

// ---- running a check ----------------------------------------------------------------

function requestOf(check, ctx) {
  let url = fill(check.url, ctx);
  if (check.query) {
    const q = fill(check.query, ctx).map(([k, v]) => `${encodeURIComponent(k)}=${encodeURIComponent(v)}`).join('&');
    url += (url.includes('?') ? '&' : '?') + q;
  }
  const headers = fill(check.headers || {}, ctx);
  let body;
  if (check.json !== undefined) {
    body = JSON.stringify(fill(check.json, ctx));
    if (!Object.keys(headers).some((h) => h.toLowerCase() === 'content-type')) headers['Content-Type'] = 'application/json';
  } else if (check.form) {
    body = new URLSearchParams(fill(check.form, ctx)).toString();
    headers['Content-Type'] = 'application/x-www-form-urlencoded';
  } else if (check.multipart) {
    body = new FormData();
    for (const [k, v] of fill(check.multipart, ctx)) body.append(k, v);
  }
  return { method: check.method, url, headers, body };
}

async function nativeTranslation(check, ctx) {
  const h = { 'Content-Type': 'application/json' };
  if (ctx.token) h.Authorization = `Bearer ${ctx.token}`;
  const r = await fetch(`${ctx.base}/translate`, { method: 'POST', headers: h,
    body: JSON.stringify({ text: ctx.text, source: ctx.src, target: ctx.tgt, ...(check.native || {}) }) });
  const b = await r.json().catch(() => ({}));
  if (!r.ok) throw new Error(`POST /translate: ${r.status} ${(b.error && b.error.message) || ''}`);
  return b.translation;
}

function errorIn(body) {
  if (!body || typeof body !== 'object') return '';
  const e = body.error;
  return (typeof e === 'string' ? e : e && e.message) || body.message || '';
}

// {ok, answer, why, ms, request}: why is [key, vars] for the string table.
async function runCheck(check, ctx) {
  const req = requestOf(check, ctx);
  const started = performance.now();
  let status, text;
  try {
    const r = await fetch(req.url, { method: req.method, headers: req.headers, body: req.body });
    status = r.status;
    text = await r.text();
  } catch (e) {
    return { ok: false, why: ['plug.why.unreachable', { error: String(e.message || e) }], request: req };
  }
  const ms = Math.round(performance.now() - started);
  let body;
  try { body = JSON.parse(text); } catch { body = undefined; }
  if (status !== 200) return { ok: false, ms, why: ['plug.why.status', { status, message: errorIn(body) || text.slice(0, 200) }], request: req };
  const answer = check.stream ? streamAnswer(text, check.answer) : body === undefined ? undefined : answerAt(body, check.answer);
  if (!answer) return { ok: false, ms, why: ['plug.why.noAnswer', { path: check.answer }], request: req };
  for (const [path, want] of Object.entries(fill(check.expect || {}, ctx))) {
    const got = at(body, path);
    if (got !== want) return { ok: false, ms, answer, why: ['plug.why.expect', { path, got: JSON.stringify(got), want: JSON.stringify(want) }], request: req };
  }
  if (check.native !== false) {
    let want;
    try { want = await nativeTranslation(check, ctx); } catch (e) { return { ok: false, ms, answer, why: ['plug.why.native', { error: e.message }], request: req }; }
    if (want !== answer) return { ok: false, ms, answer, why: ['plug.why.differs', { got: answer, want }], request: req };
  }
  return { ok: true, ms, answer, request: req };
}

// ---- the page ---------------------------------------------------------------------

function context(forDisplay) {
  const [src, tgt] = (ui.direction.value || '').split('>');
  const tok = token() || (forDisplay && server.authRequired ? 'TOKEN' : '');
  return { base: location.origin, token: tok, text: state.samples.get(ui.direction.value) || '', src, tgt, table: state.table };
}

// The first sample of the direction's source that the server translates to something
// (a synthetic model makes nothing of some sentences), as `fanyi doctor` picks it.
async function pickSample() {
  const dir = ui.direction.value;
  if (state.samples.has(dir)) return;
  const ctx = context(false);
  for (const text of state.table.samples[ctx.src] || []) {
    let out = '';
    try { out = await nativeTranslation({}, { ...ctx, text }); } catch { /* the check will say why */ }
    if (out) { state.samples.set(dir, text); return; }
  }
  state.samples.set(dir, (state.table.samples[ctx.src] || [''])[0]);
}

// The directions the server has and the table has a sample for; the preferred ones first.
function pairsOf(table) {
  const all = server.langs.flatMap((l) => l.targets.map((x) => [l.code, x])).filter(([s]) => table.samples[s]);
  const key = ([s, x]) => `${s}>${x}`;
  const prefer = table.prefer.map(key);
  return all.sort((a, b) => {
    const ia = prefer.indexOf(key(a)), ib = prefer.indexOf(key(b));
    return (ia < 0 ? 99 : ia) - (ib < 0 ? 99 : ib);
  });
}

function copyButton(value, label) {
  const b = document.createElement('button');
  b.type = 'button';
  b.textContent = t('plug.copy');
  b.setAttribute('aria-label', t('plug.copyLabel', { what: label }));
  b.addEventListener('click', async () => {
    try { await navigator.clipboard.writeText(value); } catch { /* shown anyway: the value is on the page */ }
    b.textContent = t('plug.copied');
    setTimeout(() => { b.textContent = t('plug.copy'); }, 1500);
  });
  return b;
}

function fieldRow(name, value) {
  const row = document.createElement('div');
  row.className = 'field';
  const dt = document.createElement('dt');
  dt.textContent = t(`plug.field.${name}`);
  const dd = document.createElement('dd');
  const code = document.createElement('code');
  code.textContent = value || '—';
  dd.append(code);
  if (value) dd.append(copyButton(value, dt.textContent));
  if (name === 'key') {
    const note = document.createElement('span');
    note.className = 'hint';
    note.textContent = t(server.authRequired || token() ? 'plug.key.token' : 'plug.key.any');
    dd.append(note);
  }
  row.append(dt, dd);
  return row;
}

function showResult(out, res) {
  out.hidden = false;
  out.classList.toggle('pass', res.ok);
  out.classList.toggle('fail', !res.ok);
  const head = document.createElement('strong');
  head.textContent = res.ok ? t('plug.pass', { ms: res.ms }) : t('plug.fail');
  const what = document.createElement('span');
  what.className = 'answer';
  if (res.ok) { what.textContent = res.answer; what.lang = context(false).tgt; } else what.textContent = t(res.why[0], res.why[1]);
  const sent = document.createElement('details');
  const sum = document.createElement('summary');
  sum.textContent = t('plug.request');
  const pre = document.createElement('pre');
  const body = res.request.body instanceof FormData ? [...res.request.body].map(([k, v]) => `${k}=${v}`).join('\n') : res.request.body || '';
  pre.textContent = `${res.request.method} ${res.request.url}\n${Object.entries(res.request.headers).map(([k, v]) => `${k}: ${v}`).join('\n')}\n\n${body}`;
  sent.append(sum, pre);
  out.replaceChildren(head, ' ', what, sent);
}

async function test(id, check, out, button) {
  button.disabled = true;
  out.hidden = false;
  out.className = 'result';
  out.textContent = t('plug.running');
  await pickSample();
  const res = await runCheck(check, context(false));
  state.results.set(id, res.ok);
  showResult(out, res);
  button.disabled = false;
  summarize();
  return res.ok;
}

function summarize() {
  const total = state.table ? state.table.clients.reduce((n, c) => n + c.setups.length, 0) : 0;
  const done = state.results.size, passed = [...state.results.values()].filter(Boolean).length;
  ui.summary.textContent = done ? t('plug.summary', { passed, done, total }) : '';
  ui.summary.classList.toggle('error', done > 0 && passed < done);
}

function setupCard(client, setup) {
  const id = `${client.id}/${setup.id}`;
  const card = document.createElement('section');
  card.className = 'setup';
  card.dataset.check = id;
  const head = document.createElement('div');
  head.className = 'setup-head';
  const h = document.createElement('h4');
  h.textContent = t(`setup.${client.id}.${setup.id}`);
  const button = document.createElement('button');
  button.type = 'button';
  button.className = 'test';
  button.textContent = t('plug.test');
  button.setAttribute('aria-label', t('plug.testLabel', { what: `${t(`client.${client.id}`)}: ${h.textContent}` }));
  head.append(h, button);
  const dl = document.createElement('dl');
  const ctx = context(true);
  for (const [name, value] of setup.fields) dl.append(fieldRow(name, fill(value, ctx)));
  const out = document.createElement('div');
  out.className = 'result';
  out.setAttribute('role', 'status');
  out.hidden = true;
  button.addEventListener('click', () => test(id, setup.check, out, button));
  card.append(head, dl, out);
  card.run = () => test(id, setup.check, out, button);
  return card;
}

function render() {
  applyStrings();
  const base = location.origin;
  ui.intro.textContent = t('plug.intro', { base });
  const command = `fanyi doctor --clients ${base}`;
  ui.doctor.textContent = command;
  ui.doctorCopy.replaceChildren(copyButton(command, t('plug.doctor.what')));
  ui.token.hidden = !(server.authRequired || token());
  ui.token.textContent = t(token() ? 'plug.token.saved' : 'plug.token.needed');
  if (!state.table) return;
  const keep = ui.direction.value;
  ui.direction.replaceChildren(...state.pairs.map(([s, x]) => {
    const o = document.createElement('option');
    o.value = `${s}>${x}`;
    o.textContent = t('history.direction', { from: langName(s), to: langName(x) });
    return o;
  }));
  if (keep) ui.direction.value = keep;
  ui.all.disabled = !state.pairs.length;
  if (!state.pairs.length) ui.summary.textContent = t('plug.noDirection');
  state.results.clear();
  summarize();
  ui.toc.replaceChildren(...state.table.clients.map((c) => {
    const li = document.createElement('li');
    const a = document.createElement('a');
    a.href = `#client-${c.id}`;
    a.textContent = t(`client.${c.id}`);
    li.append(a);
    return li;
  }));
  ui.list.replaceChildren(...state.table.clients.map((c) => {
    const sec = document.createElement('section');
    sec.className = 'client panel';
    sec.id = `client-${c.id}`;
    const h = document.createElement('h3');
    h.textContent = t(`client.${c.id}`);
    sec.append(h, ...c.setups.map((s) => setupCard(c, s)));
    return sec;
  }));
}

async function testAll() {
  ui.all.disabled = true;
  for (const card of ui.list.querySelectorAll('.setup')) await card.run();
  ui.all.disabled = false;
}

async function init() {
  applyStrings();
  initMenu();
  const [, table] = await Promise.all([loadServer(), fetch('/clients.json').then((r) => r.json())]);
  state.table = table;
  state.pairs = pairsOf(table);
  render();
  ui.all.addEventListener('click', testAll);
  ui.direction.addEventListener('change', () => { state.results.clear(); render(); });
  onLangChange(render);
  onToken(() => { state.samples.clear(); render(); });
}

init();
