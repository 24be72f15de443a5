import type { Queryable } from '../../platform/db/database.ts';

// The delivery port the chat feature implements for invoices (wired in app.ts): what the send and
// the reminder queue, and what the chat worker posts after commit.

export type ChatInvoicePost = {
  spaceId: string;
  contactId: string | null;
  invoiceId: string;
  sellerName: string;
  number: string;
  /** As people write it: "240.00 USD". */
  total: string;
  dueOn: string;
  url: string;
  purpose: 'send' | 'remind';
  message: string;
  pdf: Uint8Array;
  fileName: string;
};

/** What the chat feature offers invoices (wired in app.ts; absent without a bot). */
export type InvoiceChatPort = {
  /**
   * Refuses with an AppError when the contact's group cannot take a post now (no group, a plan
   * below Pro). Reads only the database: it runs in the transaction that queues the post.
   */
  checkPost(db: Queryable, spaceId: string, contactId: string | null): Promise<void>;
  /**
   * Posts the invoice with its buttons to the contact's group, outside any transaction (the chat
   * worker); refuses with an AppError when it cannot, any other error leaves the outcome unknown.
   */
  postInvoice(post: ChatInvoicePost): Promise<void>;
  /** Whether the contact has a group the space may post to now. */
  canPost(db: Queryable, spaceId: string, contactId: string | null): Promise<boolean>;
};
