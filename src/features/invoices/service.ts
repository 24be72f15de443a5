// The invoices' use cases, one file per concern; routes and the feature's index read them here.

export {
  createInvoice,
  getInvoice,
  type InvoicesDeps,
  invoiceByToken,
  invoiceMailAttachments,
  listDeliveries,
  remindInvoice,
  reviseInvoice,
  sendInvoice,
  setParty,
  voidInvoice,
} from './lifecycle.ts';
export {
  applyInvoiceDiscount,
  applyInvoiceSettlement,
  recordInvoiceShortfall,
  recordPayment,
  writeOffInvoice,
} from './payments.ts';
export { type InvoiceRecord, present } from './presentation.ts';
export { answerQuote, decideQuote, quoteByToken } from './quotes.ts';
export { sendAutomaticReminders } from './reminders.ts';
