/** An icon as MCP's Tool declares it (2025-11-25), in the shape Plaza keeps and serves. */
export interface ToolIcon {
  src: string;
  mimeType?: string;
  sizes?: string[];
  theme?: 'light' | 'dark';
}
