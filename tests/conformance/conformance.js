#!/usr/bin/env node
// conformance.js - compares `fanyi translate --raw --min-gap` with the
// reference engine (bergamot-translator 0.4.9 WASM, see bergamot.js) on one
// model directory, line by line.
//
//   node conformance.js --variant NAME --model DIR [--lines N] [--wmt-lines N]
//                       [--subset N] [--reference-only] [--cache-dir DIR]
//                       [--report DIR] [--fanyi BIN] [--fanyi-arg ARG]...
//                       [--source LANG] [--beam N] [--tag NAME]
//
// Input: --lines lines (default 520) in the model's source language (--source,
// else the first language of the model file's infix: model.zhen.* -> zh,
// model.enzh.* -> en): lines of $FANYI_SOURCE_DIR/tests/data/text/*.txt
// (Chinese: those containing Han; another language: those with Latin
// letters and no Han), and, when $FANYI_SHARED_DIR/data/wmt/*.LANG exist,
// --wmt-lines (default 120) of those instead of as many own lines; both
// picked at an even stride. Lines are
// trimmed and kept only when the reference treats them as exactly one sentence
// (see usable()) and its first and last characters are not dropped by the
// vocabulary's normaliser (see buildCorpus()). Pass iff at least 99.5%
// of the lines are identical and every mismatch has a top-2 logit gap (as
// measured by our engine) below 1e-4. Prints one summary line per variant.
//
// Reference outputs are cached in --cache-dir (default
// $FANYI_BUILD_DIR/conformance-cache) under a key hashing the model, shortlist
// and vocabulary bytes, the precision, the input lines, the beam (when above 1)
// and the harness version, so reruns only pay for our engine. A clean build
// dir takes them from the outputs committed in tests/conformance/reference/
// (the same files, for the fixture's synthetic models: they are deterministic)
// after running the reference on SPOT_CHECK of the lines and finding the
// same outputs (a committed file the reference disagrees with fails the
// variant: regenerate it, README.md); without a committed file for the key
// (other models, lines or precision) the reference translates every line.
//
// --beam N (default 1) compares beam search: the reference runs with
// beam-size N (and returns the best of its n-best list), fanyi with --beam N;
// the variant's cache file, report and worker directory are then named
// VARIANT-beamN. The pass rule is the same; the gap fanyi prints for a beam
// is the closest call of its search (translator.h, fy_translate_beam).
//
// --subset N (or the environment variable FANYI_CONFORMANCE_LINES=N, which
// the portable-kernel stage of scripts/test.sh sets because the reference C
// kernels make our side ~10-30x slower) compares only N of those lines, picked
// at an even stride. The corpus and the cache key stay those of the full
// set: cached full-set reference outputs are reused, and only without them
// is the reference run, on the N lines alone. A subset may hold no more
// mismatches than the full set is allowed.
'use strict';

const crypto = require('node:crypto');
const fs = require('node:fs');
const path = require('node:path');
const {spawnSync} = require('node:child_process');
const {Reference, discoverModel, readTensorTypes, choosePrecision} = require('./bergamot.js');

// Bump when anything that changes reference outputs changes here.
const HARNESS_VERSION = 'conformance-1';
const MAX_GAP = 1e-4;
const MIN_IDENTICAL = 0.995;
const MIN_LINES = 500;
// bergamot wraps sentences at max-length-break = 128 tokens including EOS.
const MAX_SOURCE_PIECES = 127;
// Committed reference outputs, and how many of their lines every use checks.
const COMMITTED_DIR = path.join(__dirname, 'reference');
const SPOT_CHECK = 12;

const USAGE = 'usage: node conformance.js --variant NAME --model DIR [--lines N] [--wmt-lines N]\n' +
              '                           [--subset N] [--reference-only] [--cache-dir DIR]\n' +
              '                           [--report DIR] [--fanyi BIN] [--fanyi-arg ARG]...\n' +
              '                           [--source LANG] [--beam N] [--tag NAME]\n' +
              '--tag NAME names the report and the worker directory of a run with other\n' +
              '--fanyi-arg (variant-NAME), so that it runs beside the plain one.\n';

