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
// Left out of examples: credentials (a made-up one would be refused) and stored
// glossaries (a made-up id names none: the server says so).
const OMIT = new Set(['api_key', 'auth_key', 'key', 'token', 'access_token', 'glossary_id', 'glossary_ids']);

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
    case 'integer': case 'number': return schema.default !== undefined ? schema.default : (schema.minimum !== undefined ? schema.minimum : 0);
    case 'boolean': return false;
    default:
      if (schema.format === 'binary') return '@document.txt'; // curl -F uploads the file
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
  if (body !== undefined && contentType === 'multipart/form-data') {
    // Form fields as curl sends them; a file field uploads a file of yours.
    for (const [k, v] of Object.entries(body)) parts.push('-F', shellQuote(`${k}=${v}`));
  } else if (body !== undefined) {
    parts.push('-H', shellQuote(`Content-Type: ${contentType}`));
    const text = contentType === 'application/json' ? JSON.stringify(body)
      : new URLSearchParams(body).toString();
    parts.push('-d', shellQuote(text));
  }
  parts.push(shellQuote(base + path));
  return parts.join(' ');
}

// Text with `code` spans (the spec's descriptions are Markdown-ish): code as <code>.
function prose(tag, text) {
  const e = el(tag);
  String(text || '').split('`').forEach((part, i) => e.append(i % 2 ? el('code', { textContent: part }) : part));
  return e;
}

function typeOf(spec, schema) {
  schema = resolve(spec, schema) || {};
  if (schema.oneOf || schema.anyOf) return (schema.oneOf || schema.anyOf).map((x) => typeOf(spec, x)).join(' or ');
  if (schema.type === 'array') return `array of ${typeOf(spec, schema.items)}`;
  return schema.enum ? `${schema.type || 'string'}: ${schema.enum.join(', ')}` : (schema.type || 'any');
}

// Field | Type | Description for an object schema (one table per alternative of a
// oneOf); null for anything else. label names the table's scrollable region.
function fieldTable(spec, schema, label) {
  const raw = schema;
  schema = resolve(spec, schema);
  if (schema && (schema.oneOf || schema.anyOf)) {
    const alts = (schema.oneOf || schema.anyOf).map((x, i) => {
      const name = x.$ref ? x.$ref.split('/').pop() : `form ${i + 1}`;
      const t = fieldTable(spec, x, `${label}, ${name}`);
      return t ? el('div', {}, el('p', { textContent: `${name}:` }), t) : null;
    }).filter(Boolean);
    return alts.length ? el('div', {}, ...alts) : null;
  }
  if (!schema || !schema.properties || !raw) return null;
  const req = new Set(schema.required || []);
  const rows = Object.entries(schema.properties).map(([k, v]) => {
    const r = resolve(spec, v) || {};
    const d = prose('td', r.description || '');
    if (r.default !== undefined) d.append(` Default: ${JSON.stringify(r.default)}.`);
    return el('tr', {}, el('td', {}, el('code', { textContent: k }), req.has(k) ? ' (required)' : ''),
      el('td', { textContent: typeOf(spec, r) }), d);
  });
  return el('div', { className: 'table', tabIndex: 0, role: 'region', ariaLabel: label },
    el('table', {}, el('thead', {}, el('tr', {}, el('th', { textContent: 'Field' }), el('th', { textContent: 'Type' }),
      el('th', { textContent: 'Description' }))), el('tbody', {}, ...rows)));
}

// Runs the example against this server and shows the answer under it.
function tryIt(url, method, type, bodyText) {
  const out = el('pre', { className: 'answer', hidden: true });
  const editor = bodyText === undefined ? null
    : el('textarea', { className: 'try-body', value: bodyText, rows: 3, spellcheck: false, ariaLabel: 'Request body' });
  const button = el('button', { type: 'button', textContent: 'Try it' });
  button.addEventListener('click', async () => {
    out.hidden = false;
    out.textContent = '…';
    try {
      const init = { method: method.toUpperCase(), headers: type ? { 'Content-Type': type } : {} };
      if (editor) init.body = editor.value;
      const r = await fetch(url, init);
      const text = await r.text();
      let shown = text;
      try { shown = JSON.stringify(JSON.parse(text), null, 2); } catch { /* not JSON */ }
      out.textContent = `${r.status} ${r.statusText}\n${shown.length > 4000 ? shown.slice(0, 4000) + '\n…' : shown}`;
    } catch (e) {
      out.textContent = `The request failed: ${e.message}`;
    }
  });
  return el('div', { className: 'try' }, editor, button, out);
}

function slug(method, path) { return `${method}-${path}`.replace(/[^A-Za-z0-9]+/g, '-').replace(/-+$/, ''); }

async function main() {
  const intro = document.getElementById('intro');
  const list = document.getElementById('endpoints');
  const toc = document.getElementById('toc');
  let spec;
  try {
    spec = await (await fetch('/openapi.json')).json();
  } catch {
    intro.textContent = 'Could not load /openapi.json from this server.';
    return;
  }
  const base = location.origin;
  intro.replaceWith(prose('p', `${spec.info.title} ${spec.info.version}. ${spec.info.description || ''}`));
  const links = [];
  for (const [path, item] of Object.entries(spec.paths || {})) {
    for (const [method, op] of Object.entries(item)) {
      if (!['get', 'post', 'put', 'delete'].includes(method)) continue;
      const id = slug(method, path);
      links.push(el('li', {}, el('a', { href: `#${id}` }, el('span', { className: 'method', textContent: method.toUpperCase() }), path)));
      const content = (op.requestBody && op.requestBody.content) || {};
      const type = content['application/json'] ? 'application/json' : Object.keys(content)[0];
      const body = type ? exampleOf(spec, content[type]) : undefined;
      const url = base + path + queryOf(spec, op);
      const bodyText = body === undefined ? undefined
        : type === 'application/json' ? JSON.stringify(body) : new URLSearchParams(body).toString();
      const responses = Object.entries(op.responses || {}).map(([code, r]) =>
        el('li', {}, el('code', { textContent: code }), ' ', prose('span', resolve(spec, r).description || '')));
      const ok = resolve(spec, (op.responses || {})['200']);
      const okJson = ok && ok.content && ok.content['application/json'];
      const answer = okJson ? exampleOf(spec, okJson) : undefined;
      list.append(el('section', { className: 'endpoint', id },
        el('h2', {}, el('span', { className: 'method', textContent: method.toUpperCase() }),
          el('code', { textContent: path })),
        el('p', { textContent: op.summary || '' }),
        op.description ? prose('p', op.description) : null,
        type ? el('h3', { textContent: 'Request fields' }) : null,
        type ? fieldTable(spec, content[type].schema, `Request fields of ${method.toUpperCase()} ${path}`) : null,
        el('h3', { textContent: 'Example' }),
        el('pre', { className: 'curl' }, el('code', { textContent: curlFor(base, path + queryOf(spec, op), method, body, type) })),
        path.includes('{') ? null : tryIt(url, method, type, bodyText),
        answer !== undefined ? el('h3', { textContent: 'Answer (200)' }) : null,
        answer !== undefined ? el('pre', { className: 'answer-example' }, el('code', { textContent: JSON.stringify(answer, null, 2) })) : null,
        answer !== undefined ? fieldTable(spec, okJson.schema, `Answer fields of ${method.toUpperCase()} ${path}`) : null,
        responses.length ? el('h3', { textContent: 'Responses' }) : null,
        responses.length ? el('ul', {}, ...responses) : null));
    }
  }
  toc.append(el('h2', { textContent: 'Endpoints' }), el('ul', {}, ...links));
}

main();
