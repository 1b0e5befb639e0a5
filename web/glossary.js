// glossary.js - the Glossary panel: the server's stored glossaries (/glossaries), one
// picked per direction (the pick kept in this browser), its terms edited in place:
// add, remove, import a TSV file (merged), export. Everything is stored by the server,
// so the page, the API (glossary_id) and the plug-ins see the same glossaries; the
// translator sends the picked one's id with each request (glossaryFor).
import { $, KEYS, storageJson, storageSet, headers, errorText, ServerError, dirOf } from './common.js';
import { t, langName, onLangChange } from './i18n.js';
import { askToken } from './menu.js';
import { translate } from './translator.js';

const ui = {
  panel: $('gl-panel'), dir: $('gl-dir'), pick: $('gl-pick'), editor: $('gl-editor'), name: $('gl-name'),
  create: $('gl-create'), del: $('gl-delete'), table: $('gl-table'), terms: $('gl-terms'), srcHead: $('gl-src-head'),
  tgtHead: $('gl-tgt-head'), add: $('gl-add'), addSrc: $('gl-add-src'), addTgt: $('gl-add-tgt'),
  importFile: $('gl-import'), exportBtn: $('gl-export'), status: $('gl-status'), count: $('gl-count'),
};

const state = {
  from: '', to: '',   // the translator's direction ('' while the source is not known)
  list: [],           // the glossaries with a dictionary for the direction: [{id, name, dictionaries}]
  entries: {},        // the picked glossary's terms for the direction: {source term: target term}
  seq: 0,             // id of the newest load; older answers are ignored
  status: null,       // {key, vars, error}: re-rendered when the interface language changes
};

// ---- the picks -----------------------------------------------------------------------

function picks() {
  const p = storageJson(KEYS.glossaries, {});
  return p && typeof p === 'object' && !Array.isArray(p) ? p : {};
}

// The glossary picked for from → to, or ''.
export function glossaryFor(from, to) {
  return from && to ? picks()[`${from}-${to}`] || '' : '';
}

// The glossary for a document into target, whose language the server detects: the one
// picked for the direction shown when it goes into target, else one picked into target
// from another language (with the source detected, a glossary's every dictionary into
// the target applies), or ''.
export function glossaryInto(target, from) {
  const own = glossaryFor(from || state.from, target);
  if (own) return own;
  const any = Object.entries(picks()).find(([dir]) => dir.endsWith(`-${target}`));
  return any ? any[1] : '';
}

function setPick(id) {
  const p = picks();
  const key = `${state.from}-${state.to}`;
  if (id) p[key] = id; else delete p[key];
  storageSet(KEYS.glossaries, JSON.stringify(p));
}

function picked() { return state.list.find((g) => g.id === glossaryFor(state.from, state.to)) || null; }

// ---- requests ------------------------------------------------------------------------

// One call of the glossary API: the answer's JSON (or text with asText), or a ServerError.
// A write refused for its token opens the token dialog (a read says so in the panel only:
// the translation's own request asks already).
async function call(method, path, body, asText) {
  const init = { method, headers: headers('application/json', asText ? 'text/tab-separated-values' : 'application/json') };
  if (body !== undefined) init.body = JSON.stringify(body);
  let resp;
  try { resp = await fetch(path, init); } catch { throw new ServerError(t('gl.offline')); }
  if (!resp.ok) {
    const why = await errorText(resp);
    if ((resp.status === 401 || resp.status === 403) && method !== 'GET') askToken(resp.status === 401 ? 'needed' : 'rejected');
    throw new ServerError(why || `HTTP ${resp.status}`, resp.status);
  }
  if (resp.status === 204) return null;
  return asText ? resp.text() : resp.json();
}

const dirQuery = () => new URLSearchParams({ source: state.from, target: state.to }).toString();

function say(key, vars, error) {
  state.status = key ? { key, vars, error: Boolean(error) } : null;
  ui.status.textContent = key ? t(key, vars) : '';
  ui.status.classList.toggle('error', Boolean(error));
}

