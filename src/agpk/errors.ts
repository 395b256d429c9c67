import { type ErrorCode, PlazaError } from '../kernel/index.ts';

/** One problem found in a package: the file, the JSON path inside it (or ""), and what is wrong. */
export interface Problem {
  file: string;
  path: string;
  message: string;
}

/**
 * An AGPK operation failed or was refused. `problems` lists package problems when the failure is
 * a package that does not meet the standard.
 */
export class AgpkError extends PlazaError {
  readonly problems: Problem[];

  constructor(code: ErrorCode, message: string, options: { problems?: Problem[]; cause?: unknown } = {}) {
    super(code, message, { cause: options.cause, details: options.problems });
    this.problems = options.problems ?? [];
  }
}
