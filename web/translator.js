// translator.js - the two text panes: the direction, live translation over
// POST /translate/stream (server-sent events), the sentence marks, alternatives.
//
// Cost is linear in the text: a stream appends one span per sentence (nothing
// already shown is rebuilt), the source's marks are drawn once per translation,
// and an edit touches nothing that grows with the text (no mark layer to
// rebuild, no history of highlighted nodes to search, the draft saved after a pause).
import {
  $, KEYS, storageGet, storageSet, storageJson, countChars, coarse, ServerError, headers,
  errorText, readEvents, server, targetsOf, dirOf,
} from './common.js';
import { t, langName, onLangChange } from './i18n.js';
import { askToken, onToken } from './menu.js';

const ui = {
  source: $('source'), backdrop: $('backdrop'), target: $('target'), counter: $('counter'),
  status: $('status'), action: $('action'), progress: $('progress'), translate: $('translate'),
  clear: $('clear'), copy: $('copy'), share: $('share'), sourceLang: $('source-lang'),
  targetLang: $('target-lang'), swap: $('swap'), sourceLabel: $('source-label'),
  targetLabel: $('target-label'), altsHint: $('alts-hint'), alts: $('alts'), unsure: $('unsure-note'),
  altsTitle: $('alts-title'), altsList: $('alts-list'), altsClose: $('alts-close'),
};

const DEBOUNCE_MS = 300;
const SAVE_PAUSE_MS = 2000;   // a translation shown this long without an edit goes into history
const DRAFT_PAUSE_MS = 500;   // the draft is stored after this pause in typing
const HEALTH_POLL_MS = 2000;  // while the server is unreachable
const RETRY_CAP_S = 30;       // longest wait between busy retries
const RECENT_MAX = 6;         // targets the user chose, newest first (for the automatic switch)
const ALTERNATIVES = 3;       // asked per sentence: needs the server's --max-beam at least 4 (its default)
// A sentence whose margin (ln p1/p2 at the model's least certain step, docs/api.md
// "Confidence") is below this is marked as unsure: somewhere the model preferred its
// word less than 1.65 : 1 over the runner-up.
const UNSURE_MARGIN = 0.5;

const state = {
  controller: null,     // AbortController of the request in flight
  seq: 0,               // id of the newest request; older answers are ignored
  timer: 0,             // debounce timer
  draftTimer: 0,
  composing: false,     // an input method is composing: its text is not final yet
  shown: null,          // {source, translation, spans} of the output; spans [{i, src:[a,b], tr:[a,b]}]
  marked: false,        // the mark layer holds the shown translation's source marks
  lit: [],              // elements highlighted now
  pending: null,        // the shown translation, not yet in history
  saveTimer: 0,
  saveOnDone: false,    // Ctrl+Enter: the user means this text
  retry: { attempt: 0, timer: 0, tick: 0 },
  offline: false,       // the last request could not reach the server
  healthTimer: 0,
  status: null,         // {key, vars, error}: re-rendered when the interface language changes
  actionMsg: null,      // {key, vars, run}
  flash: 0,
  cleared: null,        // text removed by Clear, for Undo
  syncEcho: null,       // {el, top}: the scroll our sync caused, whose event is not the user's
  detected: '',         // the source language the server found for "Detect"
  switched: null,       // {from, to}: the target was switched for this text (Detect found the target)
  glossaryText: null,   // the text translated again with the glossary of its detected direction
  altSeq: 0,            // id of the newest alternatives request
  altFor: null,         // the sentence element whose alternatives are shown
};

const hooks = { result: () => {}, save: () => {}, direction: () => {}, glossary: () => '' };

// ---- status and its one action ------------------------------------------------

function setStatus(key, vars, error) {
  clearTimeout(state.flash);
  state.status = key ? { key, vars, error: Boolean(error) } : null;
  renderStatus();
  setAction(null);
}

function renderStatus() {
  const s = state.status;
  ui.status.textContent = s ? t(s.key, s.vars) : '';
  ui.status.classList.toggle('error', Boolean(s && s.error));
}

// A note for a moment (e.g. "Copied"), then the status as it was.
function flashStatus(key, vars) {
  clearTimeout(state.flash);
  ui.status.textContent = t(key, vars);
  ui.status.classList.remove('error');
  state.flash = setTimeout(renderStatus, 2000);
}

function setAction(key, vars, run) {
  state.actionMsg = key ? { key, vars, run } : null;
  ui.action.hidden = !key;
  ui.action.textContent = key ? t(key, vars) : '';
  ui.action.onclick = key ? run : null;
}

