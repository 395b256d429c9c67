/**
 * Package signatures: `keygen`, `sign`, `verify-signature` and `trust`, the Ed25519 keys a
 * package is signed with and the trusted keys an install checks it against.
 * Split from agpk.ts so that each group of `plaza agpk` subcommands reads on its own.
 */
import type { Command } from 'commander';

import { collect, context, type Env, EXIT, jsonOption, out, run } from '../agpk-support.ts';

/** Adds `keygen`, `sign`, `verify-signature` and `trust` to the `agpk` group. */
export function registerSigningCommands(agpk: Command, env: Env): void {
  agpk
    .command('keygen <prefix>')
    .description('create an Ed25519 signing key: <prefix>.key.pem and <prefix>.pub.pem')
    .addOption(jsonOption())
    .action((prefix: string, o: { json?: boolean }) =>
      run(!!o.json, async (a) => {
        const r = await a.generateSigningKey(prefix);
        out(
          !!o.json,
          { ok: true, ...r },
          () => `private key ${r.privateKey}\npublic key  ${r.publicKey}\nkid ${r.kid}`,
        );
      }),
    );

  agpk
    .command('sign <target>')
    .description('sign DIGESTS with an Ed25519 key; records the JWS in ahcp.signature')
    .requiredOption('--key <file>', 'private key (PEM)')
    .addOption(jsonOption())
    .action((target: string, o: { key: string; json?: boolean }) =>
      run(!!o.json, async (a) => {
        const r = await a.signTarget(target, o.key);
        out(
          !!o.json,
          { ok: true, ...r },
          () => `signed (kid ${r.kid})${r.archive ? `\n${r.archive.path}\nsha256 ${r.archive.sha256}` : ''}`,
        );
      }),
    );

  agpk
    .command('verify-signature <target>')
    .description('check the signature of a package folder or archive against trusted keys')
    .option('--trust-key <file>', 'trusted public key (PEM), repeatable', collect)
    .addOption(jsonOption())
    .action((target: string, o: { trustKey?: string[]; json?: boolean }) =>
      run(!!o.json, async (a) => {
        const ctx = context(a, env, { json: !!o.json, ...(o.trustKey ? { trustKey: o.trustKey } : {}) });
        const local = await import('node:fs/promises').then((fs) =>
          fs.readdir(ctx.registry.trustedKeysDir).catch(() => [] as string[]),
        );
        const trusted = await a.loadTrustedKeyIds([
          ...local.filter((n) => n.endsWith('.pem')).map((n) => `${ctx.registry.trustedKeysDir}/${n}`),
          ...(o.trustKey ?? []),
        ]);
        const r = await a.withPackageDir(target, async (dir) => {
          const { readFile } = await import('node:fs/promises');
          const manifest = await a.readManifest(dir);
          const signature = manifest.ahcp?.signature;
          if (manifest.ahcp?.signed !== true || typeof signature !== 'string')
            return { signed: false, valid: false, trusted: false, kid: null, reason: 'unsigned package' };
          const check = await a.checkSignature(
            await readFile(`${dir}/DIGESTS`).catch(() => Buffer.alloc(0)),
            signature,
          );
          return {
            signed: true,
            valid: check.valid,
            trusted: check.valid && check.kid !== null && trusted.has(check.kid),
            kid: check.kid,
            reason: check.reason ?? null,
          };
        });
        const ok = r.valid && r.trusted;
        out(!!o.json, { ok, ...r }, () =>
          ok
            ? `signature valid, trusted key ${r.kid ?? ''}`
            : `signature ${r.signed ? (r.valid ? `valid but key ${r.kid ?? ''} is not trusted` : `INVALID: ${r.reason ?? ''}`) : 'missing (unsigned package)'}`,
        );
        return ok ? EXIT.ok : EXIT.failure;
      }),
    );

  agpk
    .command('trust <public-key>')
    .description('trust an Ed25519 public key (PEM) for package signatures')
    .addOption(jsonOption())
    .action((file: string, o: { json?: boolean }) =>
      run(!!o.json, async (a) => {
        const { mkdir, copyFile } = await import('node:fs/promises');
        const [kid] = [...(await a.loadTrustedKeyIds([file]))];
        const ctx = context(a, env, { json: !!o.json });
        await mkdir(ctx.registry.trustedKeysDir, { recursive: true });
        const dest = `${ctx.registry.trustedKeysDir}/${kid!}.pem`;
        await copyFile(file, dest);
        out(!!o.json, { ok: true, kid, path: dest }, () => `trusted ${kid!}`);
      }),
    );
}
