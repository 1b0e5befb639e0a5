#!/usr/bin/env node
// test_harness.js - tests of the conformance harness itself: the parser of
// `fanyi translate --raw --min-gap` output, the corpus rules, and the
// reference engine driver (bergamot.js, bergamot_run.js) on a real model.
//   node test_harness.js --model DIR   (an int8 model directory with a shortlist)
'use strict';

const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const {spawnSync} = require('node:child_process');
const {parseGapOutput, usable, comparable, edgesKept, sourceLanguage, evenlySpaced, subsetIndices, passes} = require('./conformance.js');
const {Reference, discoverModel, readTensorTypes, choosePrecision} = require('./bergamot.js');

let passed = 0;
let failed = 0;

function check(cond, what) {
    if (cond) {
        passed++;
    } else {
        failed++;
        console.log(`FAIL: ${what}`);
    }
}

function throws(fn, re, what) {
    try {
        fn();
    } catch (err) {
        check(re.test(err.message), `${what}: message ${JSON.stringify(err.message)} !~ ${re}`);
        return;
    }
    check(false, `${what}: did not throw`);
}

function testParser() {
    const r = parseGapOutput('hello world\t0.5\n\t1e-05\nline\nbreak\t3\nx\tinf\n', 4);
    check(r.length === 4, 'parser: 4 records');
    check(r[0].text === 'hello world' && r[0].gap === 0.5, 'parser: plain record');
    check(r[1].text === '' && r[1].gap === 1e-5, 'parser: empty translation, exponent gap');
    check(r[2].text === 'line\nbreak' && r[2].gap === 3, 'parser: newline inside a translation');
    check(r[3].gap === Infinity, 'parser: inf gap');
    check(parseGapOutput('a\tb\t0.25\n', 1)[0].text === 'a\tb', 'parser: TAB inside a translation');
    throws(() => parseGapOutput('no gap here\n', 1), /lacks/, 'parser: record without gap');
    throws(() => parseGapOutput('a\t1\n', 2), /1 output records for 2/, 'parser: too few records');
    throws(() => parseGapOutput('a\t1\nb\t2\n', 1), /2 output records for 1/, 'parser: too many records');
}

function testCorpusRules() {
    check(usable('你好。世界。'), 'usable: Chinese sentence ends are not split');
    check(usable('3.5 亿人口'), 'usable: decimal point');
    check(usable('他说：“好。”'), 'usable: quotes');
    check(!usable('Hello world. 你好'), 'usable: ASCII full stop + space may split');
    check(!usable('你好! 再见'), 'usable: ASCII ! + space may split');
    check(!usable('Hello world'), 'usable: no Chinese');
    check(!usable(''), 'usable: empty');
    check(usable('The price rose by 3.5% in May.', 'en'), 'usable en: decimal point, final full stop');
    check(usable('He asked: "Is it far?"', 'en'), 'usable en: question mark at the end');
    check(!usable('It is far. We walk', 'en'), 'usable en: full stop + space may split');
    check(!usable('Is it far? Yes', 'en'), 'usable en: ? + space may split');
    check(!usable('Dr. Smith is here', 'en'), 'usable en: abbreviation + space may split');
    check(!usable('他说 hello', 'en'), 'usable en: no Chinese in an English line');
    check(!usable('12345', 'en'), 'usable en: needs Latin letters');
    check(comparable('a\u0000\u0000b') === 'ab' && comparable('abc') === 'abc',
          'comparable: U+0000 is dropped');
    check(comparable('a\u0007b\u0013c\u007f\u0085d') === 'abcd',
          'comparable: BEL, DC3, DEL and C1 controls are dropped');
    check(comparable('a\tb\nc\rd\u00a0e') === 'a\tb\nc\rd\u00a0e',
          'comparable: tab, LF, CR and U+00A0 are kept');
    check(sourceLanguage({model: '/m/model.enzh.intgemm.alphas.bin'}) === 'en' &&
              sourceLanguage({model: '/m/model.zhen.bin'}) === 'zh' &&
              sourceLanguage({model: '/m/model.deen.intgemm.alphas.bin'}) === 'de',
          'sourceLanguage: from the file-name infix');
    const list = Array.from({length: 10}, (_, i) => i);
    check(JSON.stringify(evenlySpaced(list, 5)) === '[0,2,4,6,8]', 'evenlySpaced: stride');
    check(evenlySpaced(list, 20).length === 10, 'evenlySpaced: short list kept whole');
    check(evenlySpaced(list, 0).length === 0, 'evenlySpaced: zero');
    check(JSON.stringify(subsetIndices(10, 4)) === '[0,2,5,7]', 'subsetIndices: even stride');
    check(subsetIndices(10, 0).length === 10 && subsetIndices(10, 99).length === 10,
          'subsetIndices: no subset, or one as large as the set, keeps every line');
    check(passes(2, 0, 520) && !passes(3, 0, 520) && !passes(1, 1, 520),
          'passes: full set allows 2 near-tie mismatches of 520, none unexplained');
    check(passes(0, 0, 100) && !passes(1, 0, 100), 'passes: a 100-line set allows no mismatch');
}

