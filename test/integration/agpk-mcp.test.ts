/**
 * `plaza agpk mcp` (the real command, a child process) through the MCP SDK's own client over
 * stdio, on a temp AGPK_HOME with scaffolded packages installed: it offers exactly `agpk.invoke`
 * and `agpk.list_commands`; the list is read from the registry at each call (a package installed
 * or removed while it runs shows at once); invoke returns the command's output and answers every
 * refusal in-band (`isError`) with the CLI's words — arguments against the input schema, an
 * unknown command, a package changed after install, a failing or timed-out command; an unknown
 * tool is a protocol error. Calls still running are answered when the client closes stdin, and a
 * command is stopped when its call is cancelled or the client stops the server.
 */
import { once } from 'node:events';
import { existsSync, readFileSync } from 'node:fs';
import { chmod, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';

import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import {
  type AgpkContext,
  createRegistry,
  installPackages,
  loadAgpkSchemas,
  packPackage,
  removePackage,
  scaffoldPackage,
} from '../../src/agpk/index.ts';
import { tempDir } from '../support/agpk.ts';
import { startChild } from '../support/children.ts';
import { childEnv, plazaArgs, runPlaza } from '../support/cli.ts';

let tmp: Awaited<ReturnType<typeof tempDir>>;
let home: string;
let ctx: AgpkContext;
let client: Client;

/** Extra commands of a package: `script` entries run by /bin/sh. */
type Script = { id: string; body: string; timeout_ms?: number };

/** Scaffolds (echo command included), adds `scripts`, packs and installs `id` 1.0.0 into `home`. */
async function install(id: string, scripts: Script[] = []): Promise<void> {
  const dir = join(tmp.path, 'src', id);
  await scaffoldPackage(dir, { id, name: id, version: '1.0.0' });
  const surface = JSON.parse(await readFile(join(dir, 'agent-commands.json'), 'utf8')) as { commands: unknown[] };
  for (const s of scripts) {
    const entry = `payload/${s.id.split('.').pop()!}.sh`;
    await writeFile(join(dir, entry), s.body);
    await chmod(join(dir, entry), 0o755);
    surface.commands.push({
      id: s.id,
      driver: { kind: 'script', entry },
      input_schema: { type: 'object' },
      ...(s.timeout_ms ? { timeout_ms: s.timeout_ms } : {}),
    });
  }
  await writeFile(join(dir, 'agent-commands.json'), JSON.stringify(surface, null, 2));
  await installPackages(ctx, [(await packPackage(dir)).archive], { approve: true, yes: true });
}

/** A client of a fresh `plaza agpk mcp` on `home`, with the server's stderr and pid. */
async function connect(): Promise<{ client: Client; pid: number; stderr: () => string }> {
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: plazaArgs('agpk', 'mcp'),
    env: childEnv({ AGPK_HOME: home }) as Record<string, string>,
    stderr: 'pipe',
  });
  let stderr = '';
  transport.stderr?.on('data', (d: Buffer) => (stderr += d.toString()));
  const c = new Client({ name: 'agpk-test', version: '1' });
  await c.connect(transport);
  return { client: c, pid: transport.pid!, stderr: () => stderr };
}

const invoke = (c: Client, command_id: string, args?: unknown) =>
  c.callTool({
    name: 'agpk.invoke',
    arguments: { command_id, ...(args === undefined ? {} : { args }) },
  }) as Promise<CallToolResult>;
const text = (r: CallToolResult) => r.content.map((c) => (c.type === 'text' ? c.text : '')).join('\n');
/** Running (a killed process nobody has reaped yet is a zombie, state Z: not running). */
const alive = (pid: number) =>
  existsSync(`/proc/${pid}/stat`) && !/^\d+ \(.*\) Z/.test(readFileSync(`/proc/${pid}/stat`, 'utf8'));
const sleeperPid = (id: string) => join(ctx.registry.packagesDir, id, '1.0.0', 'var', 'sleeper.pid');
const readPid = (file: string) => (existsSync(file) ? Number(readFileSync(file, 'utf8').trim()) || 0 : 0);

beforeAll(async () => {
  tmp = await tempDir();
  home = join(tmp.path, 'home');
  ctx = {
    registry: createRegistry(home),
    schemas: loadAgpkSchemas(),
    shareUrl: 'https://127.0.0.1:9',
    hostVersion: '0.1.0',
    baseEnv: { PATH: process.env.PATH },
  };
  await install('acme.demo');
  await install('acme.tools', [
    { id: 'acme.tools.fail', body: 'echo partial\necho "bad input file" >&2\nexit 3\n' },
    { id: 'acme.tools.slow', body: 'sleep 5\n', timeout_ms: 500 },
    // Starts a sleeper (in the command's process group), notes its pid, and waits for it.
    { id: 'acme.tools.hang', body: 'sleep 30 &\necho $! > "$AGPK_INSTALL_ROOT/var/sleeper.pid"\nwait\n' },
  ]);
  client = (await connect()).client;
});
afterAll(async () => {
  await client?.close();
  await tmp?.dispose();
});

