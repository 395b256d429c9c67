import { IconSchema, ToolSchema } from '@modelcontextprotocol/sdk/types.js';

import { storableJson, storableText } from '../../src/kernel/index.ts';
import type { ToolIcon } from '../tool-icon.ts';

/** Icons kept per tool at most. */
const MAX_ICONS = 8;
/** Characters of one https: icon URL at most. */
const MAX_URL_SRC = 2_048;
/** Characters of one data: icon at most (a 48×48 PNG is a few kB of base64). */
const MAX_DATA_SRC = 8_192;
/**
 * Characters of a tool's kept icons together (their JSON) at most: `/mcp` lists every provider's
 * tools in one answer, so what one tool adds to it is bounded.
 */
const MAX_ICONS_TEXT = 16_384;
/** Characters of a tool's `_meta` (its JSON) at most; a larger one is not kept. */
const MAX_META_TEXT = 16_384;

/**
 * Inline images kept: raster formats only. An SVG can carry script, and a data: URI travels in
 * Plaza's own answers to every client and page that shows the catalog.
 */
const DATA_IMAGE = /^data:image\/(?:png|jpeg|gif|webp);base64,[A-Za-z0-9+/]+={0,2}$/;
const MIME_TYPE = /^image\/[a-z0-9][a-z0-9.+-]{0,99}$/i;
/** MCP's `sizes`: `WxH` or `any`. */
const SIZE = /^(?:any|[1-9]\d{0,4}x[1-9]\d{0,4})$/;

/** Whether `src` is an icon source Plaza passes on: an https: URL without credentials, or a raster data: image. */
function safeSource(src: string): boolean {
  if (src.startsWith('data:')) return src.length <= MAX_DATA_SRC && DATA_IMAGE.test(src);
  // NUL or a lone surrogate: no jsonb column holds it, and no client could fetch it as sent.
  if (src.length > MAX_URL_SRC || storableText(src) !== src) return false;
  let url: URL;
  try {
    url = new URL(src);
  } catch {
    return false;
  }
  // A user name or password in an icon's URL would go to every client that lists the tool.
  return url.protocol === 'https:' && url.username === '' && url.password === '';
}

/** One declared icon in the shape Plaza keeps, or undefined when it is not one MCP allows or not a safe one. */
function keptIcon(value: unknown): ToolIcon | undefined {
  const parsed = IconSchema.safeParse(value);
  if (!parsed.success) return undefined;
  const { src, mimeType, sizes, theme } = parsed.data;
  if (!safeSource(src)) return undefined;
  if (mimeType !== undefined && !MIME_TYPE.test(mimeType)) return undefined;
  if (sizes !== undefined && (sizes.length > MAX_ICONS || !sizes.every((s) => SIZE.test(s)))) return undefined;
  // Only MCP's members: anything else a provider put on an icon is not passed on.
  return {
    src,
    ...(mimeType !== undefined ? { mimeType } : {}),
    ...(sizes !== undefined ? { sizes } : {}),
    ...(theme !== undefined ? { theme } : {}),
  };
}

/**
 * The icons of a published tool that Plaza keeps, in their order: each in MCP's shape (the SDK's
 * IconSchema), its `src` an https: URL without credentials or a base64 data: image in a raster
 * format, its `mimeType` an image type, its `sizes` MCP's `WxH`/`any`, within the bounds above.
 * Others are left out, one by one; null when none is left (or `icons` is not an array).
 */
export function keptIcons(value: unknown): ToolIcon[] | null {
  if (!Array.isArray(value)) return null;
  const kept: ToolIcon[] = [];
  let text = 2;
  for (const candidate of value) {
    if (kept.length === MAX_ICONS) break;
    const icon = keptIcon(candidate);
    if (!icon) continue;
    const size = JSON.stringify(icon).length + 1;
    if (text + size > MAX_ICONS_TEXT) continue;
    text += size;
    kept.push(icon);
  }
  return kept.length > 0 ? kept : null;
}

/**
 * A published tool's `_meta` made storable, when it is what MCP allows (an object: the SDK's
 * ToolSchema) and its JSON is at most MAX_META_TEXT characters; else null.
 */
export function keptMeta(value: unknown): Record<string, unknown> | null {
  if (value === undefined || !ToolSchema.shape._meta.safeParse(value).success) return null;
  const meta = storableJson(value) as Record<string, unknown>;
  return JSON.stringify(meta).length <= MAX_META_TEXT ? meta : null;
}