// The subset knob of conformance.js: bad values are refused with a one-line
// error, before any model is read.
function testSubsetOption() {
    const script = path.join(__dirname, 'conformance.js');
    for (const [args, env, re] of [
             [['--subset', '0'], {}, /--subset: expected a positive whole number/],
             [['--subset', 'x'], {}, /--subset: expected a positive whole number/],
             [[], {FANYI_CONFORMANCE_LINES: '-5'}, /FANYI_CONFORMANCE_LINES: expected a positive whole number/],
         ]) {
        const r = spawnSync(process.execPath, [script, '--model', '/nonexistent', ...args],
                            {encoding: 'utf8', env: {...process.env, ...env}});
        check(r.status === 2 && re.test(r.stderr), `conformance.js ${args.join(' ')}: ${r.status} ${r.stderr}`);
    }
}

async function testReference(modelDir) {
    const files = discoverModel(modelDir);
    const kept = edgesKept(['\u2581 already here', 'hello \ufffd', '\u200bx', 'a \u2581 b', '你好。', 'x \ufffc'],
                           files.vocabs[0]);
    check(JSON.stringify(kept) === '[false,false,false,true,true,true]',
          `edgesKept: a line may not start or end with a character the normaliser drops (${JSON.stringify(kept)})`);
    check(files.shortlist !== null && files.vocabs.length >= 1, 'discover: shortlist and vocab found');
    const precision = choosePrecision(readTensorTypes(fs.readFileSync(files.model), files.model));
    check(precision === 'int8shiftAlphaAll', `precision of an int8 model: ${precision}`);
    throws(() => readTensorTypes(Buffer.from('not a model at all'), 'x.bin'), /x\.bin: not a Marian/,
           'corrupt model header');
    throws(() => discoverModel(path.join(os.tmpdir(), 'fanyi-no-such-dir')), /cannot read model directory/,
           'missing model directory');

    const lines = ['今天天气很好。', '我们明天去北京。', '这本书非常有意思。'];
    const ref = await Reference.open();
    try {
        await ref.loadModel(modelDir);
        const one = [];
        for (const l of lines)
            one.push((await ref.translate([l]))[0]);
        const again = [];
        for (const l of lines)
            again.push((await ref.translate([l]))[0]);
        check(one.every(t => typeof t === 'string'), 'reference returns strings');
        check(one.some(t => t.length > 0), 'reference translates something');
        check(JSON.stringify(one) === JSON.stringify(again), 'reference is deterministic');
        const batch = await ref.translate(lines);
        check(batch.length === 3, 'batched call returns one output per text');
    } finally {
        await ref.close();
    }

    // The command-line front end keeps empty lines and gives one line per input.
    const run = spawnSync(process.execPath, [path.join(__dirname, 'bergamot_run.js'), '--model', modelDir],
                          {input: `${lines[0]}\n\n${lines[1]}\n`, encoding: 'utf8'});
    check(run.status === 0, `bergamot_run.js exit status ${run.status}: ${run.stderr}`);
    const out = run.stdout.split('\n');
    check(out.length === 4 && out[3] === '' && out[1] === '', 'bergamot_run.js: 3 lines, empty line kept');
    const bad = spawnSync(process.execPath, [path.join(__dirname, 'bergamot_run.js'), '--model', '/nonexistent'],
                          {input: 'x\n', encoding: 'utf8'});
    check(bad.status === 1 && /\/nonexistent/.test(bad.stderr) && bad.stderr.trim().split('\n').length === 1,
          'bergamot_run.js: one-line error for a missing model');
}

async function main() {
    const i = process.argv.indexOf('--model');
    if (i < 0 || !process.argv[i + 1]) {
        console.error('usage: node test_harness.js --model DIR');
        return 2;
    }
    testParser();
    testCorpusRules();
    testSubsetOption();
    await testReference(path.resolve(process.argv[i + 1]));
    console.log(`${passed} passed, ${failed} failed`);
    return failed ? 1 : 0;
}

main().then(code => {
    process.exitCode = code;
}, err => {
    console.log(`FAIL: ${err.stack || err.message}`);
    console.log(`${passed} passed, ${failed + 1} failed`);
    process.exitCode = 1;
});
