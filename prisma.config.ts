import { defineConfig } from 'prisma/config';

// Prisma 7 reads the datasource URL from here, not from schema.prisma. Plaza applies migrations
// with its own runner (`plaza migrate`), so the URL only matters to Prisma's own CLI commands.
export default defineConfig({
  schema: 'prisma/schema.prisma',
  migrations: { path: 'prisma/migrations' },
  datasource: { url: process.env['DATABASE_URL'] ?? 'postgresql://postgres@127.0.0.1:5432/plaza' },
});
