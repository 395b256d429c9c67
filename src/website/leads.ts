import type { PrismaClient } from '../db/index.ts';
import { type Clock, newId } from '../kernel/index.ts';
import type { LeadRequest, Locale, ScenarioId } from './schemas.ts';

/** The same submission sent again within this window is answered without storing it twice. */
export const LEAD_DEDUPE_WINDOW_MS = 24 * 60 * 60 * 1000;

/** A stored lead as the website sees it. */
export interface Lead {
  id: string;
  email: string;
  scenario: ScenarioId;
  company: string | null;
  painPoint: string | null;
  currentTools: string | null;
  desiredAutomation: string | null;
  teamSize: string | null;
  locale: string;
  createdAt: Date;
  updatedAt: Date;
}

/** Lead capture (spec §4.6). A lead is contact data only: it opens no entitlement. */
export interface LeadService {
  /**
   * Stores a lead as a row of its own; a stored lead is never changed. Leads are anonymous, so a
   * later one with the same e-mail and scenario may come from anyone: it is kept beside the first,
   * never over it. Only an identical repeat (same e-mail, scenario and details within 24 h: a
   * double click, a retry) stores nothing new, also under concurrent repeats. `created` says
   * whether a row was written; callers must not tell the submitter (it would reveal that an
   * address already sent a lead).
   */
  submit(input: LeadRequest, locale: Locale): Promise<{ lead: Lead; created: boolean }>;
}

const OPTIONAL_FIELDS = ['company', 'painPoint', 'currentTools', 'desiredAutomation', 'teamSize'] as const;

/** Creates the lead service over the `leads` table. */
export function createLeadService(deps: { prisma: PrismaClient; clock: Clock }): LeadService {
  const { prisma, clock } = deps;
  return {
    async submit(input, locale) {
      const email = input.email.trim().toLowerCase();
      const fields: Record<(typeof OPTIONAL_FIELDS)[number], string | null> = {
        company: null,
        painPoint: null,
        currentTools: null,
        desiredAutomation: null,
        teamSize: null,
      };
      for (const name of OPTIONAL_FIELDS) fields[name] = input[name]?.trim() || null;
      return prisma.$transaction(async (tx) => {
        // Serialises submissions of one e-mail + scenario (PostgreSQL and PGlite alike) so a
        // double-click cannot slip two inserts past the lookup below.
        await tx.$queryRaw`SELECT pg_advisory_xact_lock(hashtextextended(${`lead:${email}:${input.scenario}`}, 0))::text AS locked`;
        const now = clock.now();
        const same = await tx.lead.findFirst({
          where: {
            email,
            scenario: input.scenario,
            ...fields,
            locale,
            createdAt: { gte: new Date(now - LEAD_DEDUPE_WINDOW_MS) },
          },
          orderBy: { createdAt: 'desc' },
        });
        if (same) return { lead: toLead(same), created: false };
        const row = await tx.lead.create({
          data: {
            id: newId('lead', now),
            email,
            scenario: input.scenario,
            ...fields,
            locale,
            createdAt: new Date(now),
            updatedAt: new Date(now),
          },
        });
        return { lead: toLead(row), created: true };
      });
    },
  };
}

function toLead(row: Omit<Lead, 'scenario'> & { scenario: string }): Lead {
  return { ...row, scenario: row.scenario as ScenarioId };
}
