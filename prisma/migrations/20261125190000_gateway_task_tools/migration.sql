-- AlterTable: the tool a task-augmented call named, for the receipt of the task's result
ALTER TABLE "gateway_tasks" ADD COLUMN "tool" TEXT;
