// documents.js - the Documents panel: a file (PDF too) becomes a job of the server's
// (POST /documents, with the glossary picked for its direction), followed by its progress
// and time left (GET /documents/ID), which Cancel stops (DELETE) and whose result is
// offered for download. The job's id is kept in this browser, so a reload, or a page
// opened again, finds the job where it is.
//
// A document's language is detected by the server (never the text pane's source: after
// a swap that would push a Chinese file through the en→zh model). When it is already
// the target language, the file is sent again for the other language (otherTarget,
// as the text pane switches); when nothing in it needed translating, the panel says
// so and offers no renamed copy of the file.
import { $, KEYS, ServerError, headers, errorText, storageGet, storageSet, storageJson, targetsOf } from './common.js';
import { t, onLangChange } from './i18n.js';
import { askToken } from './menu.js';
import { otherTarget } from './translator.js';
import { glossaryInto } from './glossary.js';

const ui = {
  drop: $('doc-drop'), file: $('doc-file'), progress: $('doc-progress'), status: $('doc-status'),
  download: $('doc-download'), bar: $('doc-bar'), cancel: $('doc-cancel'), target: $('target-lang'),
  bilingual: $('doc-bilingual'),
};

const POLL_MS = 700;          // how often a running job is asked how far it is
const FIRST_POLL_MS = 150;    // a short document is often done by then

const state = {
  job: null,        // the job followed: the server's last answer about it
  seq: 0,           // id of the newest document; older answers are ignored
  timer: 0,
  url: '',          // object URL of the downloaded result
  status: null,     // {key, vars, error}: re-rendered when the interface language changes
  download: null,   // the result's file name
};

function say(key, vars, error) {
  state.status = { key, vars, error: Boolean(error) };
  ui.bar.hidden = false;
  ui.status.textContent = t(key, vars);
  ui.status.classList.toggle('error', Boolean(error));
}

// This browser's tag for its jobs (GET /documents?client=TAG lists them).
function clientTag() {
  let tag = storageGet(KEYS.client, '');
  if (!/^web-[0-9a-f]{16}$/.test(tag)) {
    const b = crypto.getRandomValues(new Uint8Array(8));
    tag = `web-${[...b].map((x) => x.toString(16).padStart(2, '0')).join('')}`;
    storageSet(KEYS.client, tag);
  }
  return tag;
}

// ---- the job API ------------------------------------------------------------------------

async function jobCall(method, path, body, name) {
  const init = { method, headers: headers(body ? body.type || 'application/octet-stream' : 'application/json', 'application/json') };
  if (body) init.body = body;
  const resp = await fetch(path, init);
  if (!resp.ok) {
    const why = await errorText(resp);
    if (resp.status === 401 || resp.status === 403) askToken(resp.status === 401 ? 'needed' : 'rejected');
    throw new ServerError(t('doc.refused', { name, status: resp.status, why }), resp.status);
  }
  return resp.json();
}

// The job for file into target (the Glossary panel's pick for it goes along).
function submit(file, target, bilingual, from) {
  const q = new URLSearchParams({ filename: file.name, source: 'auto', client: clientTag() });
  if (target) q.set('target', target);
  if (bilingual) q.set('bilingual', 'true');
  const glossary = target ? glossaryInto(target, from) : '';
  if (glossary) q.set('glossary_id', glossary);
  return jobCall('POST', `/documents?${q}`, file, file.name);
}

// Dropped, cancelled or forgotten: the server may delete it (an answer is not awaited).
function discard(id) {
  fetch(`/documents/${id}`, { method: 'DELETE', headers: headers('application/json', 'application/json') }).catch(() => {});
}

// Why a job has nothing to translate; null when it has.
function nothingToDo(job) {
  if (job.progress && job.progress.total > 0) return null;
  if (job.source && job.source === job.target) return ['doc.already', { lang: job.source }];
  return ['doc.noText'];
}

function remember(job) { storageSet(KEYS.docJob, job ? JSON.stringify({ id: job.id }) : null); }

// ---- showing a job ----------------------------------------------------------------------

function clearResult() {
  if (state.url) URL.revokeObjectURL(state.url);
  state.url = '';
  state.download = null;
  ui.download.hidden = true;
}

function showProgress(job) {
  const p = job.progress || {};
  ui.progress.hidden = false;
  ui.progress.value = p.percent || 0;
  ui.cancel.hidden = false;
  if (job.state === 'queued') { say('doc.queued', { name: job.filename }); return; }
  say('doc.progress', {
    name: job.filename, percent: p.percent || 0, done: p.done || 0, total: p.total || 0,
    pages: p.pages || 0, pagesDone: p.pages_done || 0, left: job.seconds_remaining,
  });
}

// The finished job's file, fetched with the token, offered under the job's name.
async function offerResult(job, seq) {
  const resp = await fetch(`/documents/${job.id}/result`, { headers: headers('application/json', '*/*') });
  if (!resp.ok) throw new ServerError(t('doc.failed', { name: job.filename, why: await errorText(resp) || `HTTP ${resp.status}` }));
  const blob = await resp.blob();
  if (seq !== state.seq) return;
  clearResult();
  state.url = URL.createObjectURL(blob);
  state.download = job.name;
  ui.download.href = state.url;
  ui.download.download = job.name;
  ui.download.textContent = t('doc.download', { name: job.name });
  ui.download.hidden = false;
  ui.progress.value = 100;
  say(job.bilingual ? 'doc.doneBilingual' : 'doc.done', { name: job.filename, from: job.source, to: job.target });
}

