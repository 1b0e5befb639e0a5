// test_translate.js - the npm `translate` package (3.1.0, pinned) with its
// "libre" engine and a custom url: POST {url} {q, source, target, api_key}.
'use strict';
const { run, T, ZH, EN } = require('./serve_clients2');

run(async (serve) => {
  const { default: translate } = await import('translate');
  const s = await serve({ args: ['--api-token', 'k-123'] });
  const url = `${s.base}/translate`;
  const libre = (text, opts) => translate(text, { engine: 'libre', url, key: 'k-123', cache: 0, ...opts });
  T.eq(await libre(ZH[0], { from: 'zh', to: 'en' }), await s.native(ZH[0], { source: 'zh', target: 'en' }),
    'zh -> en');
  T.eq(await libre(EN[1], { from: 'en', to: 'zh' }), await s.native(EN[1], { source: 'en', target: 'zh' }),
    'en -> zh');
  T.eq(await libre(ZH[1], { from: 'chinese', to: 'english' }),
    await s.native(ZH[1], { source: 'zh', target: 'en' }), 'language names, as the package takes them');
  // An error answer has no translatedText: the package throws.
  await T.throws(() => libre(ZH[2], { from: 'zh', to: 'ja' }), (e) => /No response/.test(e.message),
    'an unsupported pair is an error');
  await T.throws(() => translate(ZH[2], { engine: 'libre', url, key: 'nope', from: 'zh', to: 'en' }),
    (e) => /No response/.test(e.message), 'a wrong key is an error');
});
