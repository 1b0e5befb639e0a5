// Fanyi web UI: live zh→en translation over POST /translate/stream (server-sent events).
// No dependencies, no inline code (the page is served with a strict CSP), no other hosts.
'use strict';

const $ = (id) => document.getElementById(id);
const ui = {
  source: $('source'), backdrop: $('backdrop'), target: $('target'), counter: $('counter'),
  status: $('status'), progress: $('progress'), translate: $('translate'), clear: $('clear'),
  copy: $('copy'), history: $('history'), historyClear: $('history-clear'),
  tokenDialog: $('token-dialog'), tokenForm: $('token-form'), tokenInput: $('token-input'),
  tokenReason: $('token-reason'), tokenCancel: $('token-cancel'),
};

const DEBOUNCE_MS = 300;
const HISTORY_KEY = 'fanyi.history';
const TOKEN_KEY = 'fanyi.token';
const HISTORY_MAX = 20;

const state = {
  maxChars: 0,          // from the server (/version); 0 until known
  controller: null,     // AbortController of the request in flight
  seq: 0,               // id of the newest request; older answers are ignored
  timer: 0,             // debounce timer
  pairs: [],            // [{index, source, translation}] of the shown translation
  shownSource: null,    // the source text the shown translation belongs to
  retryTimer: 0,
};

function charCount(text) { return Array.from(text).length; }

function storageGet(key, fallback) {
  try { const v = localStorage.getItem(key); return v === null ? fallback : v; } catch { return fallback; }
}
function storageSet(key, value) {
  try { if (value === null) localStorage.removeItem(key); else localStorage.setItem(key, value); } catch { /* private mode */ }
}

// ---- server limits -------------------------------------------------------

async function loadLimits() {
  try {
    const r = await fetch('/version', { cache: 'no-store' });
    const info = await r.json();
    if (Number.isInteger(info.max_chars) && info.max_chars > 0) state.maxChars = info.max_chars;
  } catch { /* counter shows the count without a limit */ }
  updateCounter();
}

function updateCounter() {
  const n = charCount(ui.source.value);
  const max = state.maxChars;
  ui.counter.classList.remove('warn', 'over');
  if (!max) { ui.counter.textContent = `${n} characters`; return; }
  ui.counter.textContent = `${n.toLocaleString()} / ${max.toLocaleString()}`;
  if (n > max) {
    ui.counter.classList.add('over');
    ui.counter.textContent += ' — too long for this server';
  } else if (n >= max * 0.9) {
    ui.counter.classList.add('warn');
    ui.counter.textContent += ' — close to the limit';
  }
}

// ---- requests ------------------------------------------------------------

function headers() {
  const h = { 'Content-Type': 'application/json', 'Accept': 'text/event-stream' };
  const token = storageGet(TOKEN_KEY, '');
  if (token) h.Authorization = `Bearer ${token}`;
  return h;
}

function setBusy(busy) {
  ui.progress.hidden = !busy;
  ui.target.setAttribute('aria-busy', busy ? 'true' : 'false');
}

function setStatus(text, isError) {
  ui.status.textContent = text;
  ui.status.classList.toggle('error', Boolean(isError));
}

function scheduleTranslate() {
  clearTimeout(state.timer);
  state.timer = setTimeout(() => translate(false), DEBOUNCE_MS);
}

async function translate(force) {
  clearTimeout(state.timer);
  clearTimeout(state.retryTimer);
  const text = ui.source.value;
  if (!force && text === state.shownSource) return;
  if (state.controller) state.controller.abort();
  state.controller = null;
  const seq = ++state.seq;
  if (!text.trim()) {
    showPairs(text, [], '');
    setStatus('', false);
    setBusy(false);
    return;
  }
  const controller = new AbortController();
  state.controller = controller;
  setBusy(true);
  setStatus('Translating…', false);
  const started = performance.now();
  try {
    const resp = await fetch('/translate/stream', {
      method: 'POST', headers: headers(), body: JSON.stringify({ text }), signal: controller.signal,
    });
    if (!resp.ok) { await showHttpError(resp, seq); return; }
    const pairs = [];
    let final = null;
    await readEvents(resp, (event, data) => {
      if (seq !== state.seq) return;
      if (event === 'done') { final = data.translation; return; }
      if (event === 'error') throw new ServerError(data.error ? data.error.message : 'translation failed');
      pairs[data.index] = data;
      showStreaming(text, pairs);
    });
    if (seq !== state.seq) return;
    if (final === null) throw new ServerError('the server closed the stream early');
    showPairs(text, pairs.filter(Boolean), final);
    const ms = Math.round(performance.now() - started);
    setStatus(`${pairs.filter(Boolean).length} sentence${pairs.length === 1 ? '' : 's'} · ${ms} ms`, false);
    remember(text, final);
  } catch (e) {
    if (e.name === 'AbortError' || seq !== state.seq) return;
    clearStaleOutput();
    if (e instanceof ServerError) setStatus(`Translation failed: ${e.message}`, true);
    else setStatus('Cannot reach the Fanyi server. Your text is kept; try again when it is back.', true);
  } finally {
    if (seq === state.seq) { setBusy(false); state.controller = null; }
  }
}

