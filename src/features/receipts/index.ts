export { registerReceiptRoutes } from './routes.ts';
export { downloadReceipt, type ReceiptDeps, receiptFor, receiptsOfEntries } from './service.ts';
