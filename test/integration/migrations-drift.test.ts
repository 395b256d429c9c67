/**
 * Keeps the hand-written SQL migrations and prisma/schema.prisma in step: applies every migration
 * to an empty database and compares what exists (tables, columns, types, nullability, defaults,
 * primary keys, unique and plain indexes, foreign keys) with Prisma's own reading of the schema.
 * Also pins the runner: Prisma-compatible `_prisma_migrations` rows, idempotence, edited files.
 */
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

import internals from '@prisma/internals';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { migrate, MigrationError, MIGRATIONS_DIR, readMigrations } from '../../src/db/index.ts';
import { BACKENDS, createTestDatabase, type TestDatabase } from '../support/databases.ts';

interface DmmfField {
  name: string;
  dbName?: string | null;
  kind: string;
  isRequired: boolean;
  isList: boolean;
  hasDefaultValue: boolean;
  type: string;
  nativeType?: [string, string[]] | null;
  relationFromFields?: string[];
  relationToFields?: string[];
}
interface DmmfModel {
  name: string;
  dbName: string | null;
  fields: DmmfField[];
}
interface DmmfIndex {
  model: string;
  type: 'id' | 'unique' | 'normal' | 'fulltext';
  fields: { name: string }[];
}

const SCALAR_TYPES: Record<string, string> = {
  String: 'text',
  Int: 'integer',
  BigInt: 'bigint',
  Boolean: 'boolean',
  Float: 'double precision',
  Json: 'jsonb',
  Decimal: 'numeric',
  Bytes: 'bytea',
};

function expectedType(field: DmmfField): string {
  if (field.type === 'DateTime') {
    return field.nativeType?.[0] === 'Timestamptz' ? 'timestamp with time zone' : 'timestamp without time zone';
  }
  const base = SCALAR_TYPES[field.type];
  if (!base) throw new Error(`drift test does not know Prisma type ${field.type}`);
  return base;
}

const schemaText = readFileSync(join(MIGRATIONS_DIR, '..', 'schema.prisma'), 'utf8');

