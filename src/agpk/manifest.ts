/** Types of the AGPK v1 package files (the JSON Schemas in config/agpk/v1 are the contract). */

/** `device_face` of an edge package (capability_domain iot_edge). */
export interface DeviceFace {
  standard: 'agpk.device-face.v1';
  read: boolean;
  write: boolean;
  acl: boolean;
  subscribe?: boolean;
  transports: string[];
}

/** Install lifecycle declared by a package. */
export interface Lifecycle {
  install?: string;
  upgrade?: string;
  uninstall?: string;
  min_os?: string;
  hook_timeout_seconds?: number;
}

/** `agpk.json` (spec §2.8); additional properties are allowed. */
export interface AgpkManifest {
  agpk_version: '1.0';
  id: string;
  name: string;
  version: string;
  description?: string;
  os?: string[];
  arch?: string[];
  vendor?: { name?: string; url?: string };
  source_class?: 'agent_package' | 'preinstall';
  ahcp?: { signed?: boolean; surface?: string | null; badge?: string | null; signature?: string | null };
  lifecycle?: Lifecycle;
  cli?: { apt_style?: boolean; provides?: string[] };
  depends?: string[];
  conflicts?: string[];
  capability_domain?: string;
  device_face?: DeviceFace;
  [key: string]: unknown;
}

/** One command of `agent-commands.json`. */
export interface AgentCommand {
  id: string;
  summary?: string;
  description?: string;
  driver: { kind: string; entry: string; args?: string[] };
  input_schema: Record<string, unknown>;
  output?: 'json' | 'text';
  timeout_ms?: number;
  [key: string]: unknown;
}

/** `agent-commands.json`. */
export interface AgentCommands {
  agpk_commands_version?: '1.0';
  commands: AgentCommand[];
}

/** Driver kinds this host runs. */
export const RUNNABLE_DRIVER_KINDS = ['process', 'script', 'node'] as const;

/** Commands every edge package must provide (§2.9); `subscribe` is optional. */
export const EDGE_REQUIRED_COMMANDS = ['list', 'read', 'write', 'acl.get', 'acl.set'] as const;

/** The usage files of which a package needs at least one (§2.9). */
export const USAGE_FILES = ['USAGE.md', 'AGENT_CAPABILITIES.md'] as const;

/** Compares dot/dash/plus-separated parts: numeric parts numerically, anything else as text; a longer list wins a tie. */
function compareParts(a: string, b: string, separators: RegExp): number {
  const pa = a.split(separators);
  const pb = b.split(separators);
  for (let i = 0; i < Math.max(pa.length, pb.length); i++) {
    const x = pa[i];
    const y = pb[i];
    if (x === undefined) return -1;
    if (y === undefined) return 1;
    const nx = /^\d+$/.test(x) ? Number(x) : NaN;
    const ny = /^\d+$/.test(y) ? Number(y) : NaN;
    // Semantic versioning: a numeric identifier sorts before an alphanumeric one.
    const c = !Number.isNaN(nx) && !Number.isNaN(ny) ? nx - ny : !Number.isNaN(nx) ? -1 : !Number.isNaN(ny) ? 1 : x.localeCompare(y);
    if (c !== 0) return Math.sign(c);
  }
  return 0;
}

/** `1.2.3-rc.1+build.5` as {core: "1.2.3", pre: "rc.1", build: "build.5"} when its core is dotted numbers. */
function semverParts(v: string): { core: string; pre: string | undefined; build: string | undefined } | undefined {
  const m = /^(\d+(?:\.\d+)*)(?:-([^+]+))?(?:\+(.+))?$/.exec(v);
  return m ? { core: m[1]!, pre: m[2], build: m[3] } : undefined;
}

/**
 * Compares versions. Dotted numbers (`1.10.0`) compare numerically; a pre-release (`2.0.0-rc.1`)
 * sorts before its release (`2.0.0`), its identifiers compared as semantic versioning says; build
 * metadata (`+5`) only breaks a tie (absent first). A version whose core is not dotted numbers
 * (`latest`, `v2`) compares part by part, numbers numerically, anything else as text.
 */
export function compareVersions(a: string, b: string): number {
  const sa = semverParts(a);
  const sb = semverParts(b);
  if (!sa || !sb) return compareParts(a, b, /[.+-]/);
  const core = compareParts(sa.core, sb.core, /\./);
  if (core !== 0) return core;
  if (sa.pre !== sb.pre) {
    if (sa.pre === undefined) return 1;
    if (sb.pre === undefined) return -1;
    const pre = compareParts(sa.pre, sb.pre, /\./);
    if (pre !== 0) return pre;
  }
  if (sa.build === sb.build) return 0;
  if (sa.build === undefined) return -1;
  if (sb.build === undefined) return 1;
  return compareParts(sa.build, sb.build, /\./);
}

/** True when command `id` provides the edge command `name` (exactly, or as its last segments). */
export function providesCommand(id: string, name: string): boolean {
  return id === name || id.endsWith(`.${name}`);
}