function finished(job, key, vars, error) {
  ui.cancel.hidden = true;
  ui.progress.hidden = true;
  say(key, vars, error);
  if (job) remember(null);
}

// Asks the server about the job until it is over.
async function follow(seq) {
  clearTimeout(state.timer);
  const id = state.job.id;
  let job;
  try {
    job = await jobCall('GET', `/documents/${id}`, null, state.job.filename);
  } catch (e) {
    if (seq !== state.seq) return;
    if (e.status === 404) {
      // Gone (expired, or deleted elsewhere): a job found again after a reload is forgotten quietly.
      if (state.job.filename) finished(state.job, 'doc.expired', { name: state.job.filename }); else remember(null);
      state.job = null;
      return;
    }
    say(e instanceof ServerError ? 'doc.error' : 'doc.reconnecting', { name: state.job.filename || t('doc.unnamed'), message: e.message }, true);
    state.timer = setTimeout(() => follow(seq), POLL_MS * 4);
    return;
  }
  if (seq !== state.seq) return;
  state.job = job;
  if (job.state === 'queued' || job.state === 'translating') {
    showProgress(job);
    state.timer = setTimeout(() => follow(seq), POLL_MS);
  } else if (job.state === 'done') {
    ui.cancel.hidden = true;
    try { await offerResult(job, seq); } catch (e) { if (seq === state.seq) finished(job, 'doc.error', { message: e.message }, true); }
  } else if (job.state === 'canceled') {
    finished(job, 'doc.canceled', { name: job.filename });
  } else {
    finished(job, 'doc.failed', { name: job.filename, why: (job.error && job.error.message) || 'translation failed' }, true);
  }
}

// ---- a new document ------------------------------------------------------------------------

function isPdf(file) { return /\.pdf$/i.test(file.name) || file.type === 'application/pdf'; }

// Submits the file; when the server finds it already in the target language, once more
// into the other one. The job to follow, or null (said why).
async function start(file, seq) {
  let target = ui.target.value;
  const bilingual = ui.bilingual.checked && isPdf(file);
  let job = await submit(file, target, bilingual);
  let skip = nothingToDo(job);
  if (skip && job.source && job.source === target) {
    const other = otherTarget(job.source);
    if (other && targetsOf(job.source).includes(other)) {
      discard(job.id);
      if (seq !== state.seq) return null;
      target = other;
      say('doc.switching', { name: file.name, from: job.source, to: other });
      job = await submit(file, other, bilingual, job.source);
      skip = nothingToDo(job);
    }
  }
  if (skip) {
    discard(job.id);
    if (seq === state.seq) finished(null, skip[0], { name: file.name, ...(skip[1] || {}) });
    return null;
  }
  return job;
}

async function translateDocument(file) {
  if (!file) return;
  const seq = ++state.seq;
  clearTimeout(state.timer);
  if (state.job && (state.job.state === 'queued' || state.job.state === 'translating')) discard(state.job.id);
  state.job = null;
  clearResult();
  ui.cancel.hidden = true;
  ui.progress.hidden = false;
  ui.progress.value = 0;
  say('doc.sending', { name: file.name });
  try {
    const job = await start(file, seq);
    if (!job || seq !== state.seq) return;
    state.job = job;
    remember(job);
    showProgress(job);
    state.timer = setTimeout(() => follow(seq), FIRST_POLL_MS);
  } catch (e) {
    if (seq !== state.seq) return;
    finished(null, e instanceof ServerError ? 'doc.error' : 'doc.offline', { name: file.name, message: e.message }, true);
  }
}

async function cancel() {
  const job = state.job;
  if (!job) return;
  const seq = ++state.seq;
  clearTimeout(state.timer);
  ui.cancel.hidden = true;
  try {
    const answer = await jobCall('DELETE', `/documents/${job.id}`, null, job.filename);
    if (seq !== state.seq) return;
    state.job = { ...job, ...answer };
    finished(job, answer.deleted ? 'doc.deleted' : 'doc.canceled', { name: job.filename });
  } catch (e) {
    if (seq !== state.seq) return;
    ui.cancel.hidden = false;
    say('doc.error', { message: e.message }, true);
    state.timer = setTimeout(() => follow(seq), POLL_MS);
  }
}

// A job kept from before the page was (re)loaded: followed again, or forgotten when gone.
function resume() {
  const kept = storageJson(KEYS.docJob, null);
  if (!kept || typeof kept.id !== 'string' || !/^[0-9a-f]{32}$/.test(kept.id)) return;
  state.job = { id: kept.id, filename: '' };
  const seq = ++state.seq;
  follow(seq);
}

export function initDocuments() {
  ui.file.addEventListener('change', () => { translateDocument(ui.file.files[0]); ui.file.value = ''; });
  ui.drop.addEventListener('dragover', (e) => { e.preventDefault(); ui.drop.classList.add('over'); });
  ui.drop.addEventListener('dragleave', () => ui.drop.classList.remove('over'));
  // A file dropped beside the drop zone would make the browser leave the page for it.
  for (const name of ['dragover', 'drop'])
    document.addEventListener(name, (e) => { if (e.dataTransfer && [...e.dataTransfer.types].includes('Files')) e.preventDefault(); });
  ui.drop.addEventListener('drop', (e) => {
    e.preventDefault();
    ui.drop.classList.remove('over');
    translateDocument(e.dataTransfer.files[0]);
  });
  ui.cancel.addEventListener('click', cancel);
  onLangChange(() => {
    const s = state.status;
    if (s) say(s.key, s.vars, s.error);
    if (state.download) ui.download.textContent = t('doc.download', { name: state.download });
  });
  resume();
}