// A failed call: said in the panel, nothing changed.
function failed(e) {
  say('gl.failed', { why: e instanceof ServerError ? e.message : String(e) }, true);
}

// ---- rendering -------------------------------------------------------------------------

function option(value, label) {
  const o = document.createElement('option');
  o.value = value;
  o.textContent = label;
  return o;
}

function renderPick() {
  const p = picked();
  ui.pick.textContent = '';
  ui.pick.append(option('', t('gl.none')));
  for (const g of state.list) ui.pick.append(option(g.id, g.name));
  ui.pick.value = p ? p.id : '';
}

function termRow(src, tgt) {
  const tr = document.createElement('tr');
  const a = document.createElement('td'), b = document.createElement('td'), c = document.createElement('td');
  a.textContent = src;
  a.lang = state.from;
  a.dir = dirOf(state.from);
  if (tgt === '' || tgt === src) { b.textContent = t('gl.kept'); b.className = 'kept'; } else {
    b.textContent = tgt;
    b.lang = state.to;
    b.dir = dirOf(state.to);
  }
  const del = document.createElement('button');
  del.type = 'button';
  del.textContent = t('gl.remove');
  del.setAttribute('aria-label', t('gl.removeLabel', { term: src }));
  del.addEventListener('click', () => removeTerm(src));
  c.append(del);
  tr.append(a, b, c);
  return tr;
}

function renderDirection() {
  const known = Boolean(state.from && state.to);
  ui.dir.textContent = known ? t('gl.for', { from: langName(state.from), to: langName(state.to) }) : t('gl.noDirection');
  return known;
}

function render() {
  const known = renderDirection();
  ui.pick.disabled = !known;
  ui.create.disabled = !known;
  ui.importFile.disabled = !known;
  renderPick();
  const p = picked();
  ui.editor.hidden = !known;
  ui.del.hidden = ui.exportBtn.hidden = ui.table.hidden = !p;
  ui.srcHead.textContent = langName(state.from);
  ui.tgtHead.textContent = langName(state.to);
  ui.addSrc.lang = state.from;
  ui.addTgt.lang = state.to;
  const terms = Object.entries(p ? state.entries : {});
  ui.count.textContent = p ? t('gl.count', { n: terms.length }) : '';
  const f = document.createDocumentFragment();
  for (const [src, tgt] of terms) f.append(termRow(src, tgt));
  ui.terms.replaceChildren(f);
}

// ---- loading ---------------------------------------------------------------------------

// The direction's glossaries and the pick's terms, from the server.
async function reload() {
  const seq = ++state.seq;
  if (!state.from || !state.to) { state.list = []; state.entries = {}; render(); return; }
  let step = 'list';
  try {
    const answer = await call('GET', `/glossaries?${dirQuery()}`);
    if (seq !== state.seq) return;
    state.list = Array.isArray(answer && answer.glossaries) ? answer.glossaries : [];
    if (glossaryFor(state.from, state.to) && !picked()) setPick('');  // deleted elsewhere
    const p = picked();
    step = 'entries';
    state.entries = p ? ((await call('GET', `/glossaries/${p.id}/entries?${dirQuery()}&format=json`)) || {}).entries || {} : {};
    if (seq !== state.seq) return;
  } catch (e) {
    if (seq !== state.seq) return;
    state.list = [];
    state.entries = {};
    // A server that keeps no glossaries (no --data-dir to write to, or an older one): no panel.
    if (step === 'list' && [404, 405, 503].includes(e.status)) { ui.panel.hidden = true; return; }
    failed(e);
  }
  ui.panel.hidden = false;
  render();
}

// The glossary changed: the panel shows it, the text is translated with it.
async function changed(key, vars) {
  await reload();
  if (key) say(key, vars);
  translate(true);
}

// ---- editing ---------------------------------------------------------------------------

async function create(name, entries) {
  const g = await call('POST', '/glossaries', { name, source: state.from, target: state.to, entries });
  setPick(g.id);
  return g;
}

async function createNamed() {
  const name = ui.name.value.trim() || t('gl.defaultName', { from: langName(state.from), to: langName(state.to) });
  try {
    await create(name, {});
    ui.name.value = '';
    await changed('gl.created', { name });
  } catch (e) { failed(e); }
}

