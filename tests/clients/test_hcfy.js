// test_hcfy.js - Selection Translator (划词翻译, hcfy) has no npm client: its
// custom translator ("自定义翻译源", its documentation's request and
// response) as it calls one: POST JSON {name, text, destination: [primary
// target, second target], source} to the URL in its settings
// (http://127.0.0.1:PORT/hcfy?token=KEY), read back as {text, from, to,
// result: [one string per line]}. The second target is used when the text
// is already in the first: a Chinese selection goes to English, an English
// one to Chinese, with the same settings.
'use strict';
const { run, T, ZH, EN } = require('./serve_clients2');

const DEST = ['中文(简体)', '英语'];

async function post(s, body, query = '') {
  const r = await fetch(`${s.base}/hcfy${query}`, {
    method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(body),
  });
  return [r.status, await r.json()];
}

async function translations(s) {
  // Chinese selected, no source: already in the primary target, so English.
  let [st, res] = await post(s, { name: 'fanyi', text: ZH[0], destination: DEST, source: '' });
  T.eq([st, res.text, res.from, res.to], [200, ZH[0], '中文(简体)', '英语'],
    'Chinese selection: from 中文(简体) to the second target 英语');
  T.eq(res.result, [await s.native(ZH[0], { target: 'en' })], 'result: the translation');
  // English selected (source undefined, as hcfy may send it): into Chinese.
  [st, res] = await post(s, { name: 'fanyi', text: EN[0], destination: DEST });
  T.eq([st, res.from, res.to], [200, '英语', '中文(简体)'], 'English selection: into 中文(简体)');
  T.eq(res.result, [await s.native(EN[0], { target: 'zh' })], 'result into Chinese');
  // A source chosen by the user; several lines come back line by line.
  const text = `${ZH[1]}\n\n${ZH[2]}`;
  [st, res] = await post(s, { name: 'fanyi', text, destination: ['英语'], source: '中文(简体)' });
  const whole = await s.native(text, { source: 'zh', target: 'en' });
  T.eq([st, res.result], [200, whole.split('\n')], 'one result string per line');
  T.eq(res.result.length, 3, 'an empty line stays an empty string');
  // Codes are read too; one destination as a string.
  [st, res] = await post(s, { name: 'fanyi', text: ZH[0], destination: 'en' });
  T.eq([st, res.to, res.from], [200, 'en', '中文(简体)'], 'a code as the destination');
}

async function errors(s) {
  let [st, res] = await post(s, { name: 'fanyi', text: ZH[0] });
  T.ok(st === 400 && /destination/.test(res.error), `no destination: 400 {error} (${JSON.stringify(res)})`);
  [st, res] = await post(s, { name: 'fanyi', text: ZH[0], destination: ['克林贡语'] });
  T.ok(st === 400 && /克林贡语/.test(res.error), `an unknown language: 400 naming it (${JSON.stringify(res)})`);
  [st, res] = await post(s, { name: 'fanyi', destination: DEST });
  T.ok(st === 400 && /'text'/.test(res.error), 'no text: 400');
}

run(async (serve) => {
  const s = await serve();
  await translations(s);
  await errors(s);
  // With a token: ?token= (the URL in hcfy's settings), else 401 {error}.
  const k = await serve({ args: ['--api-token', 'hcfy-key'] });
  let [st, res] = await post(k, { name: 'fanyi', text: ZH[0], destination: DEST });
  T.ok(st === 401 && typeof res.error === 'string', `no token: 401 (${JSON.stringify(res)})`);
  [st, res] = await post(k, { name: 'fanyi', text: ZH[0], destination: DEST }, '?token=hcfy-key');
  T.eq([st, res.to], [200, '英语'], '?token= accepted');
});
