export { registerInvoiceDocumentAppRoutes } from './app-api-routes.ts';
export { registerInvoiceAppRoutes } from './app-routes.ts';
export {
  type ChatAnswerDecision,
  type ChatPress,
  markPaidByPayer,
  pendingChatAnswers,
  requestDeferral,
  settleChatAnswer,
} from './chat-answers.ts';
export type { ChatInvoicePost, InvoiceChatPort } from './chat-port.ts';
export { CHAT_POST_RETRY_DELAYS_MS, sendInvoiceChatPosts } from './chat-posts.ts';
export { InvoiceDocument } from './document-view.tsx';
export {
  CLIENT_CONTACT_FIELDS,
  type ClientField,
  CURRENCY_MINOR_UNITS,
  computeTotals,
  minorUnitsOf,
} from './domain.ts';
export { registerInvoicePages } from './page-routes.ts';
export { renderInvoicePdf } from './pdf.ts';
export { invoiceSheet } from './pdf-sheet.ts';
export { documentLinks } from './reads.ts';
export { registerInvoiceRoutes } from './routes.ts';
export { InvoiceOut } from './schemas.ts';
export {
  answerQuote,
  applyInvoiceDiscount,
  applyInvoiceSettlement,
  createInvoice,
  decideQuote,
  getInvoice,
  type InvoiceRecord,
  type InvoicesDeps,
  invoiceByToken,
  invoiceMailAttachments,
  listDeliveries,
  present,
  quoteByToken,
  recordInvoiceShortfall,
  recordPayment,
  remindInvoice,
  sendAutomaticReminders,
  sendInvoice,
  voidInvoice,
  writeOffInvoice,
} from './service.ts';
export type { InvoiceRow } from './store.ts';
export { hasAnyDocument, type OverdueTotal, overdueTotals } from './summary.ts';
