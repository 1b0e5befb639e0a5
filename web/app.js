// Fanyi web UI: live zh→en translation over POST /translate/stream (server-sent events).
// No dependencies, no inline code (the page is served with a strict CSP), no other hosts.
'use strict';

const $ = (id) => document.getElementById(id);
const ui = {
  source: $('source'), backdrop: $('backdrop'), target: $('target'), counter: $('counter'),
  status: $('status'), action: $('action'), progress: $('progress'), translate: $('translate'),
  clear: $('clear'), copy: $('copy'), history: $('history'), historyClear: $('history-clear'),
  historySearch: $('history-search'), tokenOpen: $('token-open'), share: $('share'),
  sourceLang: $('source-lang'), targetLang: $('target-lang'), swap: $('swap'),
  sourceLabel: $('source-label'), targetLabel: $('target-label'),
  tokenDialog: $('token-dialog'), tokenForm: $('token-form'), tokenInput: $('token-input'),
  tokenReason: $('token-reason'), tokenCancel: $('token-cancel'),
  alts: $('alts'), altsTitle: $('alts-title'), altsList: $('alts-list'), altsClose: $('alts-close'),
  docDrop: $('doc-drop'), docFile: $('doc-file'), docProgress: $('doc-progress'), docStatus: $('doc-status'),
  docDownload: $('doc-download'),
};

const DEBOUNCE_MS = 300;
const SAVE_PAUSE_MS = 2000;   // a translation shown this long without an edit goes into history
const HEALTH_POLL_MS = 2000;  // while the server is unreachable
const RETRY_CAP_S = 30;       // longest wait between busy retries
const HISTORY_KEY = 'fanyi.history';
const TOKEN_KEY = 'fanyi.token';
const DRAFT_KEY = 'fanyi.draft';
const HISTORY_MAX = 50;
const ALTERNATIVES = 3;       // asked per sentence: needs the server's --max-beam at least 4 (its default)

const state = {
  maxChars: 0,          // from the server (/version); 0 until known
  controller: null,     // AbortController of the request in flight
  seq: 0,               // id of the newest request; older answers are ignored
  timer: 0,             // debounce timer
  composing: false,     // an input method is composing: its text is not final yet
  shown: null,          // {source, translation, spans} of the output; spans [{i, src:[a,b], tr:[a,b]}]
  pending: null,        // the shown translation, not yet in history
  saveTimer: 0,
  saveOnDone: false,    // Ctrl+Enter: the user means this text
  retry: { attempt: 0, timer: 0, tick: 0 },
  offline: false,       // the last request could not reach the server
  healthTimer: 0,
  statusTimer: 0,
  cleared: null,        // text removed by Clear, for Undo
  syncFrom: null,       // the element whose scroll event we caused (scroll sync)
  langs: [],            // /languages: [{code, name, targets}]
  detected: '',         // the source language the server found for "Detect"
  altSeq: 0,            // id of the newest alternatives request
  altFor: null,         // data-i of the sentence whose alternatives are shown
  doc: null,            // AbortController of the document in flight
  docUrl: '',           // object URL of the last translated document
};

function chars(text) { return Array.from(text); }

function storageGet(key, fallback) {
  try { const v = localStorage.getItem(key); return v === null ? fallback : v; } catch { return fallback; }
}
function storageSet(key, value) {
  try { if (value === null) localStorage.removeItem(key); else localStorage.setItem(key, value); } catch { /* private mode */ }
}

const names = (() => { try { return new Intl.DisplayNames(['en'], { type: 'language' }); } catch { return null; } })();
function langName(code) {
  try { return (names && code && names.of(code)) || code || 'unknown'; } catch { return code; }
}

// ---- direction -----------------------------------------------------------

function nameOf(code) {
  const l = state.langs.find((x) => x.code === code);
  return (l && l.name) || langName(code);
}

function option(value, label) {
  const o = document.createElement('option');
  o.value = value;
  o.textContent = label;
  return o;
}

// The targets the chosen source offers ("Detect": every target).
function targetsOf(source) {
  if (source === 'auto') return [...new Set(state.langs.flatMap((l) => l.targets))].sort();
  const l = state.langs.find((x) => x.code === source);
  return l ? l.targets : [];
}

function fillTargets(want) {
  const targets = targetsOf(ui.sourceLang.value);
  ui.targetLang.textContent = '';
  for (const t of targets) ui.targetLang.append(option(t, nameOf(t)));
  ui.targetLang.value = targets.includes(want) ? want : (targets.includes('en') ? 'en' : targets[0] || '');
}

