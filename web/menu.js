// menu.js - the header every page shares: the menu (secondary links, the API token,
// the interface language; folded behind one button on a phone) and the token dialog.
import { $, KEYS, storageSet, token, server } from './common.js';
import { t, uiLang, setUiLang, onLangChange } from './i18n.js';

const ui = {
  button: $('menu-button'), list: $('menu-list'), tokenOpen: $('token-open'), lang: $('ui-lang'),
  dialog: $('token-dialog'), form: $('token-form'), title: $('token-title'), reason: $('token-reason'),
  input: $('token-input'), cancel: $('token-cancel'),
};

const tokenListeners = [];
let asked = null;  // why the dialog is open: 'needed', 'rejected' or 'change'

// Calls fn after the user saved a token (or cleared it).
export function onToken(fn) { tokenListeners.push(fn); }

// Opens the token dialog. why: 'needed' (a request got 401), 'rejected' (403), 'change'
// (the user opened it from the menu).
export function askToken(why) {
  if (ui.dialog.open) return;
  asked = why;
  relabelDialog();
  ui.input.value = '';
  ui.dialog.showModal();
}

function relabelDialog() {
  if (!asked) return;
  const saved = Boolean(token());
  ui.title.textContent = t(asked === 'needed' ? 'token.needed' : asked === 'rejected' ? 'token.rejected' : 'token.title');
  ui.reason.textContent = t(asked === 'needed' ? 'token.needed.why' : asked === 'rejected' ? 'token.rejected.why'
    : saved ? 'token.saved.why' : server.authRequired ? 'token.required.why' : 'token.optional.why');
}

function openMenu(open) {
  ui.button.setAttribute('aria-expanded', open ? 'true' : 'false');
  ui.list.classList.toggle('open', open);
}

export function initMenu() {
  ui.button.addEventListener('click', () => openMenu(ui.button.getAttribute('aria-expanded') !== 'true'));
  document.addEventListener('keydown', (e) => {
    if (e.key === 'Escape' && ui.list.classList.contains('open')) { openMenu(false); ui.button.focus(); }
  });
  document.addEventListener('click', (e) => {
    if (ui.list.classList.contains('open') && !ui.list.contains(e.target) && !ui.button.contains(e.target)) openMenu(false);
  });
  ui.tokenOpen.addEventListener('click', () => { openMenu(false); askToken('change'); });
  ui.cancel.addEventListener('click', () => ui.dialog.close('cancel'));
  ui.dialog.addEventListener('close', () => { asked = null; });
  ui.form.addEventListener('submit', () => {
    storageSet(KEYS.token, ui.input.value.trim() || null);
    setTimeout(() => { for (const fn of tokenListeners) fn(); }, 0);
  });
  ui.lang.value = uiLang();
  ui.lang.addEventListener('change', () => setUiLang(ui.lang.value));
  onLangChange(() => { ui.lang.value = uiLang(); relabelDialog(); });
}
