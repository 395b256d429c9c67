import type { CompletionStream, StreamControl, StreamSink, Usage } from './types.ts';

/**
 * A {@link CompletionStream} over batches an async source yields (the embedded assistant's): each
 * goes to the sink as it comes, paused while the sink asks, and an aborted `signal` ends a paused
 * stream too, so its sink always hears the end.
 */
export function streamOfBatches(
  batches: () => AsyncIterable<string[]>,
  usage: () => Usage | undefined,
  signal: AbortSignal,
): CompletionStream {
  return {
    usage,
    start(sink: StreamSink): StreamControl {
      let waiting: Promise<void> | undefined;
      let wake: (() => void) | undefined;
      const control: StreamControl = {
        pause() {
          waiting ??= new Promise<void>((resolve) => (wake = resolve));
        },
        resume() {
          const resolve = wake;
          waiting = wake = undefined;
          resolve?.();
        },
      };
      signal.addEventListener('abort', control.resume, { once: true });
      void (async () => {
        try {
          for await (const batch of batches()) {
            if (waiting) await waiting;
            if (signal.aborted) break;
            sink.events(batch);
          }
        } catch (error) {
          signal.removeEventListener('abort', control.resume);
          sink.end(error);
          return;
        }
        signal.removeEventListener('abort', control.resume);
        sink.end();
      })().catch(() => {
        // Only the sink's own end can land here (it threw while ending): the sink is the one to
        // log its failures (the token API's does), and it has been told the end already.
      });
      return control;
    },
  };
}
