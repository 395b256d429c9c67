import { ValidationError } from '../kernel/index.ts';

/** The embedded retrieval assistant's model id; always offered. */
export const EMBEDDED_MODEL = 'plaza-assistant';

/** A model a bearer may ask for. */
export interface ModelEntry {
  /** The name clients send. */
  id: string;
  backend: 'embedded' | 'upstream';
  /** The name the backend knows. */
  target: string;
}

/** Models offered by `GET /api/v1/models` and accepted by chat completions. */
export interface ModelRegistry {
  list(): ModelEntry[];
  /** Resolves a requested model name; unknown names are a 400 on `model`. */
  resolve(name: string): ModelEntry;
}

/**
 * Builds the registry: the embedded assistant, upstream model ids offered as-is, and aliases
 * (name -> upstream id). An alias may take over `plaza-assistant` to back the site assistant by
 * the upstream model. Upstream entries exist only when an upstream is configured.
 */
export function createModelRegistry(options: {
  upstream: boolean;
  models: readonly string[];
  aliases: Readonly<Record<string, string>>;
}): ModelRegistry {
  const entries = new Map<string, ModelEntry>();
  entries.set(EMBEDDED_MODEL, { id: EMBEDDED_MODEL, backend: 'embedded', target: EMBEDDED_MODEL });
  if (options.upstream) {
    for (const id of options.models) entries.set(id, { id, backend: 'upstream', target: id });
    for (const [id, target] of Object.entries(options.aliases)) entries.set(id, { id, backend: 'upstream', target });
  } else if (options.models.length > 0 || Object.keys(options.aliases).length > 0) {
    throw new Error('LLM_MODELS / LLM_MODEL_ALIASES need LLM_BASE_URL');
  }
  const list = [...entries.values()];
  return {
    list: () => list,
    resolve(name) {
      const entry = entries.get(name);
      if (!entry) {
        throw new ValidationError(
          `The model '${name.slice(0, 200)}' does not exist; GET /api/v1/models lists the available ones.`,
          { param: 'model' },
        );
      }
      return entry;
    },
  };
}
