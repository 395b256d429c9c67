/**
 * `plaza receipts verify --call <call_id>`: one receipt of the account, with its inclusion proof
 * and the checkpoint it leads to (GET /api/receipts/:call_id), as the two lines of an export
 * (checkpoint, receipt), so that it is verified exactly as an export is.
 */

/** A GET that throws, naming the server's reason, unless it answers 2xx. */
type FetchOk = (url: string, headers: Record<string, string>, signal: AbortSignal) => Promise<Response>;

interface OneReceipt {
  data?: { receipt?: { call_id?: unknown } & Record<string, unknown>; inclusion?: unknown; checkpoint?: unknown };
}

/** The export lines of receipt `callId` from the server at `base`. */
export async function oneReceiptLines(
  fetchOk: FetchOk,
  options: { base: string; callId: string; key: string; idleMs: number },
): Promise<string[]> {
  const { base, callId, key, idleMs } = options;
  const url = `${base}/api/receipts/${encodeURIComponent(callId)}`;
  const res = await fetchOk(url, { authorization: `Bearer ${key}` }, AbortSignal.timeout(idleMs));
  const data = ((await res.json()) as OneReceipt | null)?.data;
  if (data?.receipt?.call_id !== callId) throw new Error(`GET ${url} did not answer the receipt of ${callId}`);
  if (data.checkpoint === null || data.inclusion === null)
    throw new Error(
      `the receipt of ${callId} is not covered by a signed checkpoint yet (checkpoints are signed every few seconds): try again shortly`,
    );
  return [
    JSON.stringify({ type: 'checkpoint', ...(data.checkpoint as object) }),
    JSON.stringify({ type: 'receipt', ...data.receipt, inclusion: data.inclusion }),
  ];
}
