// history.js - recent translations, kept in this browser (localStorage): each entry
// with its direction, shown with the right language and direction on each side.
import { $, KEYS, storageGet, storageSet, dirOf } from './common.js';
import { t, langName, onLangChange } from './i18n.js';

const ui = { list: $('history'), clear: $('history-clear'), search: $('history-search') };
const HISTORY_MAX = 50;
let pick = () => {};

function load() {
  try { const h = JSON.parse(storageGet(KEYS.history, '[]')); return Array.isArray(h) ? h : []; } catch { return []; }
}

// Entries whose text is a prefix of the new one (or the other way) fold into it.
export function remember(r) {
  const items = load().filter((h) => !(r.source.startsWith(h.source) || h.source.startsWith(r.source)));
  items.unshift({ source: r.source, translation: r.translation, spans: r.spans, sl: r.sl, tl: r.tl, from: r.from || '', at: Date.now() });
  storageSet(KEYS.history, JSON.stringify(items.slice(0, HISTORY_MAX)));
  render();
}

function forget(at) {
  storageSet(KEYS.history, JSON.stringify(load().filter((h) => h.at !== at)));
  render();
}

// The languages of an entry: its source as chosen or detected, its target. Entries
// saved before the direction was stored say nothing ('').
function languages(h) {
  const from = h.sl && h.sl !== 'auto' ? h.sl : h.from || '';
  return [from, h.tl || ''];
}

function side(cls, text, lang) {
  const s = document.createElement('span');
  s.className = cls;
  s.textContent = text;
  s.lang = lang;
  s.dir = lang ? dirOf(lang) : 'auto';
  return s;
}

function entry(h) {
  const [from, to] = languages(h);
  const li = document.createElement('li');
  const b = document.createElement('button');
  b.type = 'button';
  b.className = 'item';
  b.title = t('history.show');
  const dir = document.createElement('span');
  dir.className = 'way';
  dir.textContent = t('history.direction', { from: from ? langName(from) : '?', to: to ? langName(to) : '?' });
  b.append(dir, side('src', h.source, from), side('tgt', h.translation, to));
  b.addEventListener('click', () => pick(h));
  const del = document.createElement('button');
  del.type = 'button';
  del.className = 'del';
  del.textContent = '×';
  del.setAttribute('aria-label', t('history.delete', { text: Array.from(h.source).slice(0, 20).join('') }));
  del.addEventListener('click', () => forget(h.at));
  li.append(b, del);
  return li;
}

function render() {
  const all = load();
  const q = ui.search.value.trim().toLowerCase();
  const items = q ? all.filter((h) => `${h.source}\n${h.translation}`.toLowerCase().includes(q)) : all;
  ui.list.replaceChildren(...items.map(entry));
  ui.clear.disabled = all.length === 0;
}

// onPick(entry): the user chose an entry to show again.
export function initHistory(onPick) {
  pick = onPick;
  ui.clear.addEventListener('click', () => { storageSet(KEYS.history, null); render(); });
  ui.search.addEventListener('input', render);
  onLangChange(render);
  render();
}
