/** See prisma-compiler-file.mjs. */
export declare const COMPILER_FILE: string;

export declare function useCompilerFile(
  generated: string,
  root: string,
): Promise<{ result: 'rewritten' } | { result: 'unchanged'; reason: string }>;