function setDirection(source, target) {
  ui.sourceLang.value = [...ui.sourceLang.options].some((o) => o.value === source) ? source : 'auto';
  fillTargets(target);
  showDirection();
}

// Labels, languages of the fields, the swap button and the URL follow the direction.
function showDirection() {
  const src = ui.sourceLang.value, tgt = ui.targetLang.value;
  const from = src === 'auto' ? state.detected : src;
  ui.sourceLang.options[0].textContent = state.detected && src === 'auto' ? `Detect (${nameOf(state.detected)})` : 'Detect language';
  ui.sourceLabel.textContent = src === 'auto' ? (state.detected ? `${nameOf(state.detected)} (detected)` : 'Text') : nameOf(src);
  ui.targetLabel.textContent = tgt ? nameOf(tgt) : 'Translation';
  ui.source.lang = from || '';
  ui.target.lang = tgt || '';
  ui.source.placeholder = from === 'zh' || (!from && targetsOf('zh').length)
    ? '在此输入中文……（Ctrl+Enter 翻译）' : 'Type or paste text (Ctrl+Enter translates)';
  const back = from && targetsOf(tgt).includes(from);
  ui.swap.disabled = !back;
  ui.swap.title = back ? 'Swap the languages and the texts' : `No model translates ${nameOf(tgt)} into ${from ? nameOf(from) : 'the detected language'} here`;
  document.title = `Fanyi · ${from ? nameOf(from) : 'Detect'} → ${tgt ? nameOf(tgt) : '…'}`;
  history.replaceState(null, '', `#${hashOf(false)}`);
}

function hashOf(withText) {
  const h = new URLSearchParams({ sl: ui.sourceLang.value, tl: ui.targetLang.value });
  if (withText) h.set('text', ui.source.value);
  return h.toString();
}

async function loadLanguages() {
  try {
    const r = await fetch('/languages', { cache: 'no-store' });
    const list = await r.json();
    // /languages speaks LibreTranslate's codes (zh-Hans); the native API and the
    // detected source use Fanyi's (zh).
    const own = (c) => (c === 'zh-Hans' ? 'zh' : c);
    if (Array.isArray(list)) {
      state.langs = list.filter((l) => l && l.code && Array.isArray(l.targets) && l.targets.length)
        .map((l) => ({ ...l, code: own(l.code), targets: l.targets.map(own) }));
    }
  } catch { /* the server's defaults: no choice offered */ }
  for (const l of state.langs) ui.sourceLang.append(option(l.code, l.name || l.code));
  const h = new URLSearchParams(location.hash.slice(1));
  setDirection(h.get('sl') || 'auto', h.get('tl') || 'en');
  if (h.has('text')) { ui.source.value = h.get('text'); edited(); }
}