function positiveInt(text, what) {
    if (!/^[1-9][0-9]*$/.test(text))
        throw new Error(`${what}: expected a positive whole number, got ${JSON.stringify(text)}`);
    return parseInt(text, 10);
}

function parseArgs(argv) {
    const env = process.env;
    const o = {
        variant: null,
        model: null,
        lines: 520,
        wmtLines: 120,
        subset: env.FANYI_CONFORMANCE_LINES ? positiveInt(env.FANYI_CONFORMANCE_LINES, 'FANYI_CONFORMANCE_LINES') : 0,
        referenceOnly: false,
        sourceDir: env.FANYI_SOURCE_DIR || path.resolve(__dirname, '../..'),
        sharedDir: env.FANYI_SHARED_DIR || path.resolve(__dirname, '../../../shared'),
        fanyi: env.FANYI_BIN || null,
        cacheDir: null,
        tag: '',
        reportDir: null,
        fanyiArgs: [],
        source: null,
        beam: 1,
    };
    for (let i = 0; i < argv.length; i++) {
        const a = argv[i];
        const value = () => {
            if (i + 1 >= argv.length)
                throw new Error(`option ${a} needs a value`);
            return argv[++i];
        };
        if (a === '--variant')
            o.variant = value();
        else if (a === '--model')
            o.model = value();
        else if (a === '--lines')
            o.lines = parseInt(value(), 10);
        else if (a === '--wmt-lines')
            o.wmtLines = parseInt(value(), 10);
        else if (a === '--subset')
            o.subset = positiveInt(value(), '--subset');
        else if (a === '--reference-only')
            o.referenceOnly = true;
        else if (a === '--cache-dir')
            o.cacheDir = value();
        else if (a === '--report')
            o.reportDir = value();
        else if (a === '--fanyi')
            o.fanyi = value();
        else if (a === '--tag')
            o.tag = '-' + value();
        else if (a === '--fanyi-arg')
            o.fanyiArgs.push(value());
        else if (a === '--source')
            o.source = value();
        else if (a === '--beam')
            o.beam = positiveInt(value(), '--beam');
        else if (a === '--help' || a === '-h') {
            process.stdout.write(USAGE);
            process.exit(0);
        } else
            throw new Error(`unknown option ${a}`);
    }
    if (!o.model)
        throw new Error('--model DIR is required');
    if (!o.variant)
        o.variant = path.basename(path.resolve(o.model));
    // What this run's files are named after: a beam compares other outputs.
    o.label = o.beam > 1 ? `${o.variant}-beam${o.beam}` : o.variant;
    const buildDir = env.FANYI_BUILD_DIR || process.cwd();
    o.cacheDir = o.cacheDir || path.join(buildDir, 'conformance-cache');
    o.reportDir = o.reportDir || path.join(buildDir, 'conformance-report');
    // The worker copy lives in the build dir, one per variant (tests run in
    // parallel), so a test killed on timeout leaves nothing in /tmp.
    o.workDir = path.join(buildDir, 'conformance-worker', o.label + o.tag);
    if (!o.referenceOnly && !o.fanyi)
        throw new Error('FANYI_BIN (or --fanyi) must name the fanyi binary');
    return o;
}

function readLines(file) {
    return fs.readFileSync(file, 'utf8').split('\n').map(l => l.replace(/\r$/, ''));
}