function setBusy(busy) {
  ui.progress.hidden = !busy;
  ui.target.setAttribute('aria-busy', busy ? 'true' : 'false');
}

function isStale() { return ui.target.classList.contains('stale'); }
function markStale(stale) { ui.target.classList.toggle('stale', stale); }

// ---- direction -------------------------------------------------------------------

function option(value, label) {
  const o = document.createElement('option');
  o.value = value;
  o.textContent = label;
  return o;
}

function fillSources() {
  const keep = ui.sourceLang.value || 'auto';
  ui.sourceLang.textContent = '';
  ui.sourceLang.append(option('auto', t('dir.detect')));
  for (const l of server.langs) ui.sourceLang.append(option(l.code, langName(l.code, l.name)));
  ui.sourceLang.value = [...ui.sourceLang.options].some((o) => o.value === keep) ? keep : 'auto';
}

function fillTargets(want) {
  const targets = targetsOf(ui.sourceLang.value);
  ui.targetLang.textContent = '';
  for (const c of targets) ui.targetLang.append(option(c, langName(c)));
  ui.targetLang.value = targets.includes(want) ? want : (targets.includes('en') ? 'en' : targets[0] || '');
}

function setDirection(source, target) {
  ui.sourceLang.value = [...ui.sourceLang.options].some((o) => o.value === source) ? source : 'auto';
  fillTargets(target);
  showDirection();
}

// The languages the user chose as targets, newest first.
function rememberTarget(code) {
  if (!code) return;
  const list = storageJson(KEYS.targets, []);
  storageSet(KEYS.targets, JSON.stringify([code, ...(Array.isArray(list) ? list : []).filter((c) => c !== code)].slice(0, RECENT_MAX)));
}

// The target for text in lang when lang is the target itself: the user's last other
// target that lang can go to, else zh⇄en, else lang's first target. '' if none.
export function otherTarget(lang) {
  const can = targetsOf(lang);
  const recent = storageJson(KEYS.targets, []);
  for (const c of Array.isArray(recent) ? recent : []) if (c !== lang && can.includes(c)) return c;
  const base = lang.split('-')[0];
  const pair = base === 'zh' ? 'en' : base === 'en' ? 'zh' : 'en';
  if (can.includes(pair)) return pair;
  return can.find((c) => c !== lang) || '';
}

// Labels, languages and directions of the fields, the swap button and the URL follow the direction.
function showDirection() {
  const src = ui.sourceLang.value, tgt = ui.targetLang.value;
  const from = src === 'auto' ? state.detected : src;
  ui.sourceLang.options[0].textContent = state.detected && src === 'auto' ? t('dir.detected', { lang: state.detected }) : t('dir.detect');
  ui.sourceLabel.textContent = src === 'auto' ? (state.detected ? t('pane.detected', { lang: state.detected }) : t('pane.text')) : langName(src);
  ui.targetLabel.textContent = tgt ? langName(tgt) : t('pane.translation');
  ui.source.lang = from || '';
  ui.source.dir = ui.backdrop.dir = from ? dirOf(from) : 'auto';
  ui.target.lang = tgt || '';
  ui.target.dir = tgt ? dirOf(tgt) : 'auto';
  ui.target.setAttribute('aria-label', t('pane.output', { lang: tgt ? langName(tgt) : t('pane.translation') }));
  ui.source.placeholder = t(coarse ? 'pane.placeholder.touch' : 'pane.placeholder');
  const back = from && targetsOf(tgt).includes(from);
  ui.swap.disabled = !back;
  ui.swap.title = back ? t('swap.title') : t('swap.none', { from: langName(tgt), to: from ? langName(from) : t('swap.detected') });
  ui.swap.setAttribute('aria-label', t('swap.title'));
  document.title = `Fanyi · ${from ? langName(from) : t('dir.detect')} → ${tgt ? langName(tgt) : '…'}`;
  history.replaceState(null, '', `#${hashOf(false)}`);
  hooks.direction(from || '', tgt || '');
}

// The stored glossary picked for the direction (the source chosen, else the one last
// detected), as the request's fields.
function glossaryField(sl, tl) {
  const id = tl ? hooks.glossary(sl === 'auto' ? state.detected : sl, tl) : '';
  return id ? { glossary_id: id } : {};
}

function hashOf(withText) {
  const h = new URLSearchParams({ sl: ui.sourceLang.value, tl: ui.targetLang.value });
  if (withText) h.set('text', ui.source.value);
  return h.toString();
}

