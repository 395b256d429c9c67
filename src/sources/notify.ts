import type { MailMessage } from '../mail/index.ts';
import type { PackageSource } from './types.ts';

/** The system e-mail a known user gets when their source is rejected (spec §3.2, §6). */
export function rejectionMail(source: PackageSource, to: string, publicBaseUrl: string): MailMessage {
  const findings = source.findings.filter((f) => f.severity === 'high' || f.severity === 'medium');
  return {
    to,
    subject: `Package source rejected: ${source.packageId} ${source.version}`,
    text: [
      `Plaza rejected the package source you registered:`,
      '',
      `  package_id:   ${source.packageId}`,
      `  version:      ${source.version}`,
      `  download_uri: ${source.downloadUri}`,
      `  sha256:       ${source.sha256}`,
      `  failed at:    ${source.stage}`,
      '',
      `Reason: ${source.reason ?? 'not stated'}`,
      ...(findings.length > 0
        ? ['', 'Findings:', ...findings.map((f) => `  - [${f.severity}] ${f.id}: ${f.message}`)]
        : []),
      '',
      `Details and history: ${publicBaseUrl.replace(/\/+$/, '')}/api/agpk/sources/${source.id}`,
      'Fix the package, publish it again and register the new download_uri and sha256.',
    ].join('\n'),
  };
}