// A line the reference translates as exactly one sentence, so that both
// engines see the same unit: in the source language (Chinese: some Han;
// any other: some Latin letters and no Han), no ASCII sentence end followed
// by whitespace (where ssplit may split; it ignores 。！？), and short enough
// to keep our input lines sane. The piece limit is checked later with the
// vocab.
function usable(line, lang = 'zh') {
    const script = lang === 'zh' ? /\p{Script=Han}/u.test(line)
                                 : /\p{Script=Latin}/u.test(line) && !/\p{Script=Han}/u.test(line);
    return script && !/[.?!]+['")\]’”\p{Pf}]*\s/u.test(line) && line.length <= 400;
}

// What fanyi's output is compared with: the reference's text after the rule
// fanyi applies where its engine makes text (src/translate/output.c,
// drop_controls): control characters are dropped, C0 but tab, LF and CR,
// DEL, and C1 (U+0080..U+009F). Byte-fallback pieces such as <0x07> or
// <0x00>, which random models do emit, decode to them in both engines (the
// pieces are the same, measured); fanyi never lets them out (U+0000 could
// not pass its C strings anyway; the rest would reach terminals, JSON and
// documents). Such lines are counted and reported as "identical apart from
// control characters".
const CONTROLS = /[\u0000-\u0008\u000B\u000C\u000E-\u001F\u007F-\u009F]/g;
function comparable(refText) {
    return refText.replace(CONTROLS, '');
}

// The source language of a model directory's files: the first language of
// the file-name infix (model.zhen.* -> zh, model.enzh.* -> en).
function sourceLanguage(files) {
    const m = /^model\.([a-z]{2})[a-z]*\./i.exec(path.basename(files.model));
    return m ? m[1].toLowerCase() : 'zh';
}

function listFiles(dir, re) {
    try {
        return fs.readdirSync(dir).filter(n => re.test(n)).sort().map(n => path.join(dir, n));
    } catch (err) {
        return [];
    }
}

function candidates(files, lang) {
    const out = [];
    for (const f of files)
        for (const raw of readLines(f)) {
            const line = raw.trim();
            if (usable(line, lang))
                out.push(line);
        }
    return out;
}

// Number of SentencePiece pieces of each line, by Debian's spm_encode (the
// same library bergamot's vocabulary uses, no sampling).
function pieceCounts(lines, vocab) {
    const r = spawnSync('spm_encode', [`--model=${vocab}`, '--output_format=id'],
                        {input: lines.join('\n') + '\n', encoding: 'utf8', maxBuffer: 1 << 28});
    if (r.error)
        throw new Error(`spm_encode: ${r.error.message} (install Debian's sentencepiece)`);
    if (r.status !== 0)
        throw new Error(`spm_encode failed on ${vocab}: ${r.stderr.trim()}`);
    const out = r.stdout.split('\n');
    if (out.length < lines.length)
        throw new Error(`spm_encode returned ${out.length} lines for ${lines.length}`);
    return lines.map((_, i) => out[i].trim() === '' ? 0 : out[i].trim().split(/\s+/).length);
}

function evenlySpaced(list, n) {
    if (n <= 0 || list.length === 0)
        return [];
    if (list.length <= n)
        return list.slice();
    const out = [];
    for (let i = 0; i < n; i++)
        out.push(list[Math.floor(i * list.length / n)]);
    return out;
}

// Indices of n of total items at an even stride (all of them when n is 0 or
// not smaller than total).
function subsetIndices(total, n) {
    const all = Array.from({length: total}, (_, i) => i);
    return n > 0 && n < total ? evenlySpaced(all, n) : all;
}

// The pass rule: at most (1 - MIN_IDENTICAL) of the full corpus may differ,
// each difference explained by a near-tie; a subset of that corpus gets the
// same allowance (it cannot hold more of the full set's mismatches).
function passes(mismatches, unexplained, fullLines) {
    const allowed = Math.floor(fullLines * (1 - MIN_IDENTICAL) + 1e-9);
    return mismatches <= allowed && unexplained === 0;
}

// Whether each line's first and last characters are pieces of their own
// under vocab. A character the normaliser drops (U+2581, U+FFFD, U+200B,
// ...) is covered by no source token, and the reference copies such text
// before the first or after the last token into its output as it copies
// surrounding whitespace: such a line's output is not just the decoded
// pieces.
function edgesKept(lines, vocab) {
    const ends = [];
    for (const l of lines) {
        const cps = Array.from(l);
        ends.push(cps[0] || '', cps[cps.length - 1] || '');
    }
    const counts = pieceCounts(ends, vocab);
    return lines.map((_, i) => counts[2 * i] > 0 && counts[2 * i + 1] > 0);
}

function buildCorpus(o, vocab, lang) {
    const own = candidates(listFiles(path.join(o.sourceDir, 'tests/data/text'), /\.txt$/), lang);
    const wmt = candidates(listFiles(path.join(o.sharedDir, 'data/wmt'), new RegExp(`\\.${lang}$`)), lang);
    const all = [...new Set([...own, ...wmt])];
    const counts = pieceCounts(all, vocab);
    const edges = edgesKept(all, vocab);
    const ok = new Set(all.filter((_, i) => counts[i] > 0 && counts[i] <= MAX_SOURCE_PIECES && edges[i]));
    const seen = new Set();
    const pick = list => list.filter(l => ok.has(l) && !seen.has(l) && seen.add(l));
    const ownOk = pick(own);
    const wmtOk = pick(wmt);
    const ownLines = evenlySpaced(ownOk, o.lines - Math.min(o.wmtLines, wmtOk.length));
    const wmtLines = evenlySpaced(wmtOk, o.lines - ownLines.length);
    return {lines: [...ownLines, ...wmtLines], own: ownLines.length, wmt: wmtLines.length};
}

function sha256File(file) {
    return crypto.createHash('sha256').update(fs.readFileSync(file)).digest('hex');
}

function cacheFileFor(o, files, precision, lines) {
    const what = {
        harness: HARNESS_VERSION,
        package: '@browsermt/bergamot-translator@0.4.9',
        model: sha256File(files.model),
        shortlist: files.shortlist ? sha256File(files.shortlist) : null,
        vocabs: files.vocabs.map(sha256File),
        precision,
        lines,
    };
    if (o.beam > 1)  // beam 1 keeps the key it always had
        what.beam = o.beam;
    const key = crypto.createHash('sha256').update(JSON.stringify(what)).digest('hex');
    return {key, file: path.join(o.cacheDir, `${o.label}-${key.slice(0, 32)}.json`)};
}

function readCache(entry, n) {
    try {
        const cached = JSON.parse(fs.readFileSync(entry.file, 'utf8'));
        if (cached.key === entry.key && cached.outputs.length === n)
            return {outputs: cached.outputs, cached: true, lines: n, seconds: cached.seconds,
                    cpuSeconds: cached.cpuSeconds};
    } catch (err) {
        // no usable cache entry
    }
    return null;
}

// Runs the reference on lines (one call per line); outputs and timings.
async function runReference(o, precision, lines) {
    const t0 = process.hrtime.bigint();
    const c0 = process.cpuUsage();  // the whole process: the worker thread is the reference
    const ref = await Reference.open({workDir: o.workDir});
    const outputs = [];
    try {
        await ref.loadModel(path.resolve(o.model), {precision, beam: o.beam});
        for (const line of lines)
            outputs.push((await ref.translate([line]))[0]);
    } finally {
        await ref.close();
    }
    const c1 = process.cpuUsage(c0);
    return {outputs, seconds: Number(process.hrtime.bigint() - t0) / 1e9,
            cpuSeconds: (c1.user + c1.system) / 1e6};
}

function writeCache(file, key, run) {
    fs.mkdirSync(path.dirname(file), {recursive: true});
    const tmp = `${file}.tmp.${process.pid}`;
    fs.writeFileSync(tmp, JSON.stringify({key, seconds: run.seconds, cpuSeconds: run.cpuSeconds,
                                          outputs: run.outputs}));
    fs.renameSync(tmp, file);
}

// The committed outputs of the full line set, once the reference gives the
// same on SPOT_CHECK of them (then copied into the build's cache); null
// when nothing is committed for this key.
async function committedOutputs(o, precision, allLines, entry) {
    const committed = readCache({key: entry.key, file: path.join(COMMITTED_DIR, path.basename(entry.file))},
                                allLines.length);
    if (!committed)
        return null;
    const spot = subsetIndices(allLines.length, SPOT_CHECK);
    const run = await runReference(o, precision, spot.map(i => allLines[i]));
    spot.forEach((at, k) => {
        if (run.outputs[k] !== committed.outputs[at])
            throw new Error(`tests/conformance/reference/${path.basename(entry.file)}: line ${at + 1} is ` +
                            `${JSON.stringify(committed.outputs[at].slice(0, 80))} there but the reference says ` +
                            `${JSON.stringify(run.outputs[k].slice(0, 80))}: regenerate it (tests/conformance/README.md)`);
    });
    writeCache(entry.file, entry.key, committed);
    return {...committed, committed: spot.length};
}

// The reference outputs of lines[i] for each i of picked: from the cache of
// the full line set when it is there (the build's, else the committed one),
// else from the cache of (or a reference run on) just the picked lines.
async function referenceOutputs(o, files, precision, allLines, picked) {
    const fullEntry = cacheFileFor(o, files, precision, allLines);
    const full = readCache(fullEntry, allLines.length) ||
                 await committedOutputs(o, precision, allLines, fullEntry);
    if (full)
        return {...full, outputs: picked.map(i => full.outputs[i])};
    const lines = picked.map(i => allLines[i]);
    const entry = cacheFileFor(o, files, precision, lines);
    const hit = readCache(entry, lines.length);
    if (hit)
        return hit;
    const run = await runReference(o, precision, lines);
    writeCache(entry.file, entry.key, run);
    return {...run, cached: false, lines: lines.length};
}

// Parses `fanyi translate --raw --min-gap` output: one record per input line,
// "translation<TAB>gap". A translation may itself contain a newline (a
// byte-fallback piece), so a record ends at the first line that ends in a TAB
// and a number.
function parseGapOutput(text, n) {
    const lines = text.split('\n');
    if (lines.length && lines[lines.length - 1] === '')
        lines.pop();
    const recs = [];
    let acc = null;
    const re = /^([\s\S]*)\t([-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?|[-+]?inf(?:inity)?|nan)$/i;
    for (const l of lines) {
        acc = acc === null ? l : `${acc}\n${l}`;
        const m = re.exec(acc);
        if (m) {
            const g = m[2].toLowerCase();
            const gap = g.endsWith('inf') || g.endsWith('infinity') ? Infinity : Number(g);
            recs.push({text: m[1], gap});
            acc = null;
        }
    }
    if (acc !== null)
        throw new Error(`output record ${recs.length + 1} lacks "<TAB>gap": ${JSON.stringify(acc.slice(0, 200))}`);
    if (recs.length !== n)
        throw new Error(`${recs.length} output records for ${n} input lines`);
    return recs;
}

function runOurs(o, lines) {
    const args = ['translate', '--model', path.resolve(o.model), '--raw', '--min-gap', ...o.fanyiArgs];
    if (o.beam > 1)
        args.push('--beam', String(o.beam));
    const t0 = process.hrtime.bigint();
    const r = spawnSync(o.fanyi, args, {input: lines.join('\n') + '\n', encoding: 'utf8', maxBuffer: 1 << 28});
    const seconds = Number(process.hrtime.bigint() - t0) / 1e9;
    if (r.error)
        throw new Error(`${o.fanyi}: ${r.error.message}`);
    if (r.status !== 0)
        throw new Error(`fanyi ${args.join(' ')} exited ${r.status}: ${r.stderr.trim().slice(0, 500)}`);
    return {recs: parseGapOutput(r.stdout, lines.length), seconds};
}

// Line numbers are those of the full corpus (picked[i] is line i's index).
function writeReport(o, lines, picked, ref, recs, mismatches) {
    fs.mkdirSync(o.reportDir, {recursive: true});
    const file = path.join(o.reportDir, `${o.label}${o.tag}.txt`);
    const out = [`# ${o.label}: ${lines.length} lines, ${mismatches.length} mismatches`];
    for (const i of mismatches) {
        out.push(`line ${picked[i] + 1} gap ${recs[i].gap}`, `  source:    ${JSON.stringify(lines[i])}`,
                 `  reference: ${JSON.stringify(ref[i])}`, `  fanyi:     ${JSON.stringify(recs[i].text)}`);
    }
    fs.writeFileSync(file, out.join('\n') + '\n');
    return file;
}

async function main() {
    let o;
    try {
        o = parseArgs(process.argv.slice(2));
    } catch (err) {
        process.stderr.write(`conformance: ${err.message}\n${USAGE}`);
        return 2;
    }
    const files = discoverModel(path.resolve(o.model));
    const precision = choosePrecision(readTensorTypes(fs.readFileSync(files.model), files.model));
    const lang = o.source || sourceLanguage(files);
    const corpus = buildCorpus(o, files.vocabs[0], lang);
    console.log(`${o.label}: ${corpus.lines.length} ${lang} lines (${corpus.own} own, ${corpus.wmt} WMT), ` +
                `precision ${precision}, shortlist ${files.shortlist ? 'yes' : 'no'}, ` +
                `vocab ${files.vocabs.length === 1 ? 'shared' : 'separate'}`);
    if (corpus.lines.length < MIN_LINES) {
        console.log(`FAIL ${o.label}: only ${corpus.lines.length} usable lines, need ${MIN_LINES}`);
        return 1;
    }
    const picked = subsetIndices(corpus.lines.length, o.subset);
    const lines = picked.map(i => corpus.lines[i]);
    if (lines.length < corpus.lines.length)
        console.log(`${o.label}: comparing a subset of ${lines.length} of the ${corpus.lines.length} lines ` +
                    '(--subset / FANYI_CONFORMANCE_LINES)');
    const ref = await referenceOutputs(o, files, precision, corpus.lines, picked);
    const whence = ref.committed ? `from tests/conformance/reference (the reference gave the same on ${ref.committed} of its lines)`
                 : ref.cached ? 'from cache' : 'computed';
    console.log(`${o.label}: reference ${whence} ` +
                `(${ref.committed ? 'when computed: ' : ''}${ref.seconds.toFixed(1)} s wall, ${ref.cpuSeconds === undefined ? '-' : ref.cpuSeconds.toFixed(1)} s CPU, ` +
                `${(ref.lines / ref.seconds).toFixed(2)} lines/s one per call, ${ref.lines} lines)`);
    if (o.referenceOnly)
        return 0;

    const ours = runOurs(o, lines);
    const mismatches = [];
    let maxGap = 0, withControls = 0;
    for (let i = 0; i < lines.length; i++) {
        if (ours.recs[i].text !== comparable(ref.outputs[i])) {
            mismatches.push(i);
            maxGap = Math.max(maxGap, ours.recs[i].gap);
        } else if (comparable(ref.outputs[i]) !== ref.outputs[i]) {
            withControls++;
        }
    }
    const identical = lines.length - mismatches.length;
    const unexplained = mismatches.filter(i => !(ours.recs[i].gap < MAX_GAP));
    const report = writeReport(o, lines, picked, ref.outputs, ours.recs, mismatches);
    console.log(`${o.label}: fanyi ${ours.seconds.toFixed(1)} s (${(lines.length / ours.seconds).toFixed(1)} lines/s)`);
    console.log(`${o.label}: lines ${lines.length}, identical ${identical} ` +
                `(${(100 * identical / lines.length).toFixed(2)}%), mismatches ${mismatches.length}, ` +
                `max gap among mismatches ${mismatches.length ? maxGap.toExponential(3) : '-'}, ` +
                `mismatches with gap >= ${MAX_GAP}: ${unexplained.length}` +
                (withControls ? `; ${withControls} identical apart from control characters (see comparable())` : ''));
    for (const i of mismatches.slice(0, 5)) {
        console.log(`  line ${picked[i] + 1} (gap ${ours.recs[i].gap}): ${JSON.stringify(lines[i])}\n` +
                    `    reference: ${JSON.stringify(ref.outputs[i].slice(0, 300))}\n` +
                    `    fanyi:     ${JSON.stringify(ours.recs[i].text.slice(0, 300))}`);
    }
    if (mismatches.length)
        console.log(`  all mismatches: ${report}`);
    const pass = passes(mismatches.length, unexplained.length, corpus.lines.length);
    console.log(`${pass ? 'PASS' : 'FAIL'} ${o.label}`);
    return pass ? 0 : 1;
}

module.exports = {parseGapOutput, usable, comparable, edgesKept, sourceLanguage, evenlySpaced, subsetIndices, passes, MAX_SOURCE_PIECES};

if (require.main === module) {
    main().then(code => {
        process.exitCode = code;
    }, err => {
        process.stderr.write(`conformance: ${err.message}\n`);
        process.exitCode = 1;
    });
}
