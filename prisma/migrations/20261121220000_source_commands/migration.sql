-- AlterTable
ALTER TABLE "package_sources" ADD COLUMN     "commands" JSONB NOT NULL DEFAULT '[]';