describe('plaza agpk mcp', () => {
  it('offers agpk.invoke and agpk.list_commands, and no tool that installs or removes', async () => {
    const { tools } = await client.listTools();
    expect(tools.map((t) => t.name).sort()).toEqual(['agpk.invoke', 'agpk.list_commands']);
    for (const t of tools) expect(t.name).toMatch(/^[A-Za-z0-9._-]{1,128}$/);
    const byName = Object.fromEntries(tools.map((t) => [t.name, t]));
    expect(byName['agpk.list_commands']!.annotations).toMatchObject({ readOnlyHint: true });
    expect(byName['agpk.invoke']!.annotations).toMatchObject({ readOnlyHint: false });
    expect(byName['agpk.invoke']!.inputSchema).toMatchObject({
      required: ['command_id'],
      properties: { command_id: { type: 'string' }, args: { type: 'object' } },
    });
    expect(client.getServerCapabilities()?.tools).toEqual({ listChanged: false });
  });

  it('lists the installed commands with their input schemas, optionally for one package', async () => {
    const all = (await client.callTool({ name: 'agpk.list_commands', arguments: {} })) as CallToolResult;
    expect(all.isError).toBeFalsy();
    const commands = (all.structuredContent as { commands: Array<Record<string, unknown>> }).commands;
    expect(commands.map((c) => c.id)).toEqual(
      expect.arrayContaining([
        'acme.demo.echo',
        'acme.tools.fail',
        'acme.tools.hang',
        'acme.tools.slow',
        'acme.tools.echo',
      ]),
    );
    expect(commands.find((c) => c.id === 'acme.demo.echo')).toMatchObject({
      package_id: 'acme.demo',
      package_version: '1.0.0',
      input_schema: {
        type: 'object',
        properties: { message: { type: 'string', minLength: 1 } },
        required: ['message'],
      },
    });
    expect(JSON.parse(text(all))).toEqual(all.structuredContent);
    const one = (await client.callTool({
      name: 'agpk.list_commands',
      arguments: { package_id: 'acme.demo' },
    })) as CallToolResult;
    expect((one.structuredContent as { commands: Array<{ id: string }> }).commands.map((c) => c.id)).toEqual([
      'acme.demo.echo',
    ]);
    const none = (await client.callTool({
      name: 'agpk.list_commands',
      arguments: { package_id: 'acme.absent' },
    })) as CallToolResult;
    expect(none).toMatchObject({ isError: true, content: [{ type: 'text', text: 'acme.absent is not installed' }] });
  });

  it('sees a package installed or removed while it runs', async () => {
    const ids = async () =>
      (
        (await client.callTool({ name: 'agpk.list_commands', arguments: {} })).structuredContent as {
          commands: Array<{ id: string }>;
        }
      ).commands.map((c) => c.id);
    expect(await ids()).not.toContain('acme.late.echo');
    await install('acme.late');
    expect(await ids()).toContain('acme.late.echo');
    expect((await invoke(client, 'acme.late.echo', { message: 'late' })).structuredContent).toEqual({ echo: 'late' });
    await removePackage(ctx, 'acme.late', { approve: true });
    expect(await ids()).not.toContain('acme.late.echo');
    expect(text(await invoke(client, 'acme.late.echo', { message: 'late' }))).toBe(
      'unknown command id "acme.late.echo" (see `plaza agpk list-commands`)',
    );
  });

  it("returns the command's JSON output as text and structured content", async () => {
    const result = await invoke(client, 'acme.demo.echo', { message: 'hello over MCP' });
    expect(result.isError).toBeFalsy();
    expect(result.structuredContent).toEqual({ echo: 'hello over MCP' });
    expect(result.content).toEqual([{ type: 'text', text: '{"echo":"hello over MCP"}' }]);
  });

  it.each([
    [
      'a field of the wrong type',
      { message: 3 },
      'arguments do not match the input schema of acme.demo.echo: $.message must be string',
    ],
    [
      'a missing required field',
      {},
      'arguments do not match the input schema of acme.demo.echo: $ missing required property "message"',
    ],
    [
      'a field the schema does not allow',
      { message: 'x', loud: true },
      'arguments do not match the input schema of acme.demo.echo: $ must NOT have additional property "loud"',
    ],
    [
      'args that are not an object',
      [1],
      'invalid arguments for agpk.invoke: args: Invalid input: expected record, received array',
    ],
  ])('refuses %s in-band, naming it', async (_, args, message) => {
    const result = await invoke(client, 'acme.demo.echo', args);
    expect(result.isError).toBe(true);
    expect(text(result)).toBe(message);
  });

  it('refuses a call without a command id, and an unknown command, in-band', async () => {
    const missing = (await client.callTool({ name: 'agpk.invoke', arguments: { args: {} } })) as CallToolResult;
    expect(missing).toMatchObject({
      isError: true,
      content: [
        { text: 'invalid arguments for agpk.invoke: command_id: Invalid input: expected string, received undefined' },
      ],
    });
    const unknown = await invoke(client, 'acme.demo.nope', {});
    expect(unknown).toMatchObject({ isError: true, structuredContent: { error: { code: 'not_found' } } });
    expect(text(unknown)).toBe('unknown command id "acme.demo.nope" (see `plaza agpk list-commands`)');
  });

  it('answers an unknown tool with a protocol error (-32602)', async () => {
    await expect(
      client.callTool({ name: 'agpk.install', arguments: { package_id: 'acme.demo' } }),
    ).rejects.toMatchObject({ code: -32602, message: expect.stringContaining('Unknown tool: agpk.install') });
  });

  it('refuses a package whose installed files changed, as the CLI does', async () => {
    await install('acme.tamper');
    await writeFile(
      join(ctx.registry.packagesDir, 'acme.tamper', '1.0.0', 'payload', 'echo.mjs'),
      'process.stdout.write(JSON.stringify({ echo: "not what was installed" }))\n',
    );
    const result = await invoke(client, 'acme.tamper.echo', { message: 'x' });
    const refusal = 'refused: acme.tamper 1.0.0 was changed after install (changed payload/echo.mjs)';
    expect(result).toMatchObject({ isError: true, structuredContent: { error: { code: 'conflict' } } });
    expect(text(result)).toContain(refusal);
    const cli = await runPlaza(['agpk', 'invoke', 'acme.tamper.echo', '--args', '{"message":"x"}'], {
      AGPK_HOME: home,
    });
    expect(cli.code).toBe(1);
    expect(cli.stderr).toContain(refusal);
  });

  it('reports a command that fails or times out as an error with its exit code and stderr', async () => {
    const failed = await invoke(client, 'acme.tools.fail');
    expect(failed).toMatchObject({ isError: true, structuredContent: { ok: false, exit_code: 3, timed_out: false } });
    expect(text(failed)).toBe(
      'acme.tools.fail (acme.tools) failed with exit code 3\nstderr:\nbad input file\noutput:\npartial',
    );
    const slow = await invoke(client, 'acme.tools.slow');
    expect(slow).toMatchObject({ isError: true, structuredContent: { timed_out: true } });
    expect(text(slow)).toMatch(/^acme\.tools\.slow \(acme\.tools\) timed out and was stopped after \d+ ms$/);
  });
});

