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

/** True when command `id` provides the edge command `name` (exactly, or as its last segments). */
export function providesCommand(id: string, name: string): boolean {
  return id === name || id.endsWith(`.${name}`);
}