function swap() {
  const from = ui.sourceLang.value === 'auto' ? state.detected : ui.sourceLang.value;
  const to = ui.targetLang.value;
  if (!from || !targetsOf(to).includes(from)) return;
  const s = state.shown;
  const translation = s && s.source === ui.source.value && !isStale() ? s.translation : null;
  setDirection(to, from);
  rememberTarget(from);
  if (translation !== null) {
    ui.source.value = translation;
    edited();
  }
  translate(true);
}

// ---- the counter -----------------------------------------------------------------

function tooLong(text) { return server.maxChars > 0 && countChars(text) > server.maxChars; }

function updateCounter() {
  const n = countChars(ui.source.value);
  const max = server.maxChars;
  ui.counter.classList.remove('warn', 'over');
  if (!max) { ui.counter.textContent = t('counter.count', { n }); return; }
  let key = 'counter.of';
  if (n > max) { ui.counter.classList.add('over'); key = 'counter.over'; } else if (n >= max * 0.9) { ui.counter.classList.add('warn'); key = 'counter.near'; }
  ui.counter.textContent = t(key, { n: n.toLocaleString(), max: max.toLocaleString() });
}

// ---- requests --------------------------------------------------------------------

function scheduleTranslate() {
  clearTimeout(state.timer);
  state.timer = setTimeout(() => translate(false), DEBOUNCE_MS);
}

function stopRetry() {
  clearTimeout(state.retry.timer);
  clearInterval(state.retry.tick);
}

// Translates the text (default: the whole input). force: even if it is what is shown.
export async function translate(force, only) {
  clearTimeout(state.timer);
  stopRetry();
  if (state.composing) return;
  const text = only === undefined ? ui.source.value : only;
  if (!force && state.shown && text === state.shown.source && !isStale()) return;
  if (state.controller) state.controller.abort();
  state.controller = null;
  const seq = ++state.seq;
  if (!text.trim()) {
    showResult({ source: text, translation: '', spans: [] });
    setStatus(null);
    setBusy(false);
    return;
  }
  if (tooLong(text)) { refuseTooLong(text); return; }
  const controller = new AbortController();
  state.controller = controller;
  setBusy(true);
  setStatus('status.translating');
  const started = performance.now();
  const sl = ui.sourceLang.value, tl = ui.targetLang.value;
  const gl = glossaryField(sl, tl);
  const got = { source: text, translation: '', spans: [], drawn: false, glossary: gl.glossary_id || '' };  // what has arrived
  try {
    const resp = await fetch('/translate/stream', {
      method: 'POST', headers: headers(), signal: controller.signal,
      body: JSON.stringify({ text, spans: true, scores: true, source: sl, ...(tl ? { target: tl } : {}), ...gl }),
    });
    if (!resp.ok) { await showHttpError(resp, seq); return; }
    let done = null;
    await readEvents(resp, (event, data) => {
      if (seq !== state.seq) return;
      if (event === 'done') { done = data; return; }
      if (event === 'error') throw new ServerError(data.error ? data.error.message : 'translation failed');
      appendSentence(got, data);
    });
    if (seq !== state.seq) return;
    if (done === null) throw new ServerError('the server closed the stream early');
    state.detected = typeof done.source === 'string' ? done.source : '';
    state.offline = false;
    state.retry.attempt = 0;
    if (switchTarget(sl, done, got, only) || glossaryAgain(sl, done, got)) return;
    const result = finishStream(got, done, sl, tl);
    showDirection();
    reportDone(result, done, Math.round(performance.now() - started), only);
    offerSave(result);
  } catch (e) {
    if (e.name === 'AbortError' || seq !== state.seq) return;
    failed(e, got);
  } finally {
    if (seq === state.seq) { setBusy(false); state.controller = null; }
  }
}

// "Detect" found the target language itself: the target becomes another language
// (otherTarget) and the text is translated again, once per text.
function switchTarget(sl, done, got, only) {
  if (sl !== 'auto' || got.spans.length || !done.source || done.source !== done.target || only !== undefined) return false;
  if (state.switched && state.switched.text === got.source) return false;
  const to = otherTarget(done.source);
  if (!to) return false;
  state.switched = { text: got.source, from: done.source, to };
  fillTargets(to);
  showDirection();
  setTimeout(() => translate(true), 0);
  return true;
}

// "Detect" found a direction whose picked glossary is not the one sent: the text is
// translated again with it, once per text.
function glossaryAgain(sl, done, got) {
  if (sl !== 'auto' || typeof done.source !== 'string' || !done.source || state.glossaryText === got.source) return false;
  if (hooks.glossary(done.source, done.target) === got.glossary) return false;
  state.glossaryText = got.source;
  showDirection();
  setTimeout(() => translate(true), 0);
  return true;
}