async function addTerm(src, tgt) {
  if (!src) { say('gl.needTerm', null, true); ui.addSrc.focus(); return; }
  try {
    const p = picked();
    if (p) await call('PATCH', `/glossaries/${p.id}`, { source: state.from, target: state.to, entries: { [src]: tgt } });
    else await create(t('gl.defaultName', { from: langName(state.from), to: langName(state.to) }), { [src]: tgt });
    ui.addSrc.value = ui.addTgt.value = '';
    ui.addSrc.focus();
    await changed('gl.added', { term: src });
  } catch (e) { failed(e); }
}

// The direction's entries without the term, put back whole (PUT replaces them).
async function removeTerm(src) {
  const p = picked();
  if (!p) return;
  const rest = { ...state.entries };
  delete rest[src];
  try {
    await call('PUT', `/glossaries/${p.id}/entries?${dirQuery()}`, { entries: rest });
    await changed('gl.removed', { term: src });
    ui.addSrc.focus();
  } catch (e) { failed(e); }
}

// A TSV file's terms are merged into the picked glossary (a new one, named after the
// file, when none is picked); the server checks every line and names a bad one.
async function importTsv(file) {
  if (!file) return;
  try {
    const text = await file.text();
    const p = picked();
    const before = p ? Object.keys(state.entries).length : 0;
    const g = p ? await call('PATCH', `/glossaries/${p.id}`, { source: state.from, target: state.to, entries: text })
      : await create(file.name.replace(/\.[^.]*$/, '') || file.name, text);
    const d = (g.dictionaries || []).find((x) => x.source === state.from && x.target === state.to);
    await changed('gl.imported', { name: file.name, n: d ? d.entries - before : 0 });
  } catch (e) { failed(e); }
}

async function exportTsv() {
  const p = picked();
  if (!p) return;
  try {
    const text = await call('GET', `/glossaries/${p.id}/entries?${dirQuery()}&format=tsv`, undefined, true);
    const url = URL.createObjectURL(new Blob([text], { type: 'text/tab-separated-values' }));
    const a = document.createElement('a');
    a.href = url;
    a.download = `${p.name}.${state.from}-${state.to}.tsv`.replace(/[\\/:*?"<>|]/g, '_');
    document.body.append(a);
    a.click();
    a.remove();
    setTimeout(() => URL.revokeObjectURL(url), 1000);
  } catch (e) { failed(e); }
}

async function deleteGlossary() {
  const p = picked();
  if (!p || !window.confirm(t('gl.confirmDelete', { name: p.name }))) return;
  try {
    await call('DELETE', `/glossaries/${p.id}`);
    setPick('');
    await changed('gl.deleted', { name: p.name });
  } catch (e) { failed(e); }
}

// ---- wiring ----------------------------------------------------------------------------

// The translator's direction changed (from: the source chosen or detected, '' if not known).
export function glossaryDirection(from, to) {
  if (from === state.from && to === state.to) return;
  state.from = from || '';
  state.to = to || '';
  say(null);
  renderDirection();
  reload();
}

export function initGlossary() {
  ui.pick.addEventListener('change', () => {
    setPick(ui.pick.value);
    const p = picked();
    changed(p ? 'gl.picked' : 'gl.unpicked', p ? { name: p.name } : null);
  });
  ui.create.addEventListener('click', createNamed);
  ui.name.addEventListener('keydown', (e) => { if (e.key === 'Enter') { e.preventDefault(); createNamed(); } });
  ui.add.addEventListener('submit', (e) => { e.preventDefault(); addTerm(ui.addSrc.value.trim(), ui.addTgt.value.trim()); });
  ui.importFile.addEventListener('change', () => { importTsv(ui.importFile.files[0]); ui.importFile.value = ''; });
  ui.exportBtn.addEventListener('click', exportTsv);
  ui.del.addEventListener('click', deleteGlossary);
  onLangChange(() => {
    render();
    const s = state.status;
    if (s) say(s.key, s.vars, s.error);
  });
  render();
}
