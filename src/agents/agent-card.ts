/**
 * An agent's AGIN card: the body that creates one, its fields checked and normalised as stored,
 * and the form the API shows (and the gateway stamps). Kept apart from the service so the card's
 * rules read in one place.
 */
import { z } from 'zod';

import { cardText, cardTextDropping, reservedOwnerContext } from '../../gateway/index.ts';
import { ValidationError } from '../kernel/index.ts';

/** An agent with its AGIN card, as the API shows it (spec §2.4 field names). */
export interface AgentView {
  id: string;
  agin_id: string;
  agent_principal: string;
  display_name: string;
  owner_context: string;
  status: 'active' | 'revoked';
  created_at: string;
}

/** The longest agent display name (the Account page's field holds as many characters). */
export const AGENT_NAME_MAX = 120;

/** The longest owner context. */
const OWNER_CONTEXT_MAX = 200;

/**
 * Body of `POST /api/agents`. The lengths here bound the text as sent (NFKC may lengthen it); the
 * stored form is checked again by {@link cardFields}.
 */
export const CreateAgentSchema = z.strictObject({
  display_name: z
    .string()
    .trim()
    .min(1, 'display_name must not be empty')
    .max(AGENT_NAME_MAX, `display_name is longer than ${AGENT_NAME_MAX} characters`),
  owner_context: z
    .string()
    .trim()
    .min(1)
    .max(OWNER_CONTEXT_MAX, `owner_context is longer than ${OWNER_CONTEXT_MAX} characters`)
    .optional(),
});

/** The prefix of the owner context Plaza gives an account's agents by default; no other account's agent may use it. */
const ACCOUNT_CONTEXT = 'account:';

/** The owner context of an agent created without one: its account's. */
function defaultOwnerContext(accountId: string): string {
  return `${ACCOUNT_CONTEXT}${accountId}`;
}

/** One card field in its stored form (see cardText), or a 400 naming the field and the character. */
function cardField(field: string, value: string, max: number): string {
  const checked = cardText(value);
  if ('refused' in checked) {
    const { codePoint, position, kind } = checked.refused;
    throw new ValidationError(
      `Invalid agent: ${field}: holds ${codePoint} (${kind}) at character ${position + 1}; AGIN card fields take visible text only (no control, format, private-use or unassigned characters).`,
      { param: field },
    );
  }
  if (checked.text === '') throw new ValidationError(`Invalid agent: ${field} must not be empty.`, { param: field });
  if ([...checked.text].length > max)
    throw new ValidationError(`Invalid agent: ${field} is longer than ${max} characters (in NFKC form).`, {
      param: field,
    });
  return checked.text;
}

/** The card fields of a new agent as stored: normalised, checked, the reserved owner contexts refused. */
export function cardFields(
  accountId: string,
  input: z.infer<typeof CreateAgentSchema>,
): { displayName: string; ownerContext: string } {
  const displayName = cardField('display_name', input.display_name, AGENT_NAME_MAX);
  if (input.owner_context === undefined) return { displayName, ownerContext: defaultOwnerContext(accountId) };
  const ownerContext = cardField('owner_context', input.owner_context, OWNER_CONTEXT_MAX);
  // `account:<id>` is what Plaza vouches for (the default): providers get it in
  // `_meta.platform.owner_context`, so one account must not claim another's, nor Plaza's own
  // (`plaza`). Look-alikes count: case, fullwidth forms, spaces around the colon, Cyrillic letters.
  if (reservedOwnerContext(ownerContext) && ownerContext !== defaultOwnerContext(accountId)) {
    throw new ValidationError(
      `Invalid agent: owner_context: "${ACCOUNT_CONTEXT}…" is reserved for the agent's own account (${defaultOwnerContext(accountId)}, the default), and "plaza" for Plaza's own agents, look-alikes included (case, fullwidth or Cyrillic letters, spaces around the colon); choose another value.`,
      { param: 'owner_context' },
    );
  }
  return { displayName, ownerContext };
}

/**
 * The card fields of a stored agent as they are shown and stamped. Rows stored before the fields
 * were checked may hold what is refused today: they are read in the stored form (refused
 * characters dropped), a display name left empty becomes the agin_id, and an owner context that
 * reads as a reserved one other than the agent's own becomes its account's (Plaza's own agents,
 * with no account, keep theirs). So no provider is ever stamped a field that would fail the check.
 */
export function storedCard(row: {
  accountId: string | null;
  aginId: string;
  displayName: string;
  ownerContext: string | null;
}): { displayName: string; ownerContext: string } {
  const readable = (value: string) => {
    const checked = cardText(value);
    return 'text' in checked ? checked.text : cardTextDropping(value);
  };
  const displayName = readable(row.displayName) || row.aginId;
  let ownerContext = readable(row.ownerContext ?? '');
  if (
    row.accountId !== null &&
    reservedOwnerContext(ownerContext) &&
    ownerContext !== defaultOwnerContext(row.accountId)
  )
    ownerContext = defaultOwnerContext(row.accountId);
  return { displayName, ownerContext };
}

export type AgentRow = {
  id: string;
  accountId: string | null;
  aginId: string;
  agentPrincipal: string;
  displayName: string;
  ownerContext: string | null;
  status: string;
  createdAt: Date;
};

export function toView(row: AgentRow): AgentView {
  const card = storedCard(row);
  return {
    id: row.id,
    agin_id: row.aginId,
    agent_principal: row.agentPrincipal,
    display_name: card.displayName,
    owner_context: card.ownerContext,
    status: row.status === 'active' ? 'active' : 'revoked',
    created_at: row.createdAt.toISOString(),
  };
}
