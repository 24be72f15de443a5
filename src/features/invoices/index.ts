export { CURRENCY_MINOR_UNITS, computeTotals, minorUnitsOf } from './domain.ts';
export { registerInvoiceRoutes } from './routes.ts';
export { InvoiceOut } from './schemas.ts';
export type { InvoiceRecord, InvoicesDeps } from './service.ts';