function reportDone(result, done, ms, only) {
  const n = result.spans.length;
  const sw = state.switched && state.switched.text === result.source ? state.switched : null;
  let [key, vars] = !n ? passThrough(done) : sw ? ['status.switched', { n, ms, from: sw.from, to: sw.to }] : ['status.done', { n, ms }];
  if (only !== undefined) [key, vars] = ['status.firstN', { before: { key, vars }, n: countChars(result.source).toLocaleString() }];
  setStatus(key, vars);
}

function failed(e, got) {
  if (got.spans.length) {
    finishPartial(got);
    const why = e instanceof ServerError ? e.message : t('status.connectionLost');
    setStatus('status.stopped', { n: got.spans.length, why }, true);
  } else if (e instanceof ServerError) {
    markStale(true);
    setStatus('status.failed', { why: e.message }, true);
  } else {
    markStale(true);
    setStatus('status.offline', null, true);
  }
  if (!(e instanceof ServerError)) waitForServer();
}

function passThrough(done) {
  const src = Array.isArray(done.source) ? done.source[0] : done.source;
  const tgt = Array.isArray(done.target) ? done.target[0] : done.target;
  if (!src) return ['status.nothing'];
  return ['status.already', { lang: src, target: tgt }];
}

function refuseTooLong(text) {
  markStale(Boolean(state.shown && state.shown.translation));
  const max = server.maxChars;
  setStatus('status.tooLong', { n: countChars(text).toLocaleString(), max: max.toLocaleString() }, true);
  setAction('action.firstN', { max: max.toLocaleString() }, () => translate(true, Array.from(text).slice(0, max).join('')));
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

async function showHttpError(resp, seq) {
  const message = await errorText(resp);
  if (seq !== state.seq) return;
  markStale(Boolean(state.shown && state.shown.translation));
  const s = resp.status;
  if (s === 401 || s === 403) {
    setStatus(s === 401 ? 'status.tokenNeeded' : 'status.tokenRejected', null, true);
    askToken(s === 401 ? 'needed' : 'rejected');
  } else if (s === 413) {
    setStatus('status.serverTooLong', { why: message }, true);
  } else if (s === 429 || s === 503) {
    retryBusy(parseInt(resp.headers.get('Retry-After') || '1', 10) || 1);
  } else if (s === 504) {
    setStatus('status.timeout', null, true);
  } else {
    setStatus('status.httpFailed', { status: s, why: message }, true);
  }
}

// Busy: waits the longer of Retry-After and 1, 2, 4… s (capped), counting down.
function retryBusy(retryAfter) {
  const wait = Math.min(RETRY_CAP_S, Math.max(retryAfter, 2 ** state.retry.attempt));
  state.retry.attempt++;
  let left = wait;
  const say = () => {
    setStatus('status.busy', { s: left }, true);
    setAction('action.retry', null, () => translate(true));
  };
  say();
  stopRetry();
  state.retry.tick = setInterval(() => { if (left > 1) { left--; say(); } }, 1000);
  state.retry.timer = setTimeout(() => translate(true), wait * 1000);
}

// ---- rendering -------------------------------------------------------------------

function isUnsure(p) { return !p.picked && typeof p.margin === 'number' && p.margin < UNSURE_MARGIN; }
function marginOf(score) { return score && typeof score.margin === 'number' ? score.margin : null; }

function sentenceElement(p, text, first) {
  const el = document.createElement('span');
  el.className = p.picked ? 'sent picked' : 'sent';
  if (isUnsure(p)) {
    el.classList.add('unsure');
    el.setAttribute('aria-describedby', 'unsure-note');
  }
  el.dataset.i = p.i;
  el.setAttribute('role', 'button');
  el.tabIndex = first ? 0 : -1;
  el.textContent = text;
  return el;
}

// The output for a whole result, built off the page and put in at once.
function renderOutput(r) {
  const f = document.createDocumentFragment();
  let pos = 0, first = true;
  for (const p of r.spans) {
    const [start, len] = p.tr;
    if (start < pos || start + len > r.translation.length) continue;
    if (start > pos) f.append(r.translation.slice(pos, start));
    f.append(sentenceElement(p, r.translation.slice(start, start + len), first));
    first = false;
    pos = start + len;
  }
  f.append(r.translation.slice(pos));
  ui.target.replaceChildren(f);
}

// The output is about to show r: no highlight, no alternatives, not stale.
function resetOutput(r) {
  highlight(null);
  closeAlternatives(false);
  clearMarks();
  state.shown = r;
  markStale(false);
}

export function showResult(r) {
  resetOutput({ source: r.source, translation: r.translation, spans: r.spans.slice() });
  renderOutput(state.shown);
  drawMarks();
  showUnsure();
  ui.copy.disabled = !r.translation;
}

// The note that explains the unsure marks, with their count; hidden when there are none.
function showUnsure() {
  const n = state.shown ? state.shown.spans.filter(isUnsure).length : 0;
  ui.unsure.hidden = !n;
  ui.unsure.textContent = n ? t(coarse ? 'conf.note.touch' : 'conf.note', { n }) : '';
}

// One sentence event: the first replaces what was shown, each adds its own nodes.
function appendSentence(got, data) {
  const before = data.before || '';
  const start = got.translation.length + before.length;
  got.translation += before + data.translation;
  const p = { i: data.sentence, src: data.source_span, tr: [start, data.translation.length], margin: marginOf(data.score) };
  got.spans.push(p);
  if (!got.drawn) {
    resetOutput(got);
    ui.target.textContent = '';
    ui.unsure.hidden = true;
    ui.copy.disabled = true;
    got.drawn = true;
  }
  if (before) ui.target.append(before);
  ui.target.append(sentenceElement(p, data.translation, got.spans.length === 1));
}

// The done event: its spans are the truth. What was streamed stays on the page when it
// is the same text; only a tail after the last sentence is added.
function finishStream(got, done, sl, tl) {
  const scores = Array.isArray(done.scores) ? done.scores : [];
  const spans = (done.sentences || []).map((s, i) => ({ i, src: s.source, tr: s.translation, margin: marginOf(scores[i]) }));
  const result = { source: got.source, translation: done.translation, spans, sl, tl, from: state.detected };
  const same = got.drawn && spans.length === got.spans.length && done.translation.startsWith(got.translation);
  if (same) {
    if (done.translation.length > got.translation.length) ui.target.append(done.translation.slice(got.translation.length));
    state.shown = { source: got.source, translation: done.translation, spans };
    clearMarks();
    drawMarks();
  } else {
    resetOutput({ source: got.source, translation: done.translation, spans });
    renderOutput(state.shown);
    drawMarks();
  }
  showUnsure();
  ui.copy.disabled = !done.translation;
  hooks.result(result);
  return result;
}

// A stream cut short: what arrived stays, as it is.
function finishPartial(got) {
  state.shown = { source: got.source, translation: got.translation, spans: got.spans };
  ui.copy.disabled = !got.translation;
  drawMarks();
  showUnsure();
}

// The marks behind the textarea, only while the input is the text the output belongs to
// (or starts with it: the first N characters were translated). An edit clears them
// (clearMarks, once); they come back with the next translation.
function drawMarks() {
  const text = ui.source.value;
  const s = state.shown;
  if (!s || !s.spans.length || !text.startsWith(s.source) || isStale()) return;
  const f = document.createDocumentFragment();
  let pos = 0;
  for (const p of s.spans) {
    const [start, len] = p.src;
    if (start < pos || start + len > text.length) continue;
    if (start > pos) f.append(text.slice(pos, start));
    const m = document.createElement('mark');
    m.className = 'src';
    m.dataset.i = p.i;
    m.textContent = text.slice(start, start + len);
    f.append(m);
    pos = start + len;
  }
  f.append(text.slice(pos), '\u200b');  // a trailing newline needs a character after it, as in the textarea
  ui.backdrop.replaceChildren(f);
  state.marked = true;
  fitBackdrop();
}

function clearMarks() {
  if (!state.marked) return;
  ui.backdrop.textContent = '';
  state.marked = false;
}

// The mark layer takes the textarea's client box: without its scrollbar, lines wrap alike.
function fitBackdrop() {
  if (!state.marked) return;
  ui.backdrop.style.width = `${ui.source.clientWidth}px`;
  ui.backdrop.style.height = `${ui.source.clientHeight}px`;
  ui.backdrop.scrollTop = ui.source.scrollTop;
}

function highlight(index) {
  for (const el of state.lit) el.classList.remove('hl');
  state.lit = [];
  if (index === null || index === undefined) return;
  const sel = `[data-i="${index}"]`;
  for (const el of [ui.target.querySelector(sel), state.marked && ui.backdrop.querySelector(sel)]) {
    if (el) { el.classList.add('hl'); state.lit.push(el); }
  }
}

// The source sentence under a point: the mark layer ignores the pointer, so test its marks' boxes.
function markAt(x, y) {
  if (!state.marked) return null;
  for (const m of ui.backdrop.querySelectorAll('mark[data-i]'))
    for (const r of m.getClientRects())
      if (x >= r.left && x <= r.right && y >= r.top && y <= r.bottom) return m.dataset.i;
  return null;
}

function sentenceAtSourceOffset(offset) {
  const s = state.shown;
  if (!state.marked || !s) return null;
  for (const p of s.spans) if (offset >= p.src[0] && offset <= p.src[0] + p.src[1]) return p.i;
  return null;
}

// Keeps the two panes at the same relative place (side by side only). The
// scroll event of a position this set is skipped only while the pane is still
// there: the user may scroll it again before that event (one event a frame).
function syncScroll(from, to) {
  const echo = state.syncEcho;
  state.syncEcho = null;
  if (echo && echo.el === from && Math.abs(from.scrollTop - echo.top) <= 1) return;
  const range = from.scrollHeight - from.clientHeight;
  const want = Math.round((range > 0 ? from.scrollTop / range : 0) * (to.scrollHeight - to.clientHeight));
  if (Math.abs(to.scrollTop - want) > 1) {
    to.scrollTop = want;
    state.syncEcho = { el: to, top: to.scrollTop };
  }
}

// ---- alternatives ----------------------------------------------------------------

// The list opens just below its sentence, over the output, and follows it when the output scrolls.
function placeAlternatives() {
  const el = state.altFor;
  if (!el || ui.alts.hidden) return;
  const pane = ui.alts.offsetParent || ui.alts.parentElement;
  const pr = pane.getBoundingClientRect(), out = ui.target.getBoundingClientRect();
  const rects = el.getClientRects();
  const r = rects.length ? rects[rects.length - 1] : el.getBoundingClientRect();
  if (r.bottom < out.top || r.top > out.bottom) { closeAlternatives(false); return; }
  ui.alts.style.top = `${Math.round(Math.min(r.bottom, out.bottom) - pr.top + 4)}px`;
}

// A shown sentence's n-best: its source sentence alone, decoded with a beam.
async function showAlternatives(el) {
  const s = state.shown;
  const span = s && s.spans.find((p) => String(p.i) === el.dataset.i);
  if (!span || state.controller || isStale()) return;
  const seq = ++state.altSeq;
  state.altFor = el;
  const current = s.translation.substr(span.tr[0], span.tr[1]);
  ui.alts.hidden = false;
  ui.alts.lang = ui.target.lang;
  ui.alts.dir = ui.target.dir;
  ui.altsTitle.textContent = t('alts.finding');
  ui.altsList.textContent = '';
  placeAlternatives();
  const from = ui.sourceLang.value === 'auto' ? state.detected || 'auto' : ui.sourceLang.value;
  let answer;
  try {
    const resp = await fetch('/translate', {
      method: 'POST', headers: headers('application/json', 'application/json'),
      body: JSON.stringify({ text: s.source.substr(span.src[0], span.src[1]), alternatives: ALTERNATIVES,
        source: from, ...(ui.targetLang.value ? { target: ui.targetLang.value } : {}), ...glossaryField(from, ui.targetLang.value) }),
    });
    answer = await resp.json().catch(() => ({}));
    if (!resp.ok) throw new ServerError((answer.error && answer.error.message) || `status ${resp.status}`);
  } catch (e) {
    if (seq !== state.altSeq) return;
    ui.altsTitle.textContent = t('alts.none', { why: e instanceof ServerError ? e.message : t('alts.unreachable') });
    return;
  }
  if (seq !== state.altSeq || state.shown !== s) return;
  const options = [...new Set([answer.translation, ...(answer.alternatives || [])])].filter((x) => x && x !== current);
  ui.altsTitle.textContent = options.length ? t('alts.for', { sentence: current }) : t('alts.empty');
  for (const x of options) {
    const li = document.createElement('li');
    const b = document.createElement('button');
    b.type = 'button';
    b.textContent = x;
    b.addEventListener('click', () => pickAlternative(span.i, x));
    li.append(b);
    ui.altsList.append(li);
  }
  placeAlternatives();
  const first = ui.altsList.querySelector('button');
  if (first) first.focus();
}

function closeAlternatives(refocus) {
  ++state.altSeq;
  const was = state.altFor;
  state.altFor = null;
  if (ui.alts.hidden) return;
  ui.alts.hidden = true;
  ui.altsList.textContent = '';
  if (refocus && was && was.isConnected) was.focus();
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
    spans, sl: ui.sourceLang.value, tl: ui.targetLang.value, from: state.detected };
  showResult(result);
  const el = ui.target.querySelector(`.sent[data-i="${i}"]`);
  if (el) { rove(el); el.focus(); }
  clearTimeout(state.saveTimer);
  state.pending = null;
  hooks.save(result);
  setStatus('status.picked');
}