function swap() {
  const from = ui.sourceLang.value === 'auto' ? state.detected : ui.sourceLang.value;
  const to = ui.targetLang.value;
  if (!from || !targetsOf(to).includes(from)) return;
  const s = state.shown;
  const translation = s && s.source === ui.source.value && !ui.target.classList.contains('stale') ? s.translation : null;
  setDirection(to, from);
  if (translation !== null) {
    ui.source.value = translation;
    edited();
  }
  translate(true);
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

function tooLong(text) { return state.maxChars > 0 && chars(text).length > state.maxChars; }

function updateCounter() {
  const n = chars(ui.source.value).length;
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

// ---- status and its one action -------------------------------------------

function setStatus(text, isError) {
  clearTimeout(state.statusTimer);
  ui.status.textContent = text;
  ui.status.classList.toggle('error', Boolean(isError));
  setAction(null);
}

// A note for a moment (e.g. "Copied"), then the status as it was.
function flashStatus(text) {
  const before = { text: ui.status.textContent, error: ui.status.classList.contains('error') };
  const action = ui.action.hidden ? null : { label: ui.action.textContent, run: ui.action.onclick };
  clearTimeout(state.statusTimer);
  ui.status.textContent = text;
  state.statusTimer = setTimeout(() => {
    ui.status.textContent = before.text;
    ui.status.classList.toggle('error', before.error);
    if (action) setAction(action.label, action.run);
  }, 2000);
}

function setAction(label, run) {
  ui.action.hidden = !label;
  ui.action.textContent = label || '';
  ui.action.onclick = label ? run : null;
}

function setBusy(busy) {
  ui.progress.hidden = !busy;
  ui.target.setAttribute('aria-busy', busy ? 'true' : 'false');
}

function markStale(stale) { ui.target.classList.toggle('stale', stale); }

// ---- requests ------------------------------------------------------------

function headers(type, accept) {
  const h = { 'Content-Type': type || 'application/json', 'Accept': accept || 'text/event-stream' };
  const token = storageGet(TOKEN_KEY, '');
  if (token) h.Authorization = `Bearer ${token}`;
  return h;
}

function scheduleTranslate() {
  clearTimeout(state.timer);
  state.timer = setTimeout(() => translate(false), DEBOUNCE_MS);
}

function stopRetry() {
  clearTimeout(state.retry.timer);
  clearInterval(state.retry.tick);
}

// Translates the text (default: the whole input). force: even if it is what is shown.
async function translate(force, only) {
  clearTimeout(state.timer);
  stopRetry();
  if (state.composing) return;
  const text = only === undefined ? ui.source.value : only;
  if (!force && state.shown && text === state.shown.source && !ui.target.classList.contains('stale')) return;
  if (state.controller) state.controller.abort();
  state.controller = null;
  const seq = ++state.seq;
  if (!text.trim()) {
    show({ source: text, translation: '', spans: [] });
    setStatus('', false);
    setBusy(false);
    return;
  }
  if (tooLong(text)) { refuseTooLong(text); return; }
  const controller = new AbortController();
  state.controller = controller;
  setBusy(true);
  setStatus('Translating…', false);
  const started = performance.now();
  const got = { source: text, translation: '', spans: [] };  // what has arrived
  try {
    const resp = await fetch('/translate/stream', {
      method: 'POST', headers: headers(), signal: controller.signal,
      body: JSON.stringify({ text, spans: true, source: ui.sourceLang.value, ...(ui.targetLang.value ? { target: ui.targetLang.value } : {}) }),
    });
    if (!resp.ok) { await showHttpError(resp, seq); return; }
    let done = null;
    await readEvents(resp, (event, data) => {
      if (seq !== state.seq) return;
      if (event === 'done') { done = data; return; }
      if (event === 'error') throw new ServerError(data.error ? data.error.message : 'translation failed');
      // "before" is what stands between the previous sentence and this one (paragraph breaks too).
      const start = got.translation.length + (data.before || '').length;
      got.translation += (data.before || '') + data.translation;
      got.spans.push({ i: data.sentence, src: data.source_span, tr: [start, data.translation.length] });
      show(got, true);
    });
    if (seq !== state.seq) return;
    if (done === null) throw new ServerError('the server closed the stream early');
    const spans = (done.sentences || []).map((s, i) => ({ i, src: s.source, tr: s.translation }));
    const result = { source: text, translation: done.translation, spans, sl: ui.sourceLang.value, tl: ui.targetLang.value };
    show(result);
    state.detected = done.source || '';
    showDirection();
    state.offline = false;
    state.retry.attempt = 0;
    const ms = Math.round(performance.now() - started);
    if (!spans.length) setStatus(passThrough(done), false);
    else setStatus(`${spans.length} sentence${spans.length === 1 ? '' : 's'} · ${ms} ms`, false);
    if (only !== undefined) setStatus(`${ui.status.textContent} · the first ${chars(text).length.toLocaleString()} characters`, false);
    offerSave(result);
  } catch (e) {
    if (e.name === 'AbortError' || seq !== state.seq) return;
    if (got.spans.length) {
      show(got);  // keep what arrived
      const n = got.spans.length;
      const why = e instanceof ServerError ? e.message : 'the connection was lost';
      setStatus(`Stopped after ${n} sentence${n === 1 ? '' : 's'}: ${why}. The rest is missing.`, true);
    } else if (e instanceof ServerError) {
      markStale(true);
      setStatus(`Translation failed: ${e.message}`, true);
    } else {
      markStale(true);
      setStatus('Cannot reach the Fanyi server. Your text is kept; it is translated as soon as the server is back.', true);
    }
    if (!(e instanceof ServerError)) waitForServer();
  } finally {
    if (seq === state.seq) { setBusy(false); state.controller = null; }
  }
}

function passThrough(done) {
  const src = Array.isArray(done.source) ? done.source[0] : done.source;
  const tgt = Array.isArray(done.target) ? done.target[0] : done.target;
  if (!src) return 'Nothing to translate: no words in a language this server knows.';
  return `This text is ${langName(src)}, already the target language (${langName(tgt)}): nothing to translate.`;
}

function refuseTooLong(text) {
  markStale(Boolean(state.shown && state.shown.translation));
  const max = state.maxChars;
  setStatus(`Too long: ${chars(text).length.toLocaleString()} characters, this server takes ${max.toLocaleString()}. Your text is kept.`, true);
  setAction(`Translate the first ${max.toLocaleString()} characters`, () => translate(true, chars(text).slice(0, max).join('')));
}

// Polls /health while the server is away, then translates the input again.
function waitForServer() {
  state.offline = true;
  clearTimeout(state.healthTimer);
  state.healthTimer = setTimeout(async () => {
    if (!state.offline) return;
    let ok = false;
    try { ok = (await fetch('/health', { cache: 'no-store' })).ok; } catch { /* still away */ }
    if (!ok) { waitForServer(); return; }
    state.offline = false;
    if (!state.controller) translate(true);
  }, HEALTH_POLL_MS);
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

function sentence(text) { return /[.!?。！？]$/.test(text) ? text : `${text}.`; }

function errorOf(body) {
  return (body && ((body.error && (body.error.message || body.error)) || body.message)) || '';
}

async function errorText(resp) {
  try { return errorOf(await resp.json()); } catch { return ''; }  // not JSON
}

async function showHttpError(resp, seq) {
  const message = await errorText(resp);
  if (seq !== state.seq) return;
  markStale(Boolean(state.shown && state.shown.translation));
  const s = resp.status;
  if (s === 401 || s === 403) {
    setStatus(s === 401 ? 'This server needs an API token.' : 'The API token was rejected.', true);
    askToken(s === 401 ? 'This server requires an API token for translations.'
                       : 'The saved token was rejected. Enter the correct token.');
  } else if (s === 413) {
    setStatus(`Too long: ${sentence(message || 'the text is over the server\'s limit')} Your text is kept; shorten it to translate.`, true);
  } else if (s === 429 || s === 503) {
    retryBusy(parseInt(resp.headers.get('Retry-After') || '1', 10) || 1);
  } else if (s === 504) {
    setStatus('The translation took too long and was stopped. Try a shorter text.', true);
  } else {
    setStatus(`Translation failed (${s})${message ? ': ' + sentence(message) : '.'}`, true);
  }
}

// Busy: waits the longer of Retry-After and 1, 2, 4… s (capped), counting down.
function retryBusy(retryAfter) {
  const wait = Math.min(RETRY_CAP_S, Math.max(retryAfter, 2 ** state.retry.attempt));
  state.retry.attempt++;
  let left = wait;
  const say = () => {
    setStatus(`The server is busy. Retrying in ${left} s…`, true);
    setAction('Retry now', () => translate(true));
  };
  say();
  stopRetry();
  state.retry.tick = setInterval(() => { if (left > 1) { left--; say(); } }, 1000);
  state.retry.timer = setTimeout(() => translate(true), wait * 1000);
}

// ---- rendering -----------------------------------------------------------

// Writes text into container with the spans [{i, at:[start, len]}] as tag elements.
function renderSpans(container, text, spans, tag) {
  container.textContent = '';
  let pos = 0;
  for (const s of spans) {
    const [start, len] = s.at;
    if (start < pos || start + len > text.length) continue;
    if (start > pos) container.append(text.slice(pos, start));
    const el = document.createElement(tag);
    el.className = tag === 'mark' ? 'src' : s.picked ? 'sent picked' : 'sent';
    el.dataset.i = s.i;
    if (tag === 'span') {
      el.setAttribute('role', 'button');
      el.tabIndex = container.querySelector('.sent') ? -1 : 0;
    }
    el.textContent = text.slice(start, start + len);
    container.append(el);
    pos = start + len;
  }
  container.append(text.slice(pos));
}

// The marks behind the textarea: only while the input is the text the output belongs to
// (or starts with it: the first N characters were translated).
function renderBackdrop() {
  const text = ui.source.value;
  const s = state.shown;
  const match = s && s.spans.length && text.startsWith(s.source) && !ui.target.classList.contains('stale');
  renderSpans(ui.backdrop, text, match ? s.spans.map((p) => ({ i: p.i, at: p.src })) : [], 'mark');
  ui.backdrop.append('\u200b');  // a trailing newline needs a character after it, as in the textarea
  fitBackdrop();
}

// The backdrop takes the textarea's client box: without its scrollbar, lines wrap alike.
function fitBackdrop() {
  ui.backdrop.style.width = `${ui.source.clientWidth}px`;
  ui.backdrop.style.height = `${ui.source.clientHeight}px`;
  ui.backdrop.scrollTop = ui.source.scrollTop;
}

function show(result, streaming) {
  highlight(null);
  closeAlternatives(false);
  state.shown = { source: result.source, translation: result.translation, spans: result.spans.slice() };
  markStale(false);
  renderSpans(ui.target, result.translation, result.spans.map((p) => ({ i: p.i, at: p.tr, picked: p.picked })), 'span');
  renderBackdrop();
  ui.copy.disabled = streaming || !result.translation;
}

function highlight(index) {
  for (const el of document.querySelectorAll('.hl')) el.classList.remove('hl');
  if (index === null || index === undefined) return;
  for (const el of document.querySelectorAll(`[data-i="${index}"]`)) el.classList.add('hl');
}

// The source sentence under a point: the backdrop ignores the pointer, so test its marks' boxes.
function markAt(x, y) {
  for (const m of ui.backdrop.querySelectorAll('mark[data-i]'))
    for (const r of m.getClientRects())
      if (x >= r.left && x <= r.right && y >= r.top && y <= r.bottom) return m.dataset.i;
  return null;
}

function sentenceAtSourceOffset(offset) {
  const s = state.shown;
  if (!s || !ui.source.value.startsWith(s.source) || ui.target.classList.contains('stale')) return null;
  for (const p of s.spans) if (offset >= p.src[0] && offset <= p.src[0] + p.src[1]) return p.i;
  return null;
}

// Keeps the two panes at the same relative place.
function syncScroll(from, to) {
  if (state.syncFrom === from) { state.syncFrom = null; return; }
  const range = from.scrollHeight - from.clientHeight;
  const want = Math.round((range > 0 ? from.scrollTop / range : 0) * (to.scrollHeight - to.clientHeight));
  if (Math.abs(to.scrollTop - want) > 1) { state.syncFrom = to; to.scrollTop = want; }
}

// ---- alternatives --------------------------------------------------------

// A shown sentence's n-best: its source sentence alone, decoded with a beam.
async function showAlternatives(el) {
  const s = state.shown;
  const span = s && s.spans.find((p) => String(p.i) === el.dataset.i);
  if (!span || state.controller || ui.target.classList.contains('stale')) return;
  const seq = ++state.altSeq;
  state.altFor = el.dataset.i;
  const current = s.translation.substr(span.tr[0], span.tr[1]);
  ui.alts.hidden = false;
  ui.altsTitle.textContent = 'Finding alternatives…';
  ui.altsList.textContent = '';
  const from = ui.sourceLang.value === 'auto' ? state.detected || 'auto' : ui.sourceLang.value;
  let answer;
  try {
    const resp = await fetch('/translate', {
      method: 'POST', headers: headers('application/json', 'application/json'),
      body: JSON.stringify({ text: s.source.substr(span.src[0], span.src[1]), alternatives: ALTERNATIVES,
        source: from, ...(ui.targetLang.value ? { target: ui.targetLang.value } : {}) }),
    });
    answer = await resp.json().catch(() => ({}));
    if (!resp.ok) throw new ServerError(errorOf(answer) || `status ${resp.status}`);
  } catch (e) {
    if (seq !== state.altSeq) return;
    ui.altsTitle.textContent = `No alternatives: ${e instanceof ServerError ? e.message : 'the server cannot be reached'}`;
    return;
  }
  if (seq !== state.altSeq || state.shown !== s) return;
  const options = [...new Set([answer.translation, ...(answer.alternatives || [])])].filter((t) => t && t !== current);
  ui.altsTitle.textContent = options.length ? `Alternatives for “${current}”` : 'No other translation found for this sentence.';
  for (const t of options) {
    const li = document.createElement('li');
    const b = document.createElement('button');
    b.type = 'button';
    b.textContent = t;
    b.addEventListener('click', () => pickAlternative(span.i, t));
    li.append(b);
    ui.altsList.append(li);
  }
  const first = ui.altsList.querySelector('button');
  if (first) first.focus();
}

function closeAlternatives(refocus) {
  ++state.altSeq;
  const was = state.altFor;
  state.altFor = null;
  ui.alts.hidden = true;
  ui.altsList.textContent = '';
  const el = was !== null && ui.target.querySelector(`.sent[data-i="${was}"]`);
  if (refocus && el) el.focus();
}

// The pick replaces its sentence in the output; the spans after it move; Copy and the
// history take the edited output.
function pickAlternative(i, text) {
  const s = state.shown;
  const k = s.spans.findIndex((p) => p.i === i);
  if (k < 0) return;
  const [start, len] = s.spans[k].tr;
  const delta = text.length - len;
  const spans = s.spans.map((p, j) => (j < k ? p : j === k ? { ...p, tr: [start, text.length], picked: true } : { ...p, tr: [p.tr[0] + delta, p.tr[1]] }));
  const result = { source: s.source, translation: s.translation.slice(0, start) + text + s.translation.slice(start + len),
    spans, sl: ui.sourceLang.value, tl: ui.targetLang.value };
  show(result);
  const el = ui.target.querySelector(`.sent[data-i="${i}"]`);
  if (el) { rove(el); el.focus(); }
  clearTimeout(state.saveTimer);
  state.pending = null;
  remember(result);
  setStatus('Alternative chosen: Copy and the history use it.', false);
}

// One sentence is in the tab order; arrows move between them.
function rove(el) {
  for (const x of ui.target.querySelectorAll('.sent')) x.tabIndex = x === el ? 0 : -1;
}

// ---- documents -----------------------------------------------------------

function docStatus(text, isError) {
  ui.docStatus.textContent = text;
  ui.docStatus.classList.toggle('error', Boolean(isError));
}

// Reads an application/x-ndjson body, calling onEvent(object) per line.
async function readLines(resp, onEvent) {
  const reader = resp.body.getReader();
  const decoder = new TextDecoder();
  let buf = '';
  for (;;) {
    const { value, done } = await reader.read();
    buf += done ? decoder.decode() : decoder.decode(value, { stream: true });
    let cut;
    while ((cut = buf.indexOf('\n')) >= 0) {
      const line = buf.slice(0, cut).trim();
      buf = buf.slice(cut + 1);
      if (line) onEvent(JSON.parse(line));
    }
    if (done) break;
  }
  if (buf.trim()) onEvent(JSON.parse(buf));
}

function base64Blob(data, type) {
  const bin = atob(data);
  const bytes = new Uint8Array(bin.length);
  for (let k = 0; k < bin.length; k++) bytes[k] = bin.charCodeAt(k);
  return new Blob([bytes], { type });
}

// Sends the file to POST /translate/document; its progress events drive the bar.
async function translateDocument(file) {
  if (!file) return;
  if (state.doc) state.doc.abort();
  const controller = new AbortController();
  state.doc = controller;
  if (state.docUrl) URL.revokeObjectURL(state.docUrl);
  state.docUrl = '';
  ui.docDownload.hidden = true;
  ui.docProgress.hidden = false;
  ui.docProgress.value = 0;
  docStatus(`Sending ${file.name}…`, false);
  const q = new URLSearchParams({ filename: file.name, source: ui.sourceLang.value });
  if (ui.targetLang.value) q.set('target', ui.targetLang.value);
  try {
    const resp = await fetch(`/translate/document?${q}`, {
      method: 'POST', body: file, signal: controller.signal,
      headers: headers(file.type || 'application/octet-stream', 'application/x-ndjson'),
    });
    if (!resp.ok) {
      const message = await errorText(resp);
      if (resp.status === 401 || resp.status === 403) askToken('This server requires an API token for translations.');
      throw new ServerError(`${file.name} was refused (${resp.status}): ${sentence(message || 'no reason given')}`);
    }
    let done = null;
    await readLines(resp, (ev) => {
      if (ev.event === 'start') docStatus(`Translating ${file.name} (${ev.sentences} sentences)…`, false);
      else if (ev.event === 'progress') {
        ui.docProgress.value = ev.total ? Math.round((100 * ev.done) / ev.total) : 100;
        docStatus(`Translating ${file.name}: ${ev.done} of ${ev.total} sentences…`, false);
      } else if (ev.event === 'done') done = ev;
      else if (ev.event === 'error') throw new ServerError(`${file.name} failed: ${sentence(errorOf(ev) || 'translation failed')}`);
    });
    if (!done) throw new ServerError(`${file.name} failed: the server closed the stream early.`);
    ui.docProgress.value = 100;
    state.docUrl = done.data ? URL.createObjectURL(base64Blob(done.data, done.content_type || '')) : '';
    ui.docDownload.href = state.docUrl || done.url;
    ui.docDownload.download = done.filename;
    ui.docDownload.textContent = `Download ${done.filename}`;
    ui.docDownload.hidden = false;
    docStatus(`${file.name} translated (${done.direction}).`, false);
  } catch (e) {
    if (e.name === 'AbortError') return;
    ui.docProgress.hidden = true;
    docStatus(e instanceof ServerError ? e.message : `${file.name}: cannot reach the Fanyi server.`, true);
  } finally {
    if (state.doc === controller) state.doc = null;
  }
}

// ---- history -------------------------------------------------------------

function loadHistory() {
  try { const h = JSON.parse(storageGet(HISTORY_KEY, '[]')); return Array.isArray(h) ? h : []; } catch { return []; }
}

// A translation is saved when the user shows they mean it: a pause, leaving the
// field, copying, Ctrl+Enter. Not every prefix typed on the way.
function offerSave(result) {
  clearTimeout(state.saveTimer);
  state.pending = result.translation ? result : null;
  if (!state.pending) return;
  if (state.saveOnDone) { savePending(); return; }
  state.saveTimer = setTimeout(savePending, SAVE_PAUSE_MS);
}

function savePending() {
  clearTimeout(state.saveTimer);
  state.saveOnDone = false;
  const p = state.pending;
  state.pending = null;
  if (p) remember(p);
}

// Entries whose text is a prefix of the new one (or the other way) fold into it.
function remember(r) {
  const items = loadHistory().filter((h) => !(r.source.startsWith(h.source) || h.source.startsWith(r.source)));
  items.unshift({ source: r.source, translation: r.translation, spans: r.spans, sl: r.sl, tl: r.tl, at: Date.now() });
  storageSet(HISTORY_KEY, JSON.stringify(items.slice(0, HISTORY_MAX)));
  renderHistory();
}

function forget(at) {
  storageSet(HISTORY_KEY, JSON.stringify(loadHistory().filter((h) => h.at !== at)));
  renderHistory();
}

// Shows a saved translation as it was stored: no request, so it works offline.
function showSaved(h) {
  stopRetry();
  ++state.seq;
  if (state.controller) state.controller.abort();
  if (h.sl && h.tl) setDirection(h.sl, h.tl);
  ui.source.value = h.source;
  storageSet(DRAFT_KEY, h.source);
  updateCounter();
  show({ source: h.source, translation: h.translation, spans: Array.isArray(h.spans) ? h.spans : [] });
  setStatus('From the history.', false);
  ui.source.focus();
}

function renderHistory() {
  const all = loadHistory();
  const q = ui.historySearch.value.trim().toLowerCase();
  const items = q ? all.filter((h) => `${h.source}\n${h.translation}`.toLowerCase().includes(q)) : all;
  ui.history.textContent = '';
  for (const h of items) {
    const li = document.createElement('li');
    const b = document.createElement('button');
    b.type = 'button';
    b.className = 'item';
    b.title = 'Show this translation again';
    const src = document.createElement('span');
    src.className = 'src'; src.lang = 'zh'; src.textContent = h.source;
    const tgt = document.createElement('span');
    tgt.className = 'tgt'; tgt.lang = 'en'; tgt.textContent = h.translation;
    b.append(src, tgt);
    b.addEventListener('click', () => showSaved(h));
    const del = document.createElement('button');
    del.type = 'button';
    del.className = 'del';
    del.textContent = '×';
    del.setAttribute('aria-label', `Delete “${chars(h.source).slice(0, 20).join('')}” from the history`);
    del.addEventListener('click', () => forget(h.at));
    li.append(b, del);
    ui.history.append(li);
  }
  ui.historyClear.disabled = all.length === 0;
}

// ---- token ---------------------------------------------------------------

function askToken(reason) {
  if (ui.tokenDialog.open) return;
  ui.tokenReason.textContent = reason;
  ui.tokenInput.value = '';
  ui.tokenDialog.showModal();
}

// ---- wiring --------------------------------------------------------------

function edited() {
  updateCounter();
  highlight(null);
  clearTimeout(state.saveTimer);
  state.retry.attempt = 0;
  storageSet(DRAFT_KEY, ui.source.value);
  renderBackdrop();
}

ui.source.addEventListener('compositionstart', () => { state.composing = true; clearTimeout(state.timer); });
ui.source.addEventListener('compositionend', () => { state.composing = false; edited(); scheduleTranslate(); });
ui.source.addEventListener('input', (e) => {
  if (e.isComposing || state.composing) return;  // the text is not final until compositionend
  edited();
  scheduleTranslate();
});
ui.source.addEventListener('keydown', (e) => {
  if (e.key === 'Enter' && (e.ctrlKey || e.metaKey) && !e.isComposing) {
    e.preventDefault();
    state.saveOnDone = true;
    if (state.pending && state.pending.source === ui.source.value) savePending();
    else translate(true);
  }
});
ui.source.addEventListener('blur', () => { if (state.pending) savePending(); });
ui.source.addEventListener('scroll', () => {
  ui.backdrop.scrollTop = ui.source.scrollTop;
  syncScroll(ui.source, ui.target);
});
ui.target.addEventListener('scroll', () => syncScroll(ui.target, ui.source));
ui.source.addEventListener('mousemove', (e) => highlight(markAt(e.clientX, e.clientY)));
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
ui.target.addEventListener('click', (e) => {
  const el = e.target.closest('.sent');
  const sel = document.getSelection();
  if (el && (!sel || sel.isCollapsed)) { rove(el); showAlternatives(el); }
});
ui.target.addEventListener('keydown', (e) => {
  const el = e.target.closest && e.target.closest('.sent');
  if (!el) return;
  const all = [...ui.target.querySelectorAll('.sent')];
  const step = { ArrowRight: 1, ArrowDown: 1, ArrowLeft: -1, ArrowUp: -1 }[e.key];
  if (e.key === 'Enter' || e.key === ' ') { e.preventDefault(); showAlternatives(el); } else if (step) {
    e.preventDefault();
    const next = all[all.indexOf(el) + step];
    if (next) { rove(next); next.focus(); }
  }
});
ui.target.addEventListener('focusin', (e) => { if (e.target.dataset.i !== undefined) highlight(e.target.dataset.i); });
ui.altsClose.addEventListener('click', () => closeAlternatives(true));
ui.alts.addEventListener('keydown', (e) => { if (e.key === 'Escape') closeAlternatives(true); });
ui.docFile.addEventListener('change', () => { translateDocument(ui.docFile.files[0]); ui.docFile.value = ''; });
ui.docDrop.addEventListener('dragover', (e) => { e.preventDefault(); ui.docDrop.classList.add('over'); });
ui.docDrop.addEventListener('dragleave', () => ui.docDrop.classList.remove('over'));
// A file dropped beside the drop zone would make the browser leave the page for it.
for (const name of ['dragover', 'drop'])
  document.addEventListener(name, (e) => { if (e.dataTransfer && [...e.dataTransfer.types].includes('Files')) e.preventDefault(); });
ui.docDrop.addEventListener('drop', (e) => {
  e.preventDefault();
  ui.docDrop.classList.remove('over');
  translateDocument(e.dataTransfer.files[0]);
});
document.addEventListener('selectionchange', () => {
  const sel = document.getSelection();
  if (!sel || !sel.anchorNode || !ui.target.contains(sel.anchorNode)) return;
  const el = sel.anchorNode.nodeType === 1 ? sel.anchorNode : sel.anchorNode.parentElement;
  const s = el && el.closest('.sent');
  if (s) highlight(s.dataset.i);
});
new ResizeObserver(fitBackdrop).observe(ui.source);

ui.translate.addEventListener('click', () => { state.saveOnDone = true; translate(true); });
ui.clear.addEventListener('click', () => {
  const old = ui.source.value;
  ui.source.value = '';
  edited();
  translate(true);
  if (old) {
    state.cleared = old;
    setStatus('Cleared.', false);
    setAction('Undo', () => {
      ui.source.value = state.cleared;
      state.cleared = null;
      edited();
      translate(true);
    });
  }
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
  if (state.pending) savePending();
  flashStatus('Copied to the clipboard.');
});
ui.sourceLang.addEventListener('change', () => {
  state.detected = '';
  fillTargets(ui.targetLang.value);
  showDirection();
  translate(true);
});
ui.targetLang.addEventListener('change', () => { showDirection(); translate(true); });
ui.swap.addEventListener('click', swap);
ui.share.addEventListener('click', async () => {
  const link = `${location.origin}${location.pathname}#${hashOf(true)}`;
  try { await navigator.clipboard.writeText(link); flashStatus('Link copied: it opens this direction and text.'); } catch { flashStatus(`Share this link: ${link}`); }
});
ui.historyClear.addEventListener('click', () => { storageSet(HISTORY_KEY, null); renderHistory(); });
ui.historySearch.addEventListener('input', renderHistory);
ui.tokenOpen.addEventListener('click', () => {
  askToken(storageGet(TOKEN_KEY, '') ? 'A token is saved. Enter a new one, or leave it empty to send none.'
                                      : 'Enter the API token this server expects (empty: none).');
});
ui.tokenCancel.addEventListener('click', () => ui.tokenDialog.close('cancel'));
ui.tokenForm.addEventListener('submit', () => {
  storageSet(TOKEN_KEY, ui.tokenInput.value.trim() || null);
  setTimeout(() => translate(true), 0);
});

renderHistory();
ui.source.value = storageGet(DRAFT_KEY, '');
renderBackdrop();
Promise.all([loadLimits(), loadLanguages()]).then(() => { if (ui.source.value.trim()) translate(true); });
