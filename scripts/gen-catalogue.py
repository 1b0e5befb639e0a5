#!/usr/bin/env python3
"""gen-catalogue.py - the built-in catalogue of Firefox Translations models.

Reads Mozilla's Remote Settings model records (the snapshot
../shared/data/firefox-models-2025-10-17.json) and writes
src/model/catalogue.c: the catalogue as JSON text in the manifest schema
(src/model/manifest.h, docs/models.md), compiled into fanyi.

    scripts/gen-catalogue.py [--input FILE] [--output FILE]   write the C file
    scripts/gen-catalogue.py --check    exit 1 when the committed file is stale
    scripts/gen-catalogue.py --json     print the JSON document instead

What goes in: every direction of the "desktop-release" scope, plus the
"nightly" scope's directions that release does not have (marked "channel":
"nightly"); the Android variants are left out (same names, other files).
Per direction: the name as fanyi spells a direction (normalised tags joined
by "-": zh-Hans-en -> zh-en, en-zh-Hans -> en-zh, a Traditional Chinese
model would be zh-Hant-en), source, target, version (the record's, as
Firefox ships it), legacy_version (the legacy collection's version of the
same bytes), architecture, and per file its name, size, sha256 and the
location of the uncompressed copy (v1_location: byte-identical to the model
file; the v2 attachments are zstd-compressed).

Python 3 standard library only; the output depends on the input alone.
"""
import argparse
import json
import os
import re
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
INPUT = os.path.join(ROOT, '..', 'shared', 'data', 'firefox-models-2025-10-17.json')
OUTPUT = os.path.join(ROOT, 'src', 'model', 'catalogue.c')

# Subtags that make Chinese Traditional (src/util/lang.c).
HANT_SUBTAGS = {'hant', 'tw', 'hk', 'mo'}


def normalize_tag(tag):
    """A language tag as src/util/lang.h normalises it: the lower-case
    primary subtag, regions and scripts dropped, except Chinese, which is zh
    (Simplified) or zh-Hant (a Hant, TW, HK or MO subtag, or 'zt'), and
    Serbian, which keeps a script subtag."""
    parts = re.split(r'[-_]', tag.strip())
    if not re.fullmatch(r'[A-Za-z]{2,3}', parts[0]) or not all(re.fullmatch(r'[A-Za-z0-9]+', p) for p in parts[1:]):
        raise ValueError(f'not a language tag: {tag!r}')
    primary = parts[0].lower()
    if primary == 'zt' or (primary == 'zh' and any(p.lower() in HANT_SUBTAGS for p in parts[1:])):
        return 'zh-Hant'
    scripts = [p for p in parts[1:] if len(p) == 4 and p.isalpha()]
    if primary == 'sr' and scripts:
        return f'sr-{scripts[0].capitalize()}'
    return primary


def direction(source, target):
    return f'{normalize_tag(source)}-{normalize_tag(target)}'


def entry(record, channel):
    files = []
    for f in record['files']:
        for key in ('name', 'size', 'sha256', 'v1_location'):
            if not f.get(key):
                raise ValueError(f"{record['source']}-{record['target']}: file {f.get('name')} lacks {key}")
        files.append({'name': f['name'], 'size': f['size'], 'sha256': f['sha256'].lower(),
                      'location': f['v1_location']})
    legacy = sorted({f.get('v1_version') or '' for f in record['files']})
    out = {
        'source': normalize_tag(record['source']),
        'target': normalize_tag(record['target']),
        'version': record['version'],
        'legacy_version': legacy[0] if len(legacy) == 1 else ','.join(legacy),
        'architecture': record['architecture'],
        'channel': channel,
        'files': files,
    }
    return out


def catalogue(data):
    scopes = data['scopes']
    models = {}
    for scope, channel in (('desktop-release', 'release'), ('nightly', 'nightly')):
        for key, record in sorted(scopes.get(scope, {}).items()):
            name = direction(record['source'], record['target'])
            if name in models:
                if channel == 'nightly':
                    continue  # release has it
                raise ValueError(f'two {scope} records are both {name}')
            models[name] = entry(record, channel)
    return {
        'schema': 1,
        'catalogue': 'Firefox Translations models (Remote Settings, 2025-10-17): '
                     'desktop release directions and nightly-only ones',
        'base_url': data['base_url'],
        'models': dict(sorted(models.items())),
    }


