import type { PrismaClient } from '../db/index.ts';
import { ConflictError } from '../kernel/index.ts';

/**
 * Retired provider slugs. The gateway routes `/mcp/p/<provider>` and a caller's third-party
 * credential (`X-PLATFORM-Upstream-Provider`) by slug, so a slug must never come to name another
 * server: when a listing goes (its owner removes it, the registry deletes or moves it) its slug is
 * kept here, bound to its URL.
 */

/** The part of the Prisma client this module uses; a transaction client fits too. */
type Db = Pick<PrismaClient, 'retiredProvider'>;

/** A slug's binding: the URL it names and the account that held it (null: nobody). */
export interface SlugBinding {
  provider: string;
  url: string;
  accountId: string | null;
}

/**
 * Whether a listing of `url` may take a slug retired as `retired`: a listing of the same URL, by
 * anyone — the same server, so a credential sent under the slug reaches whom it always reached.
 * (Bound to the account too, an account that superseded an anonymous listing and removed it
 * would have locked the server's slug away from everyone, its real owner included.)
 */
export function mayTakeRetired(retired: SlugBinding, url: string): boolean {
  return retired.url === url;
}

/** The retired binding of `provider`, if any. */
export async function findRetired(db: Db, provider: string): Promise<SlugBinding | undefined> {
  const row = await db.retiredProvider.findUnique({
    where: { provider },
    select: { provider: true, url: true, accountId: true },
  });
  return row ?? undefined;
}

/**
 * Throws a ConflictError when `listing` may not take its slug because a removed listing held it.
 * Run it in the transaction that inserts the listing, after the insert: the insert waits on the
 * unique slug for a removal in progress, so a retirement that commits meanwhile is seen here.
 */
export async function assertSlugNotRetired(db: Db, listing: SlugBinding): Promise<void> {
  const retired = await findRetired(db, listing.provider);
  if (!retired || mayTakeRetired(retired, listing.url)) return;
  throw new ConflictError(
    `The provider slug ${JSON.stringify(listing.provider)} was used by a removed listing; slugs are never rebound to another server. Choose another slug.`,
    { param: 'provider' },
  );
}

/** Keeps the slugs of listings being removed bound to their URLs (call it in the removing transaction). */
export async function retire(db: Db, bindings: SlugBinding[], now: number): Promise<void> {
  for (const { provider, url, accountId } of bindings) {
    await db.retiredProvider.upsert({
      where: { provider },
      create: { provider, url, accountId, retiredAt: new Date(now) },
      // A slug is only ever taken again for its own URL, so the binding's URL never changes.
      update: { accountId, retiredAt: new Date(now) },
    });
  }
}
