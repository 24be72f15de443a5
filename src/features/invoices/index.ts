export { registerInvoiceAppRoutes } from './app-routes.ts';
export { invoiceHtml } from './document.ts';
export { CURRENCY_MINOR_UNITS, computeTotals, minorUnitsOf } from './domain.ts';
export { registerInvoiceRoutes } from './routes.ts';
export { InvoiceOut } from './schemas.ts';
export {
  applyInvoiceDiscount,
  applyInvoiceSettlement,
  type InvoiceRecord,
  type InvoicesDeps,
  invoiceByToken,
  recordInvoiceShortfall,
  sendAutomaticReminders,
} from './service.ts';
