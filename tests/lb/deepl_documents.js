// deepl_documents.js URL DIR PHASE - deepl-node (unchanged) against URL,
// for test_jobs_replicas.py: PHASE "formats": translateDocument of
// DIR/doc.{txt,docx,pdf} into DIR/lb.<format>; PHASE "calls": the three
// calls one by one for DIR/big.txt (upload, a status poll every 50 ms until
// done, download into DIR/lb-big.txt). Prints one JSON line of what it saw.
'use strict';

const deepl = require('deepl-node');
const path = require('node:path');
const { translateDocumentTo } = require('../clients/deepl_files');

const [url, dir, phase] = process.argv.slice(2);
const t = new deepl.Translator('lb-key', { serverUrl: url, maxRetries: 0, minTimeout: 600000 });
const sleep = (ms) => new Promise((r) => { setTimeout(r, ms); });

async function formats() {
  const out = {};
  // At once: deepl-node waits 5 s between polls of a document not done yet.
  await Promise.all(['txt', 'docx', 'pdf'].map(async (f) => {
    const st = await translateDocumentTo(t, path.join(dir, `doc.${f}`), path.join(dir, `lb.${f}`),
      null, 'en-US');
    out[f] = { status: st.status, billed: st.billedCharacters };
  }));
  return out;
}

async function calls() {
  const h = await t.uploadDocument(path.join(dir, 'big.txt'), 'zh', 'en-US');
  let st = await t.getDocumentStatus(h);
  const seen = [st.status];
  while (st.ok() && !st.done()) {
    await sleep(50);
    st = await t.getDocumentStatus(h);
    seen.push(st.status);
  }
  await t.downloadDocument(h, path.join(dir, 'lb-big.txt'));
  return { id: h.documentId, polls: seen.length, statuses: [...new Set(seen)], last: st.status,
    billed: st.billedCharacters };
}

(phase === 'formats' ? formats() : calls()).then((r) => {
  console.log(JSON.stringify(r));
}).catch((e) => {
  console.error(`${e.message} ${e.error ? e.error.message : ''}`);
  process.exit(1);
});