// One sentence is in the tab order; arrows move between them.
function rove(el) {
  const was = ui.target.querySelector('.sent[tabindex="0"]');
  if (was && was !== el) was.tabIndex = -1;
  el.tabIndex = 0;
}

// ---- history hand-over -------------------------------------------------------------

// A translation is saved when the user shows they mean it: a pause, leaving the
// field, copying, Ctrl+Enter. Not every prefix typed on the way.
function offerSave(result) {
  clearTimeout(state.saveTimer);
  state.pending = result.translation ? result : null;
  if (!state.pending) return;
  if (state.saveOnDone) { savePending(); return; }
  state.saveTimer = setTimeout(savePending, SAVE_PAUSE_MS);
}

// Translate or Ctrl+Enter: the user means this text. Shown already, current and in this
// direction: saved now; else translated (again) and saved when done.
function translateMeant() {
  state.saveOnDone = true;
  const p = state.pending;
  if (p && p.source === ui.source.value && p.sl === ui.sourceLang.value && p.tl === ui.targetLang.value && !isStale()) savePending();
  else translate(true);
}

function savePending() {
  clearTimeout(state.saveTimer);
  state.saveOnDone = false;
  const p = state.pending;
  state.pending = null;
  if (p) hooks.save(p);
}

// Shows a saved translation as it was stored: no request, so it works offline.
export function showSaved(h) {
  stopRetry();
  ++state.seq;
  if (state.controller) state.controller.abort();
  if (h.sl && h.tl) setDirection(h.sl, h.tl);
  ui.source.value = h.source;
  storageSet(KEYS.draft, h.source);
  updateCounter();
  showResult({ source: h.source, translation: h.translation, spans: Array.isArray(h.spans) ? h.spans : [] });
  setStatus('status.fromHistory');
  ui.source.focus();
}

