/**
 * The chunks of one streamed upstream answer as they pass to the client: which pass as they came,
 * which are cut or rewritten, where usage is taken from, and how a finished answer ends. Apart
 * from upstream-backend.ts, which relays the reads; a class rather than closures in `stream`, so
 * a stream costs one object whose fields are the state `take` and `done` share.
 */
import { UpstreamError } from '../kernel/index.ts';
import type { BackendCall, Usage } from './types.ts';
import { approximate, clientUsage, CompletionText, usageChunk, usageOf } from './upstream-usage.ts';

/** How a chunk with `usage: null` last ends as OpenAI (and the JSON of most servers) writes it. */
const NULL_USAGE_END = ',"usage":null}';

/** A chunk that may carry usage or an error (one regex: ~3× faster than two `includes` here). */
const USAGE_OR_ERROR = /"(?:usage|error)"/;

/** A chunk whose choice has finished (`finish_reason` set, not null). */
const FINISHED = /"finish_reason":\s*"/;

/** One stream's chunk filter and usage; see the file comment. */
export class UpstreamChunks {
  /** The upstream's believable usage; after {@link settleUsage}, the usage charged. */
  usage: Usage | undefined;
  /** The answer ended as finished (its `[DONE]` is in what passed on). */
  finished = false;
  /** A chunk said its choice finished: an end without `[DONE]` still ends a finished answer. */
  sawFinish = false;
  readonly #call: BackendCall;
  readonly #wantsUsage: boolean;
  readonly #content = new CompletionText();
  /** The upstream's believable usage as it sent it, for its details (cached, reasoning tokens). */
  #reportedUsage: unknown;
  #last: string | undefined;
  /** The upstream's usage-only chunk, held back: the client's one usage chunk is sent at the end. */
  #usageOnly: Record<string, unknown> | undefined;

  constructor(call: BackendCall) {
    this.#call = call;
    this.#wantsUsage = call.request.stream_options?.include_usage === true;
  }

  /**
   * Upstream usage is the truth; without it (or for a broken-off stream, which is still charged)
   * the text the client received is approximated.
   */
  settleUsage(): void {
    this.usage ??= approximate(this.#call, this.#content.tokens());
  }

  /**
   * The end of a finished answer, after `out` (what the batch carried before it): for a
   * client that asked for usage, one usage-only chunk as OpenAI sends it, whatever chunks the
   * upstream put its usage in; from an upstream that reports none (servers that ignore
   * stream_options) or none believable, the approximation Plaza charges.
   */
  done(out: string[]): string[] {
    this.finished = true;
    if (this.#wantsUsage) {
      this.usage ??= approximate(this.#call, this.#content.tokens());
      out.push(
        usageChunk(
          this.#usageOnly,
          this.#last,
          this.#call.backendModel,
          this.#reportedUsage === undefined ? this.usage : clientUsage(this.#reportedUsage, this.usage),
        ),
      );
    }
    out.push('[DONE]');
    return out;
  }

  /**
   * Takes one batch of the upstream's events, in place: what passes on is kept in it. Returns
   * the failure a chunk ended the stream with (the chunks before it still pass), if any.
   */
  take(batch: string[]): UpstreamError | undefined {
    const wantsUsage = this.#wantsUsage;
    const content = this.#content;
    let kept = 0;
    for (const data of batch) {
      if (data === '[DONE]') {
        batch.length = kept;
        this.done(batch);
        return undefined;
      }
      this.#last = data;
      this.sawFinish ||= FINISHED.test(data);
      // Only chunks that may carry usage or an error are parsed; the others (all but the
      // last one or two) are checked for their JSON object shape and passed on as they are.
      if (!USAGE_OR_ERROR.test(data)) {
        if (data.charCodeAt(0) !== 123 || data.charCodeAt(data.length - 1) !== 125) {
          batch.length = kept;
          return new UpstreamError('The model backend sent a malformed stream chunk.');
        }
        content.add(data);
        batch[kept++] = data;
        continue;
      }
      let chunk: { choices?: unknown[]; usage?: unknown; error?: unknown };
      try {
        chunk = JSON.parse(data) as typeof chunk;
      } catch (error) {
        batch.length = kept;
        return new UpstreamError('The model backend sent a malformed stream chunk.', { cause: error });
      }
      if (chunk === null || typeof chunk !== 'object' || Array.isArray(chunk)) {
        batch.length = kept;
        return new UpstreamError('The model backend sent a malformed stream chunk.');
      }
      if (chunk.error !== undefined && chunk.error !== null) {
        batch.length = kept;
        return new UpstreamError('The model backend failed during the stream.');
      }
      const reported = usageOf(chunk.usage);
      if (reported) {
        this.usage = reported;
        this.#reportedUsage = chunk.usage;
      }
      content.add(data);
      if (chunk.usage === undefined || (wantsUsage && chunk.usage === null)) {
        batch[kept++] = data;
        continue;
      }
      // Plaza always asks for usage; the client gets it as OpenAI sends it: in one chunk
      // with no choices at the end when it asked (chunks of choices say `usage: null`),
      // nowhere when it did not. An upstream's usage on a choice chunk (llama.cpp, vLLM's
      // continuous_usage_stats) or in a chunk of its own would duplicate or leak it.
      if (!Array.isArray(chunk.choices) || chunk.choices.length === 0) {
        if (chunk.usage !== null) {
          this.#usageOnly = chunk as Record<string, unknown>;
          continue;
        }
      }
      if (
        chunk.usage === null &&
        data.endsWith(NULL_USAGE_END) &&
        data.indexOf('"usage"') === data.length - NULL_USAGE_END.length + 1
      ) {
        // OpenAI's own form, on every chunk Plaza relays: cut, not serialised again.
        batch[kept++] = `${data.slice(0, -NULL_USAGE_END.length)}}`;
        continue;
      }
      const { usage: _usage, ...rest } = chunk;
      batch[kept++] = JSON.stringify(wantsUsage ? { ...rest, usage: null } : rest);
    }
    batch.length = kept;
    return undefined;
  }
}
