import { AgpkError } from './errors.ts';
import { type HookPreview, previewHook } from './hook-preview.ts';
import type { StagedPackage } from './plan.ts';

/** How the human approved (or can approve) an operation (spec §3.4). */
export interface Approval {
  /** `--approve`: the session is pre-approved. */
  approve?: boolean;
  /** `-y`: the explicit acknowledgement an unsigned package needs. */
  yes?: boolean;
  /** Asks the human a yes/no question (a TTY prompt); absent when nobody can answer. */
  confirm?: (question: string) => Promise<boolean>;
  /** Shows the structured summary before asking. */
  show?: (summary: OperationSummary) => void;
}

/** The structured summary a human approves. */
export interface OperationSummary {
  action: 'install' | 'upgrade' | 'remove';
  packages: Array<{
    package_id: string;
    name: string;
    version: string;
    from_version?: string;
    vendor: string | null;
    source: string;
    sha256: string;
    signed: boolean;
    trusted_signature: boolean;
    signature_kid: string | null;
    commands: string[];
    depends: string[];
    /** The lifecycle hooks this operation runs for the package (none: an empty list). */
    hooks: HookPreview[];
  }>;
}

/**
 * Summarises staged packages for approval, with the hook each will run: `upgrade` (else its
 * install hook) for the package `from` names, `install` for the others.
 */
export async function summarise(
  action: OperationSummary['action'],
  order: StagedPackage[],
  from?: { id: string; version: string },
): Promise<OperationSummary> {
  return {
    action,
    packages: await Promise.all(
      order.map(async (s) => {
        const upgrading = from?.id === s.manifest.id;
        const hook = await previewHook(s.stageDir, s.manifest.lifecycle, upgrading ? 'upgrade' : 'install');
        return {
          package_id: s.manifest.id,
          name: s.manifest.name,
          version: s.manifest.version,
          ...(upgrading ? { from_version: from.version } : {}),
          vendor: s.manifest.vendor?.name ?? null,
          source: s.source.uri,
          sha256: s.source.sha256,
          signed: s.signature.signed,
          trusted_signature: s.signature.trusted,
          signature_kid: s.signature.kid,
          commands: s.commands.map((c) => c.id),
          depends: s.manifest.depends ?? [],
          hooks: hook ? [hook] : [],
        };
      }),
    ),
  };
}

/**
 * Obtains the human's approval or throws a `forbidden` AgpkError. Without `--approve` a prompt is
 * required; without one the operation is refused, never silently done. Packages without a trusted
 * signature additionally need `-y` (or an explicit yes at a second prompt).
 */
export async function obtainApproval(summary: OperationSummary, approval: Approval): Promise<void> {
  approval.show?.(summary);
  const names = summary.packages.map((p) => `${p.package_id}@${p.version}`).join(', ');
  if (!approval.approve) {
    if (!approval.confirm)
      throw new AgpkError(
        'forbidden',
        `refused: ${summary.action} of ${names} needs human approval (confirm on a terminal or pass --approve)`,
      );
    if (!(await approval.confirm(`${summary.action} ${names}? [y/N] `)))
      throw new AgpkError('forbidden', `${summary.action} declined`);
  }
  const unsigned = summary.packages.filter((p) => !p.trusted_signature).map((p) => p.package_id);
  if (summary.action !== 'remove' && unsigned.length > 0 && !approval.yes) {
    const what = `${unsigned.join(', ')} ${unsigned.length === 1 ? 'is' : 'are'} not signed by a trusted key`;
    if (!approval.confirm)
      throw new AgpkError(
        'forbidden',
        `refused: ${what}; a package without a trusted signature needs an explicit -y (or trust its key: --trust-key)`,
      );
    if (!(await approval.confirm(`${what}. Install anyway? [y/N] `)))
      throw new AgpkError('forbidden', `${summary.action} declined (unsigned)`);
  }
}