// ---- wiring ----------------------------------------------------------------------

function edited() {
  // A translation still arriving is for a text that is no more: stop it now rather
  // than keep drawing it while the user types (a big paste streams thousands of sentences).
  // What arrived of it is stale: the same text typed back is translated again, not kept half.
  if (state.controller) {
    state.controller.abort();
    state.controller = null;
    ++state.seq;
    setBusy(false);
    markStale(Boolean(state.shown && state.shown.translation));
  }
  updateCounter();
  highlight(null);
  closeAlternatives(false);
  clearMarks();
  clearTimeout(state.saveTimer);
  state.saveOnDone = false;  // Translate or Ctrl+Enter meant the text before this edit
  state.retry.attempt = 0;
  clearTimeout(state.draftTimer);
  state.draftTimer = setTimeout(() => storageSet(KEYS.draft, ui.source.value), DRAFT_PAUSE_MS);
}

function wireSource() {
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
      translateMeant();
    }
  });
  const saveDraft = () => { clearTimeout(state.draftTimer); storageSet(KEYS.draft, ui.source.value); };
  ui.source.addEventListener('blur', () => { if (state.pending) savePending(); saveDraft(); });
  window.addEventListener('pagehide', saveDraft);
  ui.source.addEventListener('scroll', () => {
    ui.backdrop.scrollTop = ui.source.scrollTop;
    syncScroll(ui.source, ui.target);
  });
  ui.source.addEventListener('mousemove', (e) => { if (state.marked) highlight(markAt(e.clientX, e.clientY)); });
  ui.source.addEventListener('mouseleave', () => highlight(null));
  for (const ev of ['select', 'keyup', 'click'])
    ui.source.addEventListener(ev, () => {
      if (state.marked && document.activeElement === ui.source) highlight(sentenceAtSourceOffset(ui.source.selectionStart));
    });
  new ResizeObserver(fitBackdrop).observe(ui.source);
}