describe.each(BACKENDS)('migrations on %s', (backend) => {
  let t: TestDatabase;
  let models: DmmfModel[];
  let indexes: DmmfIndex[];

  beforeAll(async () => {
    t = await createTestDatabase(backend);
    const dmmf = await internals.getDMMF({ datamodel: schemaText });
    models = dmmf.datamodel.models as unknown as DmmfModel[];
    indexes = (dmmf.datamodel as unknown as { indexes: DmmfIndex[] }).indexes;
  });
  afterAll(async () => {
    await t?.dispose();
  });

  const tableOf = (model: DmmfModel) => model.dbName ?? model.name;
  const columnOf = (model: DmmfModel, fieldName: string) => {
    const field = model.fields.find((f) => f.name === fieldName);
    if (!field) throw new Error(`${model.name}.${fieldName} not in schema`);
    return field.dbName ?? field.name;
  };

  it('creates exactly the tables of the schema', async () => {
    const rows = await t.db.sql.query<{ table_name: string }>(
      `SELECT table_name FROM information_schema.tables WHERE table_schema = 'public' AND table_type = 'BASE TABLE'`,
    );
    const actual = rows
      .map((r) => r.table_name)
      .filter((n) => n !== '_prisma_migrations')
      .sort();
    expect(actual).toEqual(models.map(tableOf).sort());
  });

  it('creates every column with its type, nullability and default', async () => {
    const rows = await t.db.sql.query<{
      table_name: string;
      column_name: string;
      data_type: string;
      is_nullable: string;
      column_default: string | null;
    }>(
      `SELECT table_name, column_name, data_type, is_nullable, column_default FROM information_schema.columns WHERE table_schema = 'public'`,
    );
    for (const model of models) {
      const table = tableOf(model);
      const actual = rows.filter((r) => r.table_name === table);
      const scalars = model.fields.filter((f) => f.kind === 'scalar' || f.kind === 'enum');
      expect(actual.map((r) => r.column_name).sort(), `columns of ${table}`).toEqual(
        scalars.map((f) => f.dbName ?? f.name).sort(),
      );
      for (const field of scalars) {
        const column = actual.find((r) => r.column_name === (field.dbName ?? field.name))!;
        const where = `${table}.${column.column_name}`;
        expect(column.data_type, `type of ${where}`).toBe(expectedType(field));
        expect(column.is_nullable, `nullability of ${where}`).toBe(field.isRequired ? 'NO' : 'YES');
        expect(column.column_default !== null, `default of ${where}`).toBe(field.hasDefaultValue);
      }
    }
  });

  it('creates every primary key, unique and plain index of the schema, and no others', async () => {
    const rows = await t.db.sql.query<{
      table_name: string;
      is_unique: boolean;
      is_primary: boolean;
      columns: string[] | string;
    }>(
      `SELECT t.relname AS table_name, i.indisunique AS is_unique, i.indisprimary AS is_primary,
              array_agg(a.attname ORDER BY k.ord)::text[] AS columns
         FROM pg_index i
         JOIN pg_class t ON t.oid = i.indrelid
         JOIN pg_namespace n ON n.oid = t.relnamespace AND n.nspname = 'public'
         CROSS JOIN LATERAL unnest(i.indkey) WITH ORDINALITY AS k(attnum, ord)
         JOIN pg_attribute a ON a.attrelid = t.oid AND a.attnum = k.attnum
        WHERE t.relname <> '_prisma_migrations'
        GROUP BY i.indexrelid, t.relname, i.indisunique, i.indisprimary`,
    );
    const describeIndex = (table: string, kind: string, columns: string[]) =>
      `${table} ${kind} (${columns.join(', ')})`;
    const toArray = (value: string[] | string) =>
      Array.isArray(value) ? value : value.replace(/^{|}$/g, '').split(',');
    const actual = rows
      .map((r) =>
        describeIndex(r.table_name, r.is_primary ? 'id' : r.is_unique ? 'unique' : 'normal', toArray(r.columns)),
      )
      .sort();
    const expected = indexes
      .map((index) => {
        const model = models.find((m) => m.name === index.model)!;
        return describeIndex(
          tableOf(model),
          index.type,
          index.fields.map((f) => columnOf(model, f.name)),
        );
      })
      .sort();
    expect(actual).toEqual(expected);
  });

  it('creates every foreign key of the schema', async () => {
    const rows = await t.db.sql.query<{ table_name: string; column_name: string; foreign_table: string }>(
      `SELECT tc.table_name, kcu.column_name, ccu.table_name AS foreign_table
         FROM information_schema.table_constraints tc
         JOIN information_schema.key_column_usage kcu ON kcu.constraint_name = tc.constraint_name AND kcu.table_schema = tc.table_schema
         JOIN information_schema.constraint_column_usage ccu ON ccu.constraint_name = tc.constraint_name AND ccu.table_schema = tc.table_schema
        WHERE tc.constraint_type = 'FOREIGN KEY' AND tc.table_schema = 'public'`,
    );
    const actual = rows.map((r) => `${r.table_name}.${r.column_name} -> ${r.foreign_table}`).sort();
    const expected: string[] = [];
    for (const model of models) {
      for (const field of model.fields) {
        if (field.kind !== 'object' || !field.relationFromFields?.length) continue;
        const target = models.find((m) => m.name === field.type)!;
        for (const from of field.relationFromFields)
          expected.push(`${tableOf(model)}.${columnOf(model, from)} -> ${tableOf(target)}`);
      }
    }
    expect(actual).toEqual(expected.sort());
  });

  it('records each migration in _prisma_migrations as prisma migrate deploy does', async () => {
    const rows = await t.db.sql.query<{
      migration_name: string;
      checksum: string;
      finished_at: unknown;
      applied_steps_count: number;
    }>(
      'SELECT migration_name, checksum, finished_at, applied_steps_count FROM "_prisma_migrations" ORDER BY migration_name',
    );
    const files = readMigrations();
    expect(rows.map((r) => r.migration_name)).toEqual(files.map((f) => f.name));
    for (const [i, row] of rows.entries()) {
      const sql = readFileSync(join(MIGRATIONS_DIR, row.migration_name, 'migration.sql'));
      expect(row.checksum).toBe(createHash('sha256').update(sql).digest('hex'));
      expect(row.finished_at).not.toBeNull();
      expect(row.applied_steps_count).toBe(1);
      expect(files[i]?.checksum).toBe(row.checksum);
    }
  });

  it('is idempotent', async () => {
    const report = await migrate(t.db.sql);
    expect(report.applied).toEqual([]);
    expect(report.alreadyApplied).toHaveLength(readMigrations().length);
  });

  it('refuses a migration edited after it was applied', async () => {
    const edited = readMigrations().map((m, i) => (i === 0 ? { ...m, checksum: 'f'.repeat(64) } : m));
    await expect(migrate(t.db.sql, edited)).rejects.toBeInstanceOf(MigrationError);
  });
});
