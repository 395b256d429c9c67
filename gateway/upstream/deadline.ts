/**
 * Runs `work` with a signal that aborts after `timeoutMs` or when `outer` does. One controller
 * and one timer, cleared when the work ends: cheaper per call than AbortSignal.timeout + .any,
 * whose composite signals are tracked until collected.
 */
export async function withDeadline<T>(
  timeoutMs: number,
  outer: AbortSignal | undefined,
  work: (signal: AbortSignal) => Promise<T>,
): Promise<T> {
  const controller = new AbortController();
  const timer = setTimeout(
    () => controller.abort(new DOMException('The upstream did not answer in time.', 'TimeoutError')),
    timeoutMs,
  );
  const follow = () => controller.abort(outer?.reason);
  if (outer?.aborted) follow();
  else outer?.addEventListener('abort', follow, { once: true });
  try {
    return await work(controller.signal);
  } finally {
    clearTimeout(timer);
    outer?.removeEventListener('abort', follow);
  }
}