class ServerError extends Error {}

// Parses a text/event-stream body, calling onEvent(name, jsonData) per event.
async function readEvents(resp, onEvent) {
  const reader = resp.body.getReader();
  const decoder = new TextDecoder();
  let buf = '';
  for (;;) {
    const { value, done } = await reader.read();
    if (done) break;
    buf += decoder.decode(value, { stream: true }).replace(/\r\n?/g, '\n');
    let cut;
    while ((cut = buf.indexOf('\n\n')) >= 0) {
      const block = buf.slice(0, cut);
      buf = buf.slice(cut + 2);
      let name = 'message';
      const data = [];
      for (const line of block.split('\n')) {
        if (line.startsWith('event:')) name = line.slice(6).trim();
        else if (line.startsWith('data:')) data.push(line.slice(5).replace(/^ /, ''));
      }
      if (data.length) onEvent(name, JSON.parse(data.join('\n')));
    }
  }
}

// The shown translation belongs to older text once a request for new text fails.
function clearStaleOutput() {
  showPairs(ui.source.value, [], '');
  state.shownSource = null;
}

function sentence(text) { return /[.!?。！？]$/.test(text) ? text : `${text}.`; }

async function showHttpError(resp, seq) {
  let message = '';
  try {
    const body = await resp.json();
    message = (body.error && (body.error.message || body.error)) || body.message || '';
  } catch { /* not JSON */ }
  if (seq !== state.seq) return;
  clearStaleOutput();
  const s = resp.status;
  if (s === 401 || s === 403) {
    setStatus(s === 401 ? 'This server needs an API token.' : 'The API token was rejected.', true);
    askToken(s === 401 ? 'This server requires an API token for translations.'
                       : 'The saved token was rejected. Enter the correct token.');
  } else if (s === 413) {
    setStatus(`Too long: ${sentence(message || 'the text is over the server\'s limit')} Your text is kept; shorten it to translate.`, true);
  } else if (s === 429 || s === 503) {
    const wait = Math.min(30, parseInt(resp.headers.get('Retry-After') || '2', 10) || 2);
    setStatus(`The server is busy. Retrying in ${wait} s…`, true);
    state.retryTimer = setTimeout(() => translate(true), wait * 1000);
  } else if (s === 504) {
    setStatus('The translation took too long and was stopped. Try a shorter text.', true);
  } else {
    setStatus(`Translation failed (${s})${message ? ': ' + sentence(message) : '.'}`, true);
  }
}

// ---- rendering -----------------------------------------------------------

// Locates each pair's source (in the input) and translation (in the output) in order.
function locate(text, pairs, key) {
  const spans = [];
  let pos = 0;
  for (const p of pairs) {
    const needle = p[key];
    const at = needle ? text.indexOf(needle, pos) : -1;
    if (at < 0) continue;
    spans.push({ index: p.index, start: at, end: at + needle.length });
    pos = at + needle.length;
  }
  return spans;
}

function renderSpans(container, text, spans, tag, cls) {
  container.textContent = '';
  let pos = 0;
  for (const s of spans) {
    if (s.start > pos) container.append(text.slice(pos, s.start));
    const el = document.createElement(tag);
    el.className = cls;
    el.dataset.i = s.index;
    el.textContent = text.slice(s.start, s.end);
    container.append(el);
    pos = s.end;
  }
  container.append(text.slice(pos));
}

function renderBackdrop(text, pairs) {
  // A trailing newline needs a character after it to take up space, as in the textarea.
  renderSpans(ui.backdrop, text, locate(text, pairs, 'source'), 'mark', 'src');
  ui.backdrop.append('\u200b');
  ui.backdrop.scrollTop = ui.source.scrollTop;
}

function showStreaming(text, pairs) {
  const done = pairs.filter(Boolean);
  const joined = done.map((p) => p.translation).join(' ');
  renderSpans(ui.target, joined, locate(joined, done, 'translation'), 'span', 'sent');
  state.pairs = done;
  renderBackdrop(text, done);
}

function showPairs(text, pairs, final) {
  state.pairs = pairs;
  state.shownSource = text;
  renderSpans(ui.target, final, locate(final, pairs, 'translation'), 'span', 'sent');
  renderBackdrop(text, pairs);
  ui.copy.disabled = !final;
}

