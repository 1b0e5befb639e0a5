// serve_clients2.js - what the client tests of the LibreTranslate, Immersive
// Translate, Kiss Translator and OpenAI-compatible surfaces share: a real
// `fanyi serve` on a free loopback port with synthetic models (fixture
// synth_models), counted checks, and the server's own translation of a text
// to compare a client's result with.
//
//   const { serve, T } = require('./serve_clients2');
//   const s = await serve({ args: ['--api-token', 'k'] });
//   T.eq(await client(...), await s.native('你好'), 'what');
//   await s.stop(); T.finish();
'use strict';
const { spawn } = require('node:child_process');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');

const BIN = process.env.FANYI_BIN;
const BUILD = process.env.FANYI_BUILD_DIR;
if (!BIN || !BUILD) {
  console.error('FANYI_BIN and FANYI_BUILD_DIR must be set (run through ctest)');
  process.exit(2);
}
const MODELS = path.join(BUILD, 'models');

// Sentences to translate: ordinary Chinese and English.
const ZH = ['这家饭馆的饺子又便宜又好吃。', '明天早上九点，我们在学校门口见面。', '孩子们在公园里放风筝。'];
const EN = ['The weather is nice today, so we are going to the park.', 'Good morning.'];

class Checks {
  constructor() { this.passed = 0; this.failed = 0; }
  ok(cond, what) {
    if (cond) this.passed++;
    else { this.failed++; console.error('FAIL:', what); }
    return cond;
  }
  eq(got, want, what) {
    const g = JSON.stringify(got), w = JSON.stringify(want);
    return this.ok(g === w, `${what}: got ${g}, want ${w}`);
  }
  // fn must throw (or reject); check(err) must hold for what it threw.
  async throws(fn, check, what) {
    try { await fn(); } catch (e) { return this.ok(check(e), `${what}: ${e && e.stack || e}`); }
    return this.ok(false, `${what}: did not throw`);
  }
  finish() {
    console.log(`${this.passed} passed, ${this.failed} failed`);
    process.exit(this.failed || !this.passed ? 1 : 0);
  }
}
const T = new Checks();

// Whether a text (or markup) has something to read: not only tags and white space.
function visible(text) {
  return typeof text === 'string' && text.replace(/<[^>]*>/g, '').trim() !== '';
}

// A models directory with the directions asked for (default zh-en and
// en-zh), each a link to a synthetic model.
function modelsRoot(directions) {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'fanyi-clients2-'));
  for (const [dir, model] of Object.entries(directions))
    fs.symlinkSync(path.join(MODELS, model), path.join(root, dir));
  return root;
}

const DEFAULT_DIRECTIONS = { 'zh-en': 'tiny-int8-sl', 'en-zh': 'firefox-en-zh' };

// `fanyi serve --models ROOT --port 0 ARGS`; resolves once it listens.
async function serve({ args = [], directions = DEFAULT_DIRECTIONS } = {}) {
  const root = modelsRoot(directions);
  const env = {};
  for (const [k, v] of Object.entries(process.env)) if (!k.startsWith('FANYI_') || k === 'FANYI_KERNEL') env[k] = v;
  // Sanitizer builds translate slowly: a generous deadline.
  // Document jobs under a data directory of its own (removed with the models).
  const all = ['serve', '--models', root, '--host', '127.0.0.1', '--port', '0', '--threads', '2',
    '--timeout-ms', '600000', '--data-dir', path.join(root, '.data'), ...args];
  const proc = spawn(BIN, all, { env, stdio: ['ignore', 'pipe', 'pipe'] });
  let log = '', out = '';
  proc.stderr.on('data', (d) => { log += d; });
  // The ready line is on stdout.
  const port = await new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`fanyi serve did not start:\n${log}`)), 120000);
    proc.stdout.on('data', (d) => {
      out += d;
      const m = /listening on http:\/\/[^:]+:(\d+) /.exec(out);
      if (m) { clearTimeout(timer); resolve(Number(m[1])); }
    });
    proc.on('exit', (code) => { clearTimeout(timer); reject(new Error(`fanyi serve exited ${code}:\n${log}`)); });
  });
  const base = `http://127.0.0.1:${port}`;
  const s = {
    base, port, proc,
    log: () => log,
    // The native API's translation: what every dialect must answer. One
    // without visible text (a sentence the synthetic model turns into
    // nothing) would let an answer that lost the text pass: an error.
    async native(text, { source = 'auto', target = '', html = false } = {}) {
      const r = await fetch(`${base}/translate`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json', ...(s.token ? { Authorization: `Bearer ${s.token}` } : {}) },
        body: JSON.stringify({ text, source, target, html }),
      });
      const b = await r.json();
      if (r.status !== 200) throw new Error(`native ${r.status}: ${JSON.stringify(b)}`);
      if (visible(text) && !visible(b.translation)) {
        throw new Error(`native translation of ${JSON.stringify(text)} has no visible text ` +
          `(${JSON.stringify(b.translation)}): pick a sentence with visible output`);
      }
      return b.translation;
    },
    // SIGTERM and wait; the exit status must be 0 (sanitizer builds report
    // leaks and errors through it).
    async stop() {
      if (proc.exitCode === null && proc.signalCode === null) {
        const gone = new Promise((resolve) => proc.on('exit', resolve));
        proc.kill('SIGTERM');
        const t = setTimeout(() => proc.kill('SIGKILL'), 30000);
        await gone;
        clearTimeout(t);
      }
      fs.rmSync(root, { recursive: true, force: true });
      T.ok(proc.exitCode === 0, `fanyi serve exited ${proc.exitCode} (${proc.signalCode || 'no signal'}):\n${log.slice(-4000)}`);
    },
  };
  const tok = args.indexOf('--api-token');
  if (tok >= 0) s.token = args[tok + 1];
  return s;
}

// Runs main(); a crash is a failed test, and the server is always stopped.
function run(main) {
  const servers = [];
  const track = async (opts) => { const s = await serve(opts); servers.push(s); return s; };
  main(track)
    .catch((e) => T.ok(false, `test crashed: ${e && e.stack || e}`))
    .finally(async () => {
      for (const s of servers) await s.stop();
      T.finish();
    });
}

module.exports = { serve, run, T, ZH, EN };