function wireOutput() {
  ui.target.addEventListener('scroll', () => { syncScroll(ui.target, ui.source); placeAlternatives(); });
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
    const step = { ArrowRight: 1, ArrowDown: 1, ArrowLeft: -1, ArrowUp: -1 }[e.key];
    if (e.key === 'Enter' || e.key === ' ') { e.preventDefault(); showAlternatives(el); } else if (step) {
      e.preventDefault();
      let next = step > 0 ? el.nextElementSibling : el.previousElementSibling;
      while (next && !next.classList.contains('sent')) next = step > 0 ? next.nextElementSibling : next.previousElementSibling;
      if (next) { rove(next); next.focus(); }
    }
  });
  ui.target.addEventListener('focusin', (e) => { if (e.target.dataset.i !== undefined) highlight(e.target.dataset.i); });
  ui.altsClose.addEventListener('click', () => closeAlternatives(true));
  ui.alts.addEventListener('keydown', (e) => { if (e.key === 'Escape') closeAlternatives(true); });
  window.addEventListener('resize', placeAlternatives);
  document.addEventListener('selectionchange', () => {
    const sel = document.getSelection();
    if (!sel || !sel.anchorNode || !ui.target.contains(sel.anchorNode)) return;
    const el = sel.anchorNode.nodeType === 1 ? sel.anchorNode : sel.anchorNode.parentElement;
    const s = el && el.closest('.sent');
    if (s) highlight(s.dataset.i);
  });
}

