// Renders /openapi.json as a readable page with a curl example per endpoint.
'use strict';

function el(tag, props, ...children) {
  const e = document.createElement(tag);
  Object.assign(e, props || {});
  for (const c of children) if (c !== null && c !== undefined) e.append(c);
  return e;
}

function resolve(spec, schema) {
  while (schema && schema.$ref) {
    const path = schema.$ref.replace(/^#\//, '').split('/');
    schema = path.reduce((o, k) => (o ? o[k] : undefined), spec);
  }
  return schema;
}

// An example body: the media type's example, else one built from the schema.
function exampleOf(spec, media) {
  if (!media) return undefined;
  if (media.example !== undefined) return media.example;
  if (media.examples) { const first = Object.values(media.examples)[0]; if (first) return first.value; }
  return fromSchema(spec, media.schema, 0);
}

// Values that work as written for string fields the spec gives no example for
// (a literal "string" is no language code: the example would answer 400).
const SAMPLES = {
  text: '你好，世界。', q: '你好，世界。', source: 'zh', target: 'en', source_lang: 'ZH', target_lang: 'EN',
  from: 'zh', to: 'en', sl: 'zh-CN', tl: 'en', format: 'text', input: '你好，世界。',
  text_list: '你好，世界。', texts: '你好，世界。', client: 'gtx', dt: 't',
};
// Left out of examples: credentials (a made-up one would be refused) and glossaries
// (not supported: the server says so).
const OMIT = new Set(['api_key', 'auth_key', 'key', 'token', 'access_token', 'glossary_id']);

function fromSchema(spec, schema, depth, key) {
  schema = resolve(spec, schema);
  if (!schema || depth > 5) return undefined;
  if (schema.example !== undefined) return schema.example;
  if (schema.oneOf || schema.anyOf) return fromSchema(spec, (schema.oneOf || schema.anyOf)[0], depth + 1, key);
  switch (schema.type) {
    case 'object': {
      const o = {};
      for (const [k, v] of Object.entries(schema.properties || {})) {
        if (schema.required && !schema.required.includes(k) && depth > 0) continue;
        if (OMIT.has(k)) continue;
        o[k] = fromSchema(spec, v, depth + 1, k);
      }
      return o;
    }
    case 'array': return [fromSchema(spec, schema.items, depth + 1, key)];
    case 'integer': case 'number': return 0;
    case 'boolean': return false;
    default:
      if (schema.enum) return schema.enum[0];
      if (typeof schema.default === 'string' && schema.default) return schema.default;
      return key in SAMPLES ? SAMPLES[key] : 'string';
  }
}

function shellQuote(s) { return `'${s.replace(/'/g, `'\\''`)}'`; }

// The query string of the required (or sample-known) query parameters.
function queryOf(spec, op) {
  const q = new URLSearchParams();
  for (const raw of op.parameters || []) {
    const p = resolve(spec, raw);
    if (!p || p.in !== 'query' || OMIT.has(p.name)) continue;
    const v = p.example !== undefined ? p.example : fromSchema(spec, p.schema, 1, p.name);
    if (p.required || p.name in SAMPLES) q.append(p.name, String(v));
  }
  const s = q.toString();
  return s ? `?${s}` : '';
}

function curlFor(base, path, method, body, contentType) {
  const parts = ['curl', '-sS'];
  if (method !== 'get') parts.push('-X', method.toUpperCase());
  if (body !== undefined) {
    parts.push('-H', shellQuote(`Content-Type: ${contentType}`));
    const text = contentType === 'application/json' ? JSON.stringify(body)
      : new URLSearchParams(body).toString();
    parts.push('-d', shellQuote(text));
  }
  parts.push(shellQuote(base + path));
  return parts.join(' ');
}

async function main() {
  const intro = document.getElementById('intro');
  const list = document.getElementById('endpoints');
  let spec;
  try {
    spec = await (await fetch('/openapi.json')).json();
  } catch {
    intro.textContent = 'Could not load /openapi.json from this server.';
    return;
  }
  const base = location.origin;
  intro.textContent = `${spec.info.title} ${spec.info.version}. ${spec.info.description || ''}`;
  for (const [path, item] of Object.entries(spec.paths || {})) {
    for (const [method, op] of Object.entries(item)) {
      if (!['get', 'post', 'put', 'delete'].includes(method)) continue;
      const content = (op.requestBody && op.requestBody.content) || {};
      const type = content['application/json'] ? 'application/json' : Object.keys(content)[0];
      const body = type ? exampleOf(spec, content[type]) : undefined;
      const responses = Object.entries(op.responses || {}).map(([code, r]) =>
        el('li', {}, el('code', { textContent: code }), ` ${resolve(spec, r).description || ''}`));
      list.append(el('section', { className: 'endpoint', id: (op.operationId || path) },
        el('h2', {}, el('span', { className: 'method', textContent: method.toUpperCase() }),
          el('code', { textContent: path })),
        el('p', { textContent: op.summary || '' }),
        op.description ? el('p', { textContent: op.description }) : null,
        el('h3', { textContent: 'Example' }),
        el('pre', {}, el('code', { textContent: curlFor(base, path + queryOf(spec, op), method, body, type) })),
        responses.length ? el('h3', { textContent: 'Responses' }) : null,
        responses.length ? el('ul', {}, ...responses) : null));
    }
  }
}

main();
