#!/usr/bin/env node
// bergamot_run.js - command-line front end of the reference engine
// (@browsermt/bergamot-translator 0.4.9, WASM, see bergamot.js).
//
//   node bergamot_run.js --model DIR [--no-shortlist] [--precision P] [--beam N] < lines > outputs
//       One output line per input line, each input line translated in its own
//       call (the reference's maximum output length follows the widest
//       sentence of a batch, so one sentence per call is what a one-sentence
//       engine must match). Empty input lines give empty output lines without
//       a call. Output is escaped so that it stays one line: backslash,
//       newline and carriage return become \\, \n and \r. --beam N runs the
//       reference with beam-size N (default 1), which returns the best
//       hypothesis of its n-best list.
//   node bergamot_run.js --model DIR --bench [--json] [--limit N] < lines
//       Timings: model load (load + first translation), one sentence per call,
//       all lines in one batched call; peak RSS of this process.
'use strict';

const fs = require('node:fs');
const {Reference} = require('./bergamot.js');

const USAGE = 'usage: node bergamot_run.js --model DIR [--no-shortlist] [--precision float32|int8shiftAll|int8shiftAlphaAll]\n' +
              '                             [--beam N] [--bench [--json] [--limit N]] [--work-dir DIR] < lines\n';

function parseArgs(argv) {
    const o = {model: null, shortlist: true, precision: null, beam: 1, bench: false, json: false, limit: 0,
               workDir: null};
    for (let i = 0; i < argv.length; i++) {
        const a = argv[i];
        const value = () => {
            if (i + 1 >= argv.length)
                throw new Error(`option ${a} needs a value`);
            return argv[++i];
        };
        if (a === '--model')
            o.model = value();
        else if (a === '--no-shortlist')
            o.shortlist = false;
        else if (a === '--precision')
            o.precision = value();
        else if (a === '--beam') {
            const v = value();
            if (!/^[1-9][0-9]*$/.test(v))
                throw new Error(`--beam: expected a positive whole number, got ${JSON.stringify(v)}`);
            o.beam = parseInt(v, 10);
        } else if (a === '--bench')
            o.bench = true;
        else if (a === '--json')
            o.json = true;
        else if (a === '--limit')
            o.limit = parseInt(value(), 10);
        else if (a === '--work-dir')
            o.workDir = value();
        else if (a === '--help' || a === '-h') {
            process.stdout.write(USAGE);
            process.exit(0);
        } else
            throw new Error(`unknown option ${a}`);
    }
    if (!o.model)
        throw new Error('--model DIR is required');
    return o;
}

function escapeLine(s) {
    return s.replace(/\\/g, '\\\\').replace(/\n/g, '\\n').replace(/\r/g, '\\r');
}

function readLines() {
    const text = fs.readFileSync(0, 'utf8');
    const lines = text.split('\n');
    if (lines.length && lines[lines.length - 1] === '')
        lines.pop();
    return lines.map(l => l.replace(/\r$/, ''));
}

// Peak resident set size of this process (main thread + worker) in MiB.
function peakRssMiB() {
    try {
        const m = fs.readFileSync('/proc/self/status', 'utf8').match(/^VmHWM:\s+(\d+) kB/m);
        if (m)
            return Number(m[1]) / 1024;
    } catch (err) {
        // not Linux: fall through
    }
    return process.resourceUsage().maxRSS / 1024;
}

async function translateLines(ref, lines, out) {
    for (const line of lines) {
        const [t] = line === '' ? [''] : await ref.translate([line]);
        out.push(escapeLine(t));
        if (out.length >= 64) {
            process.stdout.write(out.join('\n') + '\n');
            out.length = 0;
        }
    }
}

async function bench(ref, o, lines) {
    const sents = lines.filter(l => l.trim() !== '');
    const t0 = process.hrtime.bigint();
    const info = await ref.loadModel(o.model, {shortlist: o.shortlist, precision: o.precision, beam: o.beam});
    const t1 = process.hrtime.bigint();
    await ref.translate(['你好。']);  // the engine builds its graph on first use
    const t2 = process.hrtime.bigint();
    const c2 = process.cpuUsage();
    const lat = [];
    for (const s of sents) {
        const a = process.hrtime.bigint();
        await ref.translate([s]);
        lat.push(Number(process.hrtime.bigint() - a) / 1e6);
    }
    const t3 = process.hrtime.bigint();
    const c3 = process.cpuUsage();
    await ref.translate(sents);
    const t4 = process.hrtime.bigint();
    const c4 = process.cpuUsage();
    // CPU seconds of the whole process (all threads): stable on a busy machine.
    const cpu = (a, b) => (b.user + b.system - a.user - a.system) / 1e6;
    lat.sort((a, b) => a - b);
    const pct = p => lat.length ? lat[Math.min(lat.length - 1, Math.floor(p * lat.length))] : 0;
    const sec = (a, b) => Number(b - a) / 1e9;
    return {
        engine: 'bergamot-translator 0.4.9 (WASM, Node ' + process.version + ', 1 thread)',
        model: info.files.model,
        precision: info.precision,
        beam: o.beam,
        shortlist: info.shortlist,
        sentences: sents.length,
        load_s: sec(t0, t2),
        load_model_s: sec(t0, t1),
        first_translation_s: sec(t1, t2),
        single_sents_per_s: sents.length / sec(t2, t3),
        single_p50_ms: pct(0.5),
        single_p90_ms: pct(0.9),
        single_p99_ms: pct(0.99),
        single_cpu_s: cpu(c2, c3),
        batched_sents_per_s: sents.length / sec(t3, t4),
        batched_cpu_s: cpu(c3, c4),
        peak_rss_mib: peakRssMiB(),
    };
}

async function main() {
    let o;
    try {
        o = parseArgs(process.argv.slice(2));
    } catch (err) {
        process.stderr.write(`bergamot_run: ${err.message}\n${USAGE}`);
        return 2;
    }
    let lines = readLines();
    if (o.limit > 0)
        lines = lines.slice(0, o.limit);
    const ref = await Reference.open({workDir: o.workDir});
    try {
        if (o.bench) {
            const r = await bench(ref, o, lines);
            if (o.json) {
                process.stdout.write(JSON.stringify(r) + '\n');
            } else {
                for (const [k, v] of Object.entries(r))
                    process.stdout.write(`${k}: ${typeof v === 'number' ? +v.toFixed(3) : v}\n`);
            }
        } else {
            await ref.loadModel(o.model, {shortlist: o.shortlist, precision: o.precision, beam: o.beam});
            const out = [];
            await translateLines(ref, lines, out);
            if (out.length)
                process.stdout.write(out.join('\n') + '\n');
        }
    } finally {
        await ref.close();
    }
    return 0;
}

main().then(code => {
    process.exitCode = code;
}, err => {
    process.stderr.write(`bergamot_run: ${err.message}\n`);
    process.exitCode = 1;
});
