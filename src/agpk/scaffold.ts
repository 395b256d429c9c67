import { chmod, mkdir, readdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';

import { AgpkError } from './errors.ts';
import type { AgentCommands, AgpkManifest } from './manifest.ts';
import { writeDigests } from './pack.ts';

/** Options of `scaffold`. */
export interface ScaffoldOptions {
  id: string;
  name: string;
  version: string;
}

const ID = /^[A-Za-z0-9][A-Za-z0-9._+-]{0,127}$/;
const VERSION = /^[A-Za-z0-9][A-Za-z0-9._+~-]{0,63}$/;

const ECHO = `// Reads the command's JSON arguments from stdin and prints a JSON result on stdout.
let input = '';
process.stdin.setEncoding('utf8');
for await (const chunk of process.stdin) input += chunk;
const args = JSON.parse(input || '{}');
process.stdout.write(JSON.stringify({ echo: args.message }) + '\\n');
`;

const INSTALL = `#!/bin/sh
# Runs once after the files are in place. AGPK_INSTALL_ROOT is the package's install folder.
set -eu
mkdir -p "$AGPK_INSTALL_ROOT/var"
`;

const UNINSTALL = `#!/bin/sh
# Runs before the install folder is removed.
set -eu
rm -rf "$AGPK_INSTALL_ROOT/var"
`;

/**
 * The MIT license, the scaffold's default (see docs/decisions/agpk.md): a package without one gets
 * the market's `license.missing` finding. The copyright line names the package until its authors
 * put their own names there, or replace the whole file with the license they choose.
 */
function mitLicense(year: number, holder: string): string {
  return `MIT License

Copyright (c) ${year} the authors of ${holder}

Permission is hereby granted, free of charge, to any person obtaining a copy
of this software and associated documentation files (the "Software"), to deal
in the Software without restriction, including without limitation the rights
to use, copy, modify, merge, publish, distribute, sublicense, and/or sell
copies of the Software, and to permit persons to whom the Software is
furnished to do so, subject to the following conditions:

The above copyright notice and this permission notice shall be included in all
copies or substantial portions of the Software.

THE SOFTWARE IS PROVIDED "AS IS", WITHOUT WARRANTY OF ANY KIND, EXPRESS OR
IMPLIED, INCLUDING BUT NOT LIMITED TO THE WARRANTIES OF MERCHANTABILITY,
FITNESS FOR A PARTICULAR PURPOSE AND NONINFRINGEMENT. IN NO EVENT SHALL THE
AUTHORS OR COPYRIGHT HOLDERS BE LIABLE FOR ANY CLAIM, DAMAGES OR OTHER
LIABILITY, WHETHER IN AN ACTION OF CONTRACT, TORT OR OTHERWISE, ARISING FROM,
OUT OF OR IN CONNECTION WITH THE SOFTWARE OR THE USE OR OTHER DEALINGS IN THE
SOFTWARE.
`;
}

/** The command id prefix for a package id: lower case, characters outside [a-z0-9._-] become '-'. */
export function commandPrefix(id: string): string {
  return id.toLowerCase().replace(/[^a-z0-9._-]/g, '-');
}

/**
 * Creates a package in `dir` (absent or empty) that validates as is: manifest, one `node` command
 * echoing its input, USAGE.md, an MIT LICENSE (the year from `now`), INSTALL/UNINSTALL hooks,
 * and DIGESTS.
 */
export async function scaffoldPackage(
  dir: string,
  options: ScaffoldOptions,
  now: () => Date = () => new Date(),
): Promise<{ dir: string; files: string[] }> {
  if (!ID.test(options.id))
    throw new AgpkError('bad_request', `invalid --id "${options.id}": letters, digits and . _ + - (max 128)`);
  if (!VERSION.test(options.version))
    throw new AgpkError(
      'bad_request',
      `invalid --version "${options.version}": letters, digits and . _ + ~ -, starting with a letter or digit (max 64; semantic versioning such as 1.0.0 recommended)`,
    );
  if (options.name.trim() === '') throw new AgpkError('bad_request', '--name must not be empty');
  await mkdir(dir, { recursive: true });
  if ((await readdir(dir)).length > 0)
    throw new AgpkError('conflict', `${dir} is not empty: scaffold makes a new package in an empty or absent folder`);

  const prefix = commandPrefix(options.id);
  const manifest: AgpkManifest = {
    agpk_version: '1.0',
    id: options.id,
    name: options.name,
    version: options.version,
    description: `${options.name}: describe what this package does.`,
    source_class: 'agent_package',
    os: ['linux', 'darwin'],
    arch: ['x64', 'arm64'],
    ahcp: { signed: false, surface: null, badge: null, signature: null },
    lifecycle: { install: 'INSTALL', uninstall: 'UNINSTALL', min_os: '0.1' },
    cli: { apt_style: false, provides: [] },
    depends: [],
    conflicts: [],
  };
  const commands: AgentCommands = {
    agpk_commands_version: '1.0',
    commands: [
      {
        id: `${prefix}.echo`,
        summary: 'Echo a message back as JSON.',
        driver: { kind: 'node', entry: 'payload/echo.mjs' },
        input_schema: {
          type: 'object',
          properties: { message: { type: 'string', minLength: 1 } },
          required: ['message'],
          additionalProperties: false,
        },
        output: 'json',
        timeout_ms: 10_000,
      },
    ],
  };
  const usage = `# ${options.name}\n\nAfter install, list the commands with \`plaza agpk list-commands --package-id ${options.id}\` and run\n\n    plaza agpk invoke ${prefix}.echo --args '{"message":"hello"}'\n`;
  await mkdir(join(dir, 'payload'));
  await writeFile(join(dir, 'agpk.json'), `${JSON.stringify(manifest, null, 2)}\n`);
  await writeFile(join(dir, 'agent-commands.json'), `${JSON.stringify(commands, null, 2)}\n`);
  await writeFile(join(dir, 'USAGE.md'), usage);
  await writeFile(join(dir, 'LICENSE'), mitLicense(now().getUTCFullYear(), options.name));
  await writeFile(join(dir, 'payload', 'echo.mjs'), ECHO);
  await writeFile(join(dir, 'INSTALL'), INSTALL);
  await writeFile(join(dir, 'UNINSTALL'), UNINSTALL);
  await chmod(join(dir, 'INSTALL'), 0o755);
  await chmod(join(dir, 'UNINSTALL'), 0o755);
  await writeDigests(dir);
  return {
    dir,
    files: [
      'agpk.json',
      'agent-commands.json',
      'USAGE.md',
      'LICENSE',
      'payload/echo.mjs',
      'INSTALL',
      'UNINSTALL',
      'DIGESTS',
    ],
  };
}
