// test_translate.js - the npm `translate` package (3.1.0, pinned) with its
// "libre" engine and a custom url: an instance made by Translate({engine,
// url, key}) posts JSON {q, source, target, api_key} to the url and throws
// the answer's "error" when there is one.
'use strict';
const { run, T, ZH, EN } = require('./serve_clients2');

run(async (serve) => {
  const { Translate } = await import('translate');
  const s = await serve({ args: ['--api-token', 'k-123'] });
  const url = `${s.base}/translate`;
  const libre = Translate({ engine: 'libre', url, key: 'k-123' });
  T.eq(await libre(ZH[0], { from: 'zh', to: 'en' }), await s.native(ZH[0], { source: 'zh', target: 'en' }),
    'zh -> en');
  T.eq(await libre(EN[1], { from: 'en', to: 'zh' }), await s.native(EN[1], { source: 'en', target: 'zh' }),
    'en -> zh');
  T.eq(await libre(ZH[1], { from: 'chinese', to: 'english' }),
    await s.native(ZH[1], { source: 'zh', target: 'en' }), 'language names, as the package takes them');
  // An answer with "error": the package throws the server's message.
  await T.throws(() => libre(ZH[2], { from: 'zh', to: 'ja' }), (e) => /ja/.test(e.message),
    'an unsupported pair is an error naming the language');
  const wrong = Translate({ engine: 'libre', url, key: 'nope' });
  await T.throws(() => wrong(ZH[2], { from: 'zh', to: 'en' }), (e) => /key|token/i.test(e.message),
    'a wrong key is an error about the key');
});
