import type { PrismaClient } from '../db/index.ts';
import { type Clock, newId } from '../kernel/index.ts';
import type { LeadRequest, Locale, ScenarioId } from './schemas.ts';

/** A repeat of the same e-mail and scenario within this window updates the lead instead. */
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
   * Stores a lead, or updates the one the same e-mail sent for the same scenario in the last 24 h
   * (given fields overwrite, omitted ones are kept). Concurrent repeats never create two rows.
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
      const fields: Partial<Record<(typeof OPTIONAL_FIELDS)[number], string>> = {};
      for (const name of OPTIONAL_FIELDS) {
        const value = input[name]?.trim();
        if (value) fields[name] = value;
      }
      return prisma.$transaction(async (tx) => {
        // Serialises submissions of one e-mail + scenario (PostgreSQL and PGlite alike) so a
        // double-click cannot slip two inserts past the lookup below.
        await tx.$queryRaw`SELECT pg_advisory_xact_lock(hashtextextended(${`lead:${email}:${input.scenario}`}, 0))::text AS locked`;
        const now = clock.now();
        const recent = await tx.lead.findFirst({
          where: { email, scenario: input.scenario, updatedAt: { gte: new Date(now - LEAD_DEDUPE_WINDOW_MS) } },
          orderBy: { updatedAt: 'desc' },
        });
        if (recent) {
          const row = await tx.lead.update({ where: { id: recent.id }, data: { ...fields, locale, updatedAt: new Date(now) } });
          return { lead: toLead(row), created: false };
        }
        const row = await tx.lead.create({
          data: { id: newId('lead', now), email, scenario: input.scenario, ...fields, locale, createdAt: new Date(now), updatedAt: new Date(now) },
        });
        return { lead: toLead(row), created: true };
      });
    },
  };
}

function toLead(row: Omit<Lead, 'scenario'> & { scenario: string }): Lead {
  return { ...row, scenario: row.scenario as ScenarioId };
}
