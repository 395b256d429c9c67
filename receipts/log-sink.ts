/** The logging the receipts module needs; a pino logger fits. */
export interface ReceiptsLog {
  info(fields: object, message: string): void;
  warn(fields: object, message: string): void;
  error(fields: object, message: string): void;
}
