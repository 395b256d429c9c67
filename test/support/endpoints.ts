/**
 * Listing a provider and waiting for its first probe: Plaza probes a new listing in the background, and a
 * test that calls through the gateway has to wait until the endpoint is healthy. Takes only the
 * Plaza's URL, so it serves an in-process Plaza and a `plaza serve` child alike.
 */

/** Lists a provider without credentials (`POST /api/mcp/listings` with `listing`); the new endpoint's id. */
export async function listProvider(plazaUrl: string, listing: Record<string, unknown>): Promise<string> {
  const listed = await fetch(`${plazaUrl}/api/mcp/listings`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(listing),
  });
  return ((await listed.json()) as { id: string }).id;
}

/**
 * Polls `GET /api/mcp/endpoints/<id>` until its status is `healthy`, at most `tries` times
 * `everyMs` apart, and answers the endpoint as last read (healthy or not: the caller asserts).
 */
export async function awaitHealthy(
  plazaUrl: string,
  id: string,
  { tries = 100, everyMs = 100 }: { tries?: number; everyMs?: number } = {},
): Promise<any> {
  let endpoint: any;
  for (let i = 0; i < tries; i++) {
    endpoint = await (await fetch(`${plazaUrl}/api/mcp/endpoints/${id}`)).json();
    if (endpoint?.status === 'healthy') break;
    await new Promise((r) => setTimeout(r, everyMs));
  }
  return endpoint;
}