def to_json(cat):
    """Pretty JSON with one file per line (diffs stay readable)."""
    lines = ['{']
    head = [f'  {json.dumps(k)}: {json.dumps(cat[k])},' for k in ('schema', 'catalogue', 'base_url')]
    lines += head
    lines.append('  "models": {')
    names = list(cat['models'])
    for i, name in enumerate(names):
        m = cat['models'][name]
        fields = ', '.join(f'{json.dumps(k)}: {json.dumps(m[k])}'
                           for k in ('source', 'target', 'version', 'legacy_version', 'architecture', 'channel'))
        lines.append(f'    {json.dumps(name)}: {{{fields}, "files": [')
        for j, f in enumerate(m['files']):
            lines.append('      ' + json.dumps(f, separators=(', ', ': ')) + (',' if j + 1 < len(m['files']) else ''))
        lines.append('    ]}' + (',' if i + 1 < len(names) else ''))
    lines.append('  }')
    lines.append('}')
    text = '\n'.join(lines) + '\n'
    if json.loads(text) != cat:
        raise AssertionError('pretty printer lost data')
    return text


def c_string_lines(text):
    out = []
    for line in text.splitlines(True):
        esc = line.replace('\\', '\\\\').replace('"', '\\"').replace('\n', '\\n')
        out.append(f'    "{esc}"')
    return '\n'.join(out)


def to_c(cat, text):
    n = len(cat['models'])
    nightly = sum(1 for m in cat['models'].values() if m['channel'] == 'nightly')
    return f'''/* catalogue.c - GENERATED by scripts/gen-catalogue.py: do not edit.
 *
 * The built-in catalogue of Firefox Translations models: {n} directions
 * ({n - nightly} desktop release, {nightly} nightly only), from Mozilla's Remote
 * Settings records (../shared/data/firefox-models-2025-10-17.json), as JSON
 * in the manifest schema (model/manifest.h). Every file's location is the
 * uncompressed attachment, byte-identical to the installed file.
 * Regenerate: scripts/gen-catalogue.py; test: modelmgmt_catalogue.
 */
#include <stddef.h>

extern const char fy_catalogue_json[];
extern const size_t fy_catalogue_json_len;

/* clang-format off */
const char fy_catalogue_json[] =
{c_string_lines(text)};
/* clang-format on */

const size_t fy_catalogue_json_len = sizeof fy_catalogue_json - 1;
'''


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    ap.add_argument('--input', default=INPUT, help='Remote Settings records (JSON)')
    ap.add_argument('--output', default=OUTPUT, help='the C file to write')
    ap.add_argument('--check', action='store_true', help='compare with --output instead of writing')
    ap.add_argument('--json', action='store_true', help='print the JSON document')
    a = ap.parse_args()
    try:
        with open(a.input, encoding='utf-8') as f:
            cat = catalogue(json.load(f))
    except (OSError, ValueError, KeyError) as e:
        sys.exit(f'gen-catalogue: {a.input}: {e}')
    text = to_json(cat)
    if a.json:
        sys.stdout.write(text)
        return 0
    c = to_c(cat, text)
    if a.check:
        try:
            with open(a.output, encoding='utf-8') as f:
                same = f.read() == c
        except OSError as e:
            sys.exit(f'gen-catalogue: {a.output}: {e}')
        if not same:
            sys.exit(f'gen-catalogue: {a.output} is not what {a.input} gives; run scripts/gen-catalogue.py')
        print(f'{a.output}: up to date ({len(cat["models"])} directions)')
        return 0
    tmp = a.output + '.tmp'
    with open(tmp, 'w', encoding='utf-8') as f:
        f.write(c)
    os.replace(tmp, a.output)
    print(f'{a.output}: {len(cat["models"])} directions')
    return 0


if __name__ == '__main__':
    sys.exit(main())