describe('plaza agpk mcp, ending', () => {
  it('answers the calls still running when the client closes stdin, then exits 0', async () => {
    const child = startChild(process.execPath, plazaArgs('agpk', 'mcp'), {
      env: childEnv({ AGPK_HOME: home }),
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    let stdout = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    const messages = [
      {
        jsonrpc: '2.0',
        id: 1,
        method: 'initialize',
        params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'pipe', version: '1' } },
      },
      { jsonrpc: '2.0', method: 'notifications/initialized' },
      {
        jsonrpc: '2.0',
        id: 2,
        method: 'tools/call',
        params: { name: 'agpk.invoke', arguments: { command_id: 'acme.demo.echo', args: { message: 'piped' } } },
      },
    ];
    child.stdin.end(messages.map((m) => `${JSON.stringify(m)}\n`).join(''));
    const [code] = (await once(child, 'exit')) as [number | null];
    expect(code).toBe(0);
    const answers = stdout
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { id: number; result?: CallToolResult });
    expect(answers.find((a) => a.id === 2)?.result).toMatchObject({ structuredContent: { echo: 'piped' } });
  });

  it('stops a running command when its call is cancelled', async () => {
    const pidFile = sleeperPid('acme.tools');
    await rmPid(pidFile);
    const controller = new AbortController();
    const call = client.callTool({ name: 'agpk.invoke', arguments: { command_id: 'acme.tools.hang' } }, undefined, {
      signal: controller.signal,
    });
    await expect.poll(() => readPid(pidFile), { timeout: 10_000 }).toBeGreaterThan(0);
    const sleeper = readPid(pidFile);
    expect(alive(sleeper)).toBe(true);
    controller.abort();
    await expect(call).rejects.toThrow();
    await expect.poll(() => alive(sleeper), { timeout: 5_000 }).toBe(false);
    // The session goes on.
    expect((await invoke(client, 'acme.demo.echo', { message: 'still here' })).structuredContent).toEqual({
      echo: 'still here',
    });
  });

  it('stops a running command when the client stops the server', async () => {
    const pidFile = sleeperPid('acme.tools');
    await rmPid(pidFile);
    const session = await connect();
    void session.client
      .callTool({ name: 'agpk.invoke', arguments: { command_id: 'acme.tools.hang' } })
      .catch(() => undefined);
    await expect.poll(() => readPid(pidFile), { timeout: 10_000 }).toBeGreaterThan(0);
    const sleeper = readPid(pidFile);
    // close(): stdin ends, the call is still running, so after 2 s the client sends SIGTERM.
    await session.client.close();
    expect(alive(session.pid)).toBe(false);
    await expect.poll(() => alive(sleeper), { timeout: 5_000 }).toBe(false);
  });
});

async function rmPid(file: string): Promise<void> {
  await writeFile(file, '');
}
