// documents.js - the Documents panel: a file goes to POST /translate/document, its
// progress events drive the bar, the result is offered for download.
//
// A document's language is detected by the server (never the text pane's source: after
// a swap that would push a Chinese file through the en→zh model). When it is already
// the target language, the file is sent again for the other language (otherTarget,
// as the text pane switches); when nothing in it needed translating, the panel says
// so and offers no renamed copy of the file.
import { $, ServerError, headers, errorText, errorOf, readLines, targetsOf } from './common.js';
import { t, onLangChange } from './i18n.js';
import { askToken } from './menu.js';
import { otherTarget } from './translator.js';

const ui = {
  drop: $('doc-drop'), file: $('doc-file'), progress: $('doc-progress'), status: $('doc-status'),
  download: $('doc-download'), bar: $('doc-bar'), target: $('target-lang'),
};

const state = { controller: null, url: '', status: null, download: null };

function say(key, vars, error) {
  state.status = { key, vars, error: Boolean(error) };
  ui.bar.hidden = false;
  ui.status.textContent = t(key, vars);
  ui.status.classList.toggle('error', Boolean(error));
}

function base64Blob(data, type) {
  const bin = atob(data);
  const bytes = new Uint8Array(bin.length);
  for (let k = 0; k < bin.length; k++) bytes[k] = bin.charCodeAt(k);
  return new Blob([bytes], { type });
}

// Why a document is not translated, from its start event; null when it is.
function nothingToDo(ev) {
  if (ev.sentences > 0) return null;
  if (!ev.source) return ['doc.noText'];
  if (ev.source === ev.target) return ['doc.already', { lang: ev.source }];
  return ['doc.noText'];
}

// One request for the file into target. Resolves to the done event, or to
// {skip: [key, vars], source} when the server found nothing to translate into target.
async function send(file, target, controller) {
  const q = new URLSearchParams({ filename: file.name, source: 'auto' });
  if (target) q.set('target', target);
  const resp = await fetch(`/translate/document?${q}`, {
    method: 'POST', body: file, signal: controller.signal,
    headers: headers(file.type || 'application/octet-stream', 'application/x-ndjson'),
  });
  if (!resp.ok) {
    const message = await errorText(resp);
    if (resp.status === 401 || resp.status === 403) askToken(resp.status === 401 ? 'needed' : 'rejected');
    throw new ServerError(t('doc.refused', { name: file.name, status: resp.status, why: message }));
  }
  let done = null, skip = null, start = {};
  const stop = new Error('stop');
  try {
    await readLines(resp, (ev) => {
      if (ev.event === 'start') {
        start = ev;
        skip = nothingToDo(ev);
        if (skip) { done = { skip, source: ev.source }; throw stop; }
        say('doc.translating', { name: file.name, n: ev.sentences });
      } else if (ev.event === 'progress') {
        ui.progress.value = ev.total ? Math.round((100 * ev.done) / ev.total) : 100;
        say('doc.progress', { name: file.name, done: ev.done, total: ev.total });
      } else if (ev.event === 'done') {
        done = ev;
      } else if (ev.event === 'error') {
        throw new ServerError(t('doc.failed', { name: file.name, why: errorOf(ev) || 'translation failed' }));
      }
    });
  } catch (e) {
    if (e !== stop) throw e;
    controller.abort();  // the rest of the stream is the unchanged file: not needed
  }
  if (!done) throw new ServerError(t('doc.failed', { name: file.name, why: 'the server closed the stream early' }));
  return { ...done, from: start.source || '', to: start.target || target };
}

async function translateDocument(file) {
  if (!file) return;
  if (state.controller) state.controller.abort();
  if (state.url) URL.revokeObjectURL(state.url);
  state.url = '';
  ui.download.hidden = true;
  state.download = null;
  ui.progress.hidden = false;
  ui.progress.value = 0;
  say('doc.sending', { name: file.name });
  let controller = new AbortController();
  state.controller = controller;
  try {
    let target = ui.target.value;
    let done = await send(file, target, controller);
    if (done.skip && done.source && done.source === target) {
      const other = otherTarget(done.source);
      if (other && targetsOf(done.source).includes(other)) {
        target = other;
        controller = new AbortController();
        state.controller = controller;
        say('doc.switching', { name: file.name, from: done.source, to: other });
        done = await send(file, other, controller);
      }
    }
    if (state.controller !== controller) return;
    if (done.skip) {
      ui.progress.hidden = true;
      say(done.skip[0], { name: file.name, ...(done.skip[1] || {}) });
      return;
    }
    ui.progress.value = 100;
    state.url = done.data ? URL.createObjectURL(base64Blob(done.data, done.content_type || '')) : '';
    ui.download.href = state.url || done.url;
    ui.download.download = done.filename;
    state.download = done.filename;
    ui.download.textContent = t('doc.download', { name: done.filename });
    ui.download.hidden = false;
    say('doc.done', { name: file.name, from: done.from, to: done.to });
  } catch (e) {
    if (e.name === 'AbortError') return;
    ui.progress.hidden = true;
    say(e instanceof ServerError ? 'doc.error' : 'doc.offline', { name: file.name, message: e.message }, true);
  } finally {
    if (state.controller === controller) state.controller = null;
  }
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
  onLangChange(() => {
    const s = state.status;
    if (s) say(s.key, s.vars, s.error);
    if (state.download) ui.download.textContent = t('doc.download', { name: state.download });
  });
}