function highlight(index) {
  for (const el of document.querySelectorAll('.hl')) el.classList.remove('hl');
  if (index === null || index === undefined) return;
  for (const el of document.querySelectorAll(`[data-i="${index}"]`)) el.classList.add('hl');
}

function sentenceAtSourceOffset(offset) {
  const text = ui.source.value;
  if (text !== state.shownSource) return null;
  for (const s of locate(text, state.pairs, 'source'))
    if (offset >= s.start && offset <= s.end) return s.index;
  return null;
}

// ---- history -------------------------------------------------------------

function loadHistory() {
  try { const h = JSON.parse(storageGet(HISTORY_KEY, '[]')); return Array.isArray(h) ? h : []; } catch { return []; }
}

function remember(source, translation) {
  if (!translation) return;
  const items = loadHistory().filter((h) => h.source !== source);
  items.unshift({ source, translation, at: Date.now() });
  storageSet(HISTORY_KEY, JSON.stringify(items.slice(0, HISTORY_MAX)));
  renderHistory();
}

function renderHistory() {
  const items = loadHistory();
  ui.history.textContent = '';
  for (const h of items) {
    const li = document.createElement('li');
    const b = document.createElement('button');
    b.type = 'button';
    b.title = 'Show this translation again';
    const src = document.createElement('span');
    src.className = 'src'; src.lang = 'zh'; src.textContent = h.source;
    const tgt = document.createElement('span');
    tgt.className = 'tgt'; tgt.lang = 'en'; tgt.textContent = h.translation;
    b.append(src, tgt);
    b.addEventListener('click', () => { ui.source.value = h.source; updateCounter(); translate(true); ui.source.focus(); });
    li.append(b);
    ui.history.append(li);
  }
  ui.historyClear.disabled = items.length === 0;
}

// ---- token ---------------------------------------------------------------

function askToken(reason) {
  if (ui.tokenDialog.open) return;
  ui.tokenReason.textContent = reason;
  ui.tokenInput.value = '';
  ui.tokenDialog.showModal();
}

// ---- wiring --------------------------------------------------------------

ui.source.addEventListener('input', () => {
  updateCounter();
  renderBackdrop(ui.source.value, []);   // old marks no longer line up
  scheduleTranslate();
});
ui.source.addEventListener('keydown', (e) => {
  if (e.key === 'Enter' && (e.ctrlKey || e.metaKey)) { e.preventDefault(); translate(true); }
});
ui.source.addEventListener('scroll', () => { ui.backdrop.scrollTop = ui.source.scrollTop; });
ui.source.addEventListener('mousemove', (e) => {
  const mark = document.elementsFromPoint(e.clientX, e.clientY).find((el) => el.matches('mark[data-i]'));
  highlight(mark ? mark.dataset.i : null);
});
ui.source.addEventListener('mouseleave', () => highlight(null));
for (const ev of ['select', 'keyup', 'click'])
  ui.source.addEventListener(ev, () => {
    if (document.activeElement === ui.source) highlight(sentenceAtSourceOffset(ui.source.selectionStart));
  });
ui.target.addEventListener('mouseover', (e) => {
  const s = e.target.closest('.sent');
  highlight(s ? s.dataset.i : null);
});
ui.target.addEventListener('mouseleave', () => highlight(null));
document.addEventListener('selectionchange', () => {
  const sel = document.getSelection();
  if (!sel || !sel.anchorNode || !ui.target.contains(sel.anchorNode)) return;
  const el = sel.anchorNode.nodeType === 1 ? sel.anchorNode : sel.anchorNode.parentElement;
  const s = el && el.closest('.sent');
  if (s) highlight(s.dataset.i);
});

ui.translate.addEventListener('click', () => translate(true));
ui.clear.addEventListener('click', () => {
  ui.source.value = '';
  updateCounter();
  translate(true);
  ui.source.focus();
});
ui.copy.addEventListener('click', async () => {
  const text = ui.target.textContent;
  try {
    await navigator.clipboard.writeText(text);
  } catch {
    const range = document.createRange();
    range.selectNodeContents(ui.target);
    const sel = document.getSelection();
    sel.removeAllRanges();
    sel.addRange(range);
    document.execCommand('copy');
  }
  setStatus('Copied to the clipboard.', false);
});
ui.historyClear.addEventListener('click', () => { storageSet(HISTORY_KEY, null); renderHistory(); });
ui.tokenCancel.addEventListener('click', () => ui.tokenDialog.close('cancel'));
ui.tokenForm.addEventListener('submit', () => {
  storageSet(TOKEN_KEY, ui.tokenInput.value.trim());
  setTimeout(() => translate(true), 0);
});

renderHistory();
renderBackdrop('', []);
loadLimits();
