// app.js - the translator page (index.html): starts its panels. No dependencies, no
// inline code (the page is served with a strict CSP), no other hosts.
//
// Each panel is one module with an init function; they meet here:
//   menu.js        header menu, API token dialog, interface language
//   translator.js  the two text panes (direction, live translation, alternatives)
//   documents.js   the Documents panel
//   glossary.js    the Glossary panel (stored glossaries, one picked per direction)
//   history.js     recent translations
// A new panel is one more module and one more line below; its words go into i18n.js,
// its element into index.html.
import { loadServer } from './common.js';
import { applyStrings } from './i18n.js';
import { initMenu } from './menu.js';
import { initTranslator, showSaved } from './translator.js';
import { initDocuments } from './documents.js';
import { initGlossary, glossaryFor, glossaryDirection } from './glossary.js';
import { initHistory, remember } from './history.js';

applyStrings();
initMenu();
initHistory(showSaved);
initDocuments();
initGlossary();
loadServer().then(() => initTranslator({ save: remember, direction: glossaryDirection, glossary: glossaryFor }));