async function copyOutput() {
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
  flashStatus('status.copied');
}

function clearSource() {
  const old = ui.source.value;
  ui.source.value = '';
  edited();
  translate(true);
  if (old) {
    state.cleared = old;
    setStatus('status.cleared');
    setAction('action.undo', null, () => {
      ui.source.value = state.cleared;
      state.cleared = null;
      edited();
      translate(true);
    });
  }
  ui.source.focus();
}

function wireButtons() {
  ui.translate.addEventListener('click', translateMeant);
  ui.clear.addEventListener('click', clearSource);
  ui.copy.addEventListener('click', copyOutput);
  ui.sourceLang.addEventListener('change', () => {
    state.detected = '';
    fillTargets(ui.targetLang.value);
    showDirection();
    translate(true);
  });
  ui.targetLang.addEventListener('change', () => { rememberTarget(ui.targetLang.value); showDirection(); translate(true); });
  ui.swap.addEventListener('click', swap);
  ui.share.addEventListener('click', async () => {
    const link = `${location.origin}${location.pathname}#${hashOf(true)}`;
    try { await navigator.clipboard.writeText(link); flashStatus('status.linkCopied'); } catch { flashStatus('status.shareLink', { link }); }
  });
}

// The words that depend on the interface language.
function relabel() {
  fillSources();
  fillTargets(ui.targetLang.value);
  showDirection();
  updateCounter();
  renderStatus();
  if (state.actionMsg) setAction(state.actionMsg.key, state.actionMsg.vars, state.actionMsg.run);
  ui.altsHint.textContent = t(coarse ? 'alts.hint.touch' : 'alts.hint');
  showUnsure();
  if (coarse) ui.translate.removeAttribute('title'); else ui.translate.title = 'Ctrl+Enter';
}

// Starts the panes once the server's languages are known (common.loadServer). on:
// {result(r): a translation finished, save(r): the user means this one,
// direction(from, to): the direction shown changed (from '' while not known),
// glossary(from, to): the id of the stored glossary to send for that direction, or ''}.
export function initTranslator(on) {
  Object.assign(hooks, on);
  wireSource();
  wireOutput();
  wireButtons();
  onLangChange(relabel);
  onToken(() => translate(true));
  fillSources();
  const h = new URLSearchParams(location.hash.slice(1));
  setDirection(h.get('sl') || 'auto', h.get('tl') || 'en');
  rememberTarget(ui.targetLang.value);
  relabel();
  ui.source.value = h.has('text') ? h.get('text') : storageGet(KEYS.draft, '');
  edited();
  if (ui.source.value.trim()) translate(true);
  window.addEventListener('hashchange', followLink);
}

// A link to the page (a shared one, an edited address) opened where the page is already
// open changes only the fragment: the document stays, so the page takes the link's
// direction and text itself. The page's own updates (replaceState) fire no hashchange.
function followLink() {
  const h = new URLSearchParams(location.hash.slice(1));
  if (!h.has('sl') && !h.has('tl') && !h.has('text')) return;
  const sl = h.get('sl') || ui.sourceLang.value;
  if (sl !== ui.sourceLang.value) state.detected = '';
  setDirection(sl, h.get('tl') || ui.targetLang.value);
  rememberTarget(ui.targetLang.value);
  if (h.has('text') && h.get('text') !== ui.source.value) {
    ui.source.value = h.get('text');
    edited();
  }
  translate(true);
}
