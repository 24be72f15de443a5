import type { ColumnType } from 'kysely';

// Row shapes as the drivers return them: NUMERIC and int8 arrive as text (amounts are parsed by
// core/money in the stores), timestamptz as Date, date as text (database.ts sets the parser),
// JSON as parsed values, arrays as arrays. Kept by hand, and checked against the migrated
// database's catalog, table by table and column by column, by test/schema-types.test.ts
// (scripts/schema-types.ts). The schema itself reads best in db/schema.sql.

type Timestamp = ColumnType<Date, Date | string, Date | string>;
type Numeric = ColumnType<string, string, string>;

export interface UsersTable {
  id: string;
  email: string;
  name: string;
  password_hash: string;
  created_at: Timestamp;
}

export interface SessionsTable {
  id: string;
  user_id: string;
  token_hash: string;
  csrf_token: string;
  created_at: Timestamp;
  expires_at: Timestamp;
  revoked_at: Timestamp | null;
}

export type Plan = 'free' | 'starter' | 'pro' | 'scale' | 'enterprise';
export type Role = 'owner' | 'admin' | 'member' | 'viewer';

export interface SpacesTable {
  id: string;
  name: string;
  base_currency: string;
  plan: Plan;
  subscription_packs: ColumnType<number, number | undefined, number>;
  integration_enabled: ColumnType<boolean, boolean | undefined, boolean>;
  payments_enabled: ColumnType<boolean, boolean | undefined, boolean>;
  public_handle: string;
  auth_version: ColumnType<number, number | undefined, number>;
  closed_through: ColumnType<string | null, string | null | undefined, string | null>;
  created_at: Timestamp;
  /** An IANA time zone, checked with Intl: the zone the book's pages write moments in. */
  time_zone: DefaultText;
  /** A BCP 47 locale, checked with Intl: how the book's pages write dates and numbers. */
  locale: DefaultText;
}

type DefaultText = ColumnType<string, string | undefined, string>;

/** A book's seller profile (`seller_profiles`): who the business is on its documents. */
export interface SellerProfilesTable {
  space_id: string;
  legal_name: DefaultText;
  trading_name: DefaultText;
  address_line1: DefaultText;
  address_line2: DefaultText;
  postal_code: DefaultText;
  city: DefaultText;
  region: DefaultText;
  country: DefaultText;
  vat_id: DefaultText;
  tax_number: DefaultText;
  registration_id: DefaultText;
  email: DefaultText;
  phone: DefaultText;
  website: DefaultText;
  payment_terms_days: ColumnType<number, number | undefined, number>;
  invoice_footer: DefaultText;
  updated_at: Timestamp;
}

/** Which image is a book's logo now (`seller_logos`): a PNG or JPEG of at most 512 pixels a side, served by its SHA-256. */
export interface SellerLogosTable {
  space_id: string;
  /** The image in `seller_logo_images` that is the book's logo now. */
  sha256: string;
  updated_at: Timestamp;
}

/** Every logo a book has had (`seller_logo_images`), by the SHA-256 of its bytes; never changed. */
export interface SellerLogoImagesTable {
  space_id: string;
  sha256: string;
  content_type: 'image/png' | 'image/jpeg';
  bytes: Uint8Array;
  width: number;
  height: number;
  created_at: Timestamp;
}

export interface MembersTable {
  space_id: string;
  user_id: string;
  role: Role;
  created_at: Timestamp;
}

export interface PushSourcesTable {
  id: string;
  space_id: string;
  name: string;
  created_at: Timestamp;
}

export interface IntegrationKeysTable {
  id: string;
  space_id: string;
  issuer_user_id: string;
  name: string;
  key_hash: string;
  prefix: string;
  scopes: string[];
  webhook_url: string | null;
  webhook_secret_sealed: string;
  /** The secret before the last rotation, still signing until the time beside it. */
  previous_webhook_secret_sealed: string | null;
  previous_webhook_secret_until: Timestamp | null;
  push_source_id: string | null;
  created_at: Timestamp;
  expires_at: Timestamp | null;
  revoked_at: Timestamp | null;
  expiry_reminded_at: Timestamp | null;
  last_used_at: Timestamp | null;
}

export interface NotificationsTable {
  id: string;
  space_id: string;
  user_id: string;
  kind: string;
  subject_id: string | null;
  payload: ColumnType<Record<string, unknown>, string, string>;
  created_at: Timestamp;
  read_at: Timestamp | null;
}

export interface IdempotencyRecordsTable {
  space_id: string;
  key_id: string;
  route: string;
  idempotency_key: string;
  request_hash: string;
  state: 'running' | 'done';
  owner_token: string;
  locked_until: Timestamp;
  response_status: number | null;
  response_body: string | null;
  created_at: Timestamp;
  expires_at: Timestamp;
}

export interface RateBucketsTable {
  key_id: string;
  bucket_start: number;
  hits: number;
}

export interface AccountsTable {
  id: string;
  space_id: string;
  kind: 'bank' | 'card' | 'cash' | 'crypto' | 'platform';
  name: string;
  currency: string;
  address: string | null;
  chain: string | null;
  network: string | null;
  color: string | null;
  details: string;
  external_signer: boolean;
  opening_acquired_on: ColumnType<string | null, string | null, string | null>;
  opening_balance: Numeric;
  opening_cost: ColumnType<string | null, string | null, string | null>;
  ledger_account_id: string | null;
  push_source_id: string | null;
  push_account_key: ColumnType<string | null, string | null | undefined, string | null>;
  address_challenge: ColumnType<string | null, string | null | undefined, string | null>;
  address_challenge_expires_at: ColumnType<Date | null, Date | null | undefined, Date | null>;
  address_proven: ColumnType<string | null, string | null | undefined, string | null>;
  address_proven_at: ColumnType<Date | null, Date | null | undefined, Date | null>;
  /** A bank account's requisites (features/contacts' shape), checked before they are written. */
  requisites: ColumnType<Record<string, unknown> | null, string | null | undefined, string | null>;
  created_at: Timestamp;
}

export interface ContactsTable {
  id: string;
  space_id: string;
  name: string;
  kind: string;
  note: string;
  address: string;
  country: string;
  email: string;
  phone: string;
  reg_number: string;
  tax_id: string;
  compliance: string;
  identity_id: string | null;
  whitelisted: boolean;
  saved_to_book: boolean;
  tags: string[];
  created_at: Timestamp;
}

export interface ContactAddressesTable {
  id: string;
  space_id: string;
  contact_id: string;
  position: number;
  label: string;
  address: string;
  chain: string | null;
  network: string | null;
  details: string;
  is_primary: boolean;
  requisites: ColumnType<Record<string, unknown> | null, string | null, string | null>;
}

export interface OutboxEventsTable {
  id: string;
  space_id: string;
  channel: 'key' | 'book';
  key_id: string | null;
  event: string;
  payload: ColumnType<Record<string, unknown>, string, string>;
  occurred_at: Timestamp;
  created_at: Timestamp;
  dispatched_at: Timestamp | null;
}

/** Many events written at once; the webhooks fan-out turns each into outbox_events rows. */
export interface OutboxEventGroupsTable {
  id: string;
  space_id: string;
  channel: 'key' | 'book';
  key_id: string | null;
  events: ColumnType<[string, Record<string, unknown>][], string, string>;
  occurred_at: Timestamp;
  created_at: Timestamp;
}

type DateText = ColumnType<string, string, string>;

export interface LedgerAccountsTable {
  id: string;
  space_id: string;
  kind: 'asset' | 'income' | 'expense' | 'client_credit' | 'equity' | 'clearing';
  ref: string;
  currency: string;
  normal_side: 'debit' | 'credit';
  tracks_balance: boolean;
  no_overdraft: boolean;
  balance: ColumnType<string, string | undefined, string>;
  created_at: Timestamp;
}

export interface LedgerEntriesTable {
  id: string;
  space_id: string;
  origin: 'rail' | 'manual' | 'import' | 'internal';
  kind: 'income' | 'expense' | 'transfer';
  occurred_on: DateText;
  cause_type: string;
  cause_id: string | null;
  counterparty: string;
  memo: string;
  reverses_entry_id: string | null;
  created_at: Timestamp;
}

export interface LedgerPostingsTable {
  id: string;
  space_id: string;
  entry_id: string;
  ledger_account_id: string;
  currency: string;
  amount: Numeric;
  occurred_on: DateText;
}

/** An income posting's contribution not yet moved into its day (see features/ledger/income-days.ts). */
export interface LedgerIncomeArrivalsTable {
  space_id: string;
  entry_id: string;
  ledger_account_id: string;
  currency: string;
  day: DateText;
  amount: Numeric;
}

/** One income account's postings of one day and currency, summed. */
export interface LedgerIncomeDaysTable {
  space_id: string;
  day: DateText;
  ledger_account_id: string;
  currency: string;
  amount: Numeric;
  entries: ColumnType<string, string | number | bigint, string | number | bigint>;
}

export interface ResourcesTable {
  id: string;
  space_id: string;
  address: string;
  name: ColumnType<string, string | undefined, string>;
  findable: ColumnType<boolean, boolean | undefined, boolean>;
  /** What the bazaar discovery list says of the endpoint: description, method, JSON Schemas. */
  description: ColumnType<string, string | undefined, string>;
  http_method: 'GET' | 'HEAD' | 'DELETE' | 'POST' | 'PUT' | 'PATCH' | null;
  input_schema: Json<Record<string, unknown>> | null;
  input_example: Json<Record<string, unknown>> | null;
  output_schema: Json<Record<string, unknown>> | null;
  output_example: Json<Record<string, unknown>> | null;
  created_at: Timestamp;
  updated_at: Timestamp;
}

export interface ClientCreditsTable {
  id: string;
  space_id: string;
  client_ref: string;
  currency: string;
  ledger_account_id: string;
  contact_id: string | null;
  page_token: string;
  created_at: Timestamp;
}

export interface PaymentRequestsTable {
  id: string;
  space_id: string;
  token: string;
  account_id: string;
  key_id: string | null;
  purpose: 'sale' | 'top_up';
  client_credit_id: string | null;
  amount: Numeric;
  currency: string;
  amount_received: ColumnType<string, string | undefined, string>;
  status: 'active' | 'paid' | 'cancelled';
  memo: string;
  resource_id: string | null;
  expires_at: Timestamp;
  created_at: Timestamp;
  paid_at: Timestamp | null;
  cancelled_at: Timestamp | null;
  invoice_id: ColumnType<string | null, string | null | undefined, string | null>;
  /** What the payer is asked to send (issue 22): unique among the account's open requests. */
  amount_due: Numeric;
  /** True when amount_due is unique among the account's active requests (a declared index). */
  unique_ask: ColumnType<boolean, boolean | undefined, boolean>;
}

export interface SettlementsTable {
  id: string;
  space_id: string;
  payment_request_id: string;
  rail: 'x402' | 'card' | 'bank' | 'chain' | 'manual';
  reference: string;
  amount: Numeric;
  currency: string;
  payer: string;
  entry_id: string;
  settled_at: Timestamp;
  reversed_at: ColumnType<Date | null, Date | null | undefined, Date | null>;
  matched_by: ColumnType<'exact' | 'oldest_first' | null, 'exact' | 'oldest_first' | null | undefined, never>;
}

export interface ChargesTable {
  id: string;
  space_id: string;
  client_credit_id: string;
  account_id: string;
  key_id: string | null;
  amount: Numeric;
  currency: string;
  memo: string;
  resource_id: string | null;
  entry_id: string;
  created_at: Timestamp;
}

export interface WebhookSubscriptionsTable {
  id: string;
  space_id: string;
  url: string;
  events: string[];
  secret_sealed: string;
  /** The secret before the last rotation, still signing until the time beside it. */
  previous_secret_sealed: string | null;
  previous_secret_until: Timestamp | null;
  status: 'active' | 'paused';
  created_at: Timestamp;
  paused_at: Timestamp | null;
  failing_since: Timestamp | null;
  last_failure_at: Timestamp | null;
  last_success_at: Timestamp | null;
}

export interface WebhookDeliveriesTable {
  id: string;
  space_id: string;
  event_id: string;
  event: string;
  target_kind: 'key' | 'subscription';
  key_id: string | null;
  subscription_id: string | null;
  status: 'pending' | 'held' | 'delivered' | 'given_up';
  attempts: ColumnType<number, number | undefined, number>;
  attempts_max: number;
  next_attempt_at: Timestamp;
  leased_until: Timestamp | null;
  lease_token: string | null;
  last_status_code: number | null;
  last_error: string | null;
  last_attempt_at: Timestamp | null;
  created_at: Timestamp;
  updated_at: Timestamp;
  delivered_at: Timestamp | null;
}

export interface PushBatchesTable {
  id: string;
  space_id: string;
  push_source_id: string;
  key_id: string | null;
  status: 'booked' | 'undone';
  rows_total: number;
  booked: number;
  duplicates: number;
  skipped_closed: number;
  rejected: number;
  accounts_created: string[];
  created_at: Timestamp;
  undone_at: Timestamp | null;
}

export interface PushRowsTable {
  push_source_id: string;
  external_id: string;
  space_id: string;
  batch_id: string;
  entry_id: string;
}

/** One row a push batch refused, and why. */
export interface PushRejectionsTable {
  batch_id: string;
  space_id: string;
  push_source_id: string;
  row_index: number;
  external_id: string | null;
  error: 'invalid_row' | 'currency_mismatch' | 'allowance_exceeded';
  detail: string;
}

export interface PushUsageTable {
  space_id: string;
  month: ColumnType<string, string, string>;
  rows_booked: number;
}

/** A person hid the first-steps checklist on a book's Home (`home_checklist_dismissals`). */
export interface HomeChecklistDismissalsTable {
  space_id: string;
  user_id: string;
  dismissed_at: Timestamp;
}

export interface Database {
  users: UsersTable;
  sessions: SessionsTable;
  spaces: SpacesTable;
  seller_profiles: SellerProfilesTable;
  seller_logos: SellerLogosTable;
  seller_logo_images: SellerLogoImagesTable;
  home_checklist_dismissals: HomeChecklistDismissalsTable;
  members: MembersTable;
  push_sources: PushSourcesTable;
  integration_keys: IntegrationKeysTable;
  notifications: NotificationsTable;
  idempotency_records: IdempotencyRecordsTable;
  rate_buckets: RateBucketsTable;
  accounts: AccountsTable;
  contacts: ContactsTable;
  contact_addresses: ContactAddressesTable;
  outbox_events: OutboxEventsTable;
  outbox_event_groups: OutboxEventGroupsTable;
  ledger_accounts: LedgerAccountsTable;
  ledger_entries: LedgerEntriesTable;
  ledger_postings: LedgerPostingsTable;
  ledger_income_arrivals: LedgerIncomeArrivalsTable;
  ledger_income_days: LedgerIncomeDaysTable;
  resources: ResourcesTable;
  client_credits: ClientCreditsTable;
  payment_requests: PaymentRequestsTable;
  settlements: SettlementsTable;
  charges: ChargesTable;
  webhook_subscriptions: WebhookSubscriptionsTable;
  webhook_deliveries: WebhookDeliveriesTable;
  push_batches: PushBatchesTable;
  push_rows: PushRowsTable;
  push_usage: PushUsageTable;
  push_rejections: PushRejectionsTable;
}

// Invoice mirroring. Declared by interface merging so the tables join the Database above
// without editing it.
type Json<T> = ColumnType<T, string, string>;

/** One line of an invoice as `invoices.line_items` keeps it: amounts as decimal strings. */
export type StoredLineItem = {
  description: string;
  unit_price: string;
  quantity: string;
  tax_kind: string | null;
  tax_rate: string;
  unit: string;
  amount: string;
};

/** One tax group of an invoice as `invoices.tax_breakdown` keeps it. */
export type StoredTaxGroup = { tax_kind: string | null; tax_rate: string; net: string; tax: string };

export type InvoiceKind = 'invoice' | 'credit_note' | 'quote';
export type InvoiceStatus =
  | 'draft'
  | 'sent'
  | 'partial'
  | 'paid'
  | 'issued'
  | 'void'
  | 'quote_draft'
  | 'quote_sent'
  | 'quote_accepted'
  | 'quote_declined'
  | 'quote_expired';

export interface InvoicesTable {
  id: string;
  space_id: string;
  key_id: string | null;
  account_id: string;
  contact_id: string | null;
  project_id: string | null;
  corrects_invoice_id: string | null;
  kind: InvoiceKind;
  status: InvoiceStatus;
  number: string;
  token: string;
  currency: string;
  issued_on: DateText;
  due_on: DateText;
  client_name: string;
  client_email: string;
  client_address: string;
  client_country: string;
  client_country_code: string;
  client_phone: string;
  client_reg_number: string;
  client_tax_id: string;
  seller_name: string;
  seller_email: string;
  seller_phone: string;
  seller_address: string;
  seller_country: string;
  seller_reg_number: string;
  seller_tax_id: string;
  seller_website: string;
  notes: string;
  purchase_order: string;
  tax_authority_number: string;
  tax_exempt_reason: string | null;
  tax_zero_reason: string | null;
  /** The actual delivery date (EN 16931 BT-72), when the seller states it. */
  delivered_on: ColumnType<string | null, string | null | undefined, string | null>;
  prices_include_tax: boolean;
  line_items: Json<StoredLineItem[]>;
  tax_breakdown: Json<StoredTaxGroup[]>;
  subtotal: Numeric;
  tax_total: Numeric;
  total: Numeric;
  paid_amount: Numeric;
  credited_amount: Numeric;
  auto_remind: boolean;
  last_paid_on: DateText | null;
  sent_at: Timestamp | null;
  paid_event_at: Timestamp | null;
  voided_at: Timestamp | null;
  void_reason: string;
  shortfall_amount: ColumnType<string, string | undefined, string>;
  /** For an accepted quote: the invoice made from it. */
  invoice_id: ColumnType<string | null, string | null | undefined, string | null>;
  reminders_paused_at: Timestamp | null;
  // Chat answers.
  payer_marked_paid_at: ColumnType<Date | null, Date | string | null | undefined, Date | string | null>;
  promised_on: ColumnType<string | null, string | null | undefined, string | null>;
  deferral_state: ColumnType<DeferralState | null, DeferralState | null | undefined, DeferralState | null>;
  delivered_in_app: ColumnType<boolean, boolean | undefined, boolean>;
  /** The seller as it stood when the document was sent; null before. */
  seller_snapshot: ColumnType<StoredSeller | null, string | null | undefined, string | null>;
  /** A decided quote: when the answer was given, and the name the client typed (empty from the app). */
  quote_decided_at: ColumnType<Date | null, Date | null | undefined, Date | null>;
  quote_decided_by: ColumnType<string, string | undefined, string>;
  created_at: Timestamp;
  updated_at: Timestamp;
}

/** The seller a sent document keeps (`invoices.seller_snapshot`). */
export type StoredSeller = {
  name: string;
  legal_name: string;
  address: {
    line1: string;
    line2: string;
    postal_code: string;
    city: string;
    region: string;
    country: string;
  };
  vat_id: string;
  tax_number: string;
  registration_id: string;
  email: string;
  phone: string;
  website: string;
  invoice_footer: string;
  /**
   * The book's logo when the document was sent (`seller_logo_images`), null for none; absent in
   * a snapshot taken before logos were kept, whose document shows the book's logo now.
   */
  logo_sha256?: string | null;
};

/** A document kind's numbering in a book (`document_numbering`). */
export interface DocumentNumberingTable {
  space_id: string;
  kind: InvoiceKind;
  prefix: string;
  last_value: number;
}

export interface InvoicePaymentsTable {
  id: string;
  seq: ColumnType<string, never, never>;
  space_id: string;
  invoice_id: string;
  account_id: string;
  amount: Numeric;
  currency: string;
  via: 'manual' | 'settlement' | 'card' | 'write_off';
  note: string;
  occurred_on: DateText;
  tx_id: string | null;
  entry_id: string | null;
  created_at: Timestamp;
}

export interface InvoiceDeliveriesTable {
  id: string;
  seq: ColumnType<string, never, never>;
  space_id: string;
  invoice_id: string;
  purpose: 'send' | 'remind';
  via: string[];
  recipient: string;
  cc: string[];
  message: string;
  created_at: Timestamp;
  auto_stage: ColumnType<AutoStage | null, AutoStage | null | undefined, AutoStage | null>;
  mail_file: ColumnType<string | null, string | null | undefined, string | null>;
}

export type AutoStage = 'before_due' | 'on_due' | 'after_due';

/** What a book is owed on invoices falling due on one day, in one currency. */
export interface InvoiceOwedDaysTable {
  space_id: string;
  currency: string;
  due_on: DateText;
  invoices: number;
  owed: Numeric;
}

/** One write's change to its book's open payment requests (see features/payment-requests/open-sums.ts). */
export interface PaymentRequestOpenArrivalsTable {
  space_id: string;
  id: string;
  payment_request_id: string;
  currency: string;
  requests: number;
  open: Numeric;
}

/** A book's active payment requests in one currency: how many, and what they still wait for. */
export interface PaymentRequestOpenTotalsTable {
  space_id: string;
  currency: string;
  requests: ColumnType<string, string | number | bigint, string | number | bigint>;
  open: Numeric;
}

export interface Database {
  payment_request_open_arrivals: PaymentRequestOpenArrivalsTable;
  payment_request_open_totals: PaymentRequestOpenTotalsTable;
  invoices: InvoicesTable;
  document_numbering: DocumentNumberingTable;
  invoice_payments: InvoicePaymentsTable;
  invoice_deliveries: InvoiceDeliveriesTable;
  invoice_owed_days: InvoiceOwedDaysTable;
}

// x402 settlements.
export interface X402SettlementsTable {
  id: string;
  space_id: string;
  payment_request_id: string | null;
  via: 'page' | 'facilitator';
  network: string;
  asset: string;
  payer: string;
  pay_to: string;
  nonce: string;
  amount_base: Numeric;
  resource_url: string | null;
  signature_hash: string;
  /** The payer's `payment-identifier` id: one live claim per (pay_to, payment_id). */
  payment_id: string | null;
  status: 'pending' | 'settled' | 'failed';
  tx_hash: string | null;
  error_reason: string | null;
  lease_until: Timestamp;
  created_at: Timestamp;
  settled_at: Timestamp | null;
}

export interface X402PendingTransactionsTable {
  signature_hash: string;
  tx_hash: string;
  created_at: Timestamp;
}

/** A transaction a gas wallet lane signed for a settlement: the first or a replacement at its nonce. */
export interface X402BroadcastsTable {
  tx_hash: string;
  first_hash: string;
  network: string;
  lane: string;
  nonce: ColumnType<string, string | bigint, string | bigint>;
  to_address: string;
  data: string;
  gas: Numeric;
  max_fee_per_gas: Numeric;
  max_priority_fee_per_gas: Numeric;
  created_at: Timestamp;
}

/** The last balance read of a gas wallet lane on a network. */
export interface GasWalletBalancesTable {
  network: string;
  address: string;
  wei: Numeric;
  low_since: Timestamp | null;
  read_at: Timestamp;
}

/** A book's secp256k1 key for signing x402 receipts (offer-receipt), sealed. */
export interface X402ReceiptKeysTable {
  space_id: string;
  address: string;
  key_sealed: string;
  created_at: Timestamp;
}

/** The signed receipt (the offer-receipt extension's EIP-712 form) of a settled x402 payment. */
export interface X402ReceiptsTable {
  claim_id: string;
  space_id: string;
  reference: string;
  receipt: Json<Record<string, unknown>>;
  issued_at: Timestamp;
}

/** A sign-in-with-x nonce a book accepted (see migrations/0380_x402_sign_in_nonces.sql). */
export interface X402SignInNoncesTable {
  space_id: string;
  nonce: string;
  client_ref: string;
  accepted_at: Timestamp;
  expires_at: Timestamp;
}

export interface Database {
  x402_settlements: X402SettlementsTable;
  x402_pending_transactions: X402PendingTransactionsTable;
  x402_broadcasts: X402BroadcastsTable;
  gas_wallet_balances: GasWalletBalancesTable;
  x402_receipt_keys: X402ReceiptKeysTable;
  x402_receipts: X402ReceiptsTable;
  x402_sign_in_nonces: X402SignInNoncesTable;
}

// Proven sites.
export interface SitesTable {
  id: string;
  space_id: string;
  origin: string;
  token: string;
  verified_at: Timestamp | null;
  created_at: Timestamp;
}

export interface Database {
  sites: SitesTable;
}

// The account watch.
export interface ChainCursorsTable {
  network: string;
  next_block: ColumnType<string, string | number | bigint, string | number | bigint>;
  updated_at: Timestamp;
}

export interface ChainTransfersTable {
  id: string;
  space_id: string;
  account_id: string;
  network: string;
  tx_hash: string;
  log_index: number;
  block_number: ColumnType<string, string | number | bigint, string | number | bigint>;
  block_hash: string;
  payer: string;
  amount: Numeric;
  source: 'watch' | 'x402';
  remainder_entry_id: string | null;
  status: 'booked' | 'reversed';
  created_at: Timestamp;
  reversed_at: Timestamp | null;
  /** The head at which a node first said the block was replaced and the receipt gone (0200). */
  suspect_since_block: ColumnType<string | null, string | null | undefined, string | null>;
  /** The reversed row this one books again, after its transaction was mined again (0200). */
  rebooks: string | null;
}

/** An executed chain payment whose transaction a node said was gone, and at which head (0200). */
export interface PayoutChainSuspectsTable {
  payout_id: string;
  space_id: string;
  since_block: ColumnType<string, string, string>;
}

export interface Database {
  chain_cursors: ChainCursorsTable;
  chain_transfers: ChainTransfersTable;
  payout_chain_suspects: PayoutChainSuspectsTable;
}

// Money out: payouts, their rules and approvals, the sanctions list.
export type PayoutStatus =
  | 'awaiting_approval'
  | 'approved'
  | 'executing'
  | 'executed'
  | 'blocked'
  | 'rejected'
  | 'failed'
  | 'cancelled';

export interface ApprovalRulesTable {
  id: string;
  space_id: string;
  min_amount: Numeric;
  currency: string;
  required_approvals: number;
  created_by: string;
  created_at: Timestamp;
  removed_at: Timestamp | null;
}

export interface PolicyRulesTable {
  id: string;
  space_id: string;
  kind: 'max_per_payment' | 'max_per_day' | 'blocked_destination' | 'allowed_currencies';
  amount: Numeric | null;
  currency: string | null;
  destination: string | null;
  currencies: string[] | null;
  created_by: string;
  created_at: Timestamp;
  removed_at: Timestamp | null;
}

export interface PayoutsTable {
  id: string;
  space_id: string;
  account_id: string;
  maker_id: string;
  amount: Numeric;
  currency: string;
  rail: 'book' | 'bank' | 'chain';
  payee: string;
  destination: string;
  requisites: ColumnType<Record<string, unknown> | null, string | null, string | null>;
  contact_id: string | null;
  note: string;
  occurred_on: ColumnType<string, string, string>;
  status: PayoutStatus;
  approval_rule_id: string | null;
  required_approvals: number;
  blocked_reason: string | null;
  release_reason: string | null;
  released_by: string | null;
  reject_reason: string | null;
  rejected_by: string | null;
  reference: string | null;
  transaction_id: string | null;
  tx_hash: string | null;
  created_at: Timestamp;
  approved_at: Timestamp | null;
  executed_at: Timestamp | null;
  updated_at: Timestamp;
}

/** The list entry that held a payment (migrations/0230_screening_matches.sql). */
export interface PayoutScreeningMatchesTable {
  space_id: string;
  payout_id: string;
  kind: 'name' | 'address';
  sdn_uid: string;
  listed: string;
  programs: string;
  score: Numeric;
  matched: string;
  /** Where the list that matched came from (migrations/0270). */
  list_source: ColumnType<string, string | undefined, string>;
  held_at: Timestamp;
}

/** A transfer in from a listed sender, booked and flagged (migrations/0270_inbound_screening_flags.sql). */
export interface InboundScreeningFlagsTable {
  space_id: string;
  transfer_id: string;
  sdn_uid: string;
  listed: string;
  programs: string;
  matched: string;
  list_source: string;
  flagged_at: Timestamp;
}

/** The ledger entries a flagged transfer made. */
export interface InboundScreeningFlagEntriesTable {
  space_id: string;
  entry_id: string;
  transfer_id: string;
}

export interface PayoutApprovalsTable {
  space_id: string;
  payout_id: string;
  user_id: string;
  created_at: Timestamp;
}

export interface ScreeningListsTable {
  id: string;
  source: string;
  published_on: string;
  entries: number;
  is_current: boolean;
  loaded_at: Timestamp;
  /** The download's validators, for the next conditional request (migrations/0230). */
  etag: string | null;
  last_modified: string | null;
  checked_at: Timestamp | null;
  check_outcome: string | null;
}

export interface ScreeningEntriesTable {
  list_id: string;
  kind: 'name' | 'address';
  value: string;
  sdn_uid: string;
  listed: ColumnType<string, string | undefined, string>;
  programs: ColumnType<string, string | undefined, string>;
}

export interface Database {
  approval_rules: ApprovalRulesTable;
  policy_rules: PolicyRulesTable;
  payouts: PayoutsTable;
  payout_approvals: PayoutApprovalsTable;
  screening_lists: ScreeningListsTable;
  screening_entries: ScreeningEntriesTable;
  payout_screening_matches: PayoutScreeningMatchesTable;
  inbound_screening_flags: InboundScreeningFlagsTable;
  inbound_screening_flag_entries: InboundScreeningFlagEntriesTable;
}

// The card rail in production: Stripe Checkout.
export interface CardCheckoutsTable {
  id: string;
  space_id: string;
  payment_request_id: string;
  session_id: string;
  currency: string;
  amount: Numeric;
  amount_minor: ColumnType<string, string | bigint, string | bigint>;
  status: ColumnType<'open' | 'paid', 'open' | 'paid' | undefined, 'open' | 'paid'>;
  payment_intent_id: string | null;
  settlement_id: string | null;
  paid_amount: ColumnType<string, string | undefined, string>;
  refunded_amount: ColumnType<string, string | undefined, string>;
  created_at: Timestamp;
  paid_at: Timestamp | null;
}

export interface StripeEventsTable {
  event_id: string;
  type: string;
  outcome: string;
  received_at: Timestamp;
}

export interface Database {
  card_checkouts: CardCheckoutsTable;
  stripe_events: StripeEventsTable;
}

// Throttled attempts and password resets.
export type ThrottleScope =
  | 'login-account'
  | 'login-address'
  | 'signup-address'
  | 'reset-account'
  | 'reset-address';

export interface AttemptThrottlesTable {
  scope: ThrottleScope;
  subject: string;
  attempts: number;
  locked_until: Timestamp | null;
  updated_at: Timestamp;
}

export interface PasswordResetsTable {
  id: string;
  user_id: string;
  token_hash: string;
  created_at: Timestamp;
  expires_at: Timestamp;
  used_at: Timestamp | null;
}

export interface Database {
  attempt_throttles: AttemptThrottlesTable;
  password_resets: PasswordResetsTable;
}

// Payments out: the status history the detail screen shows.
export interface PayoutStatusChangesTable {
  id: ColumnType<string, never, never>;
  space_id: string;
  payout_id: string;
  from_status: PayoutStatus;
  to_status: PayoutStatus;
  reason: string | null;
  changed_at: Timestamp;
}

export interface Database {
  payout_status_changes: PayoutStatusChangesTable;
}

// Chat.
export type DeferralState = 'requested' | 'accepted' | 'declined';

export interface ChatLinkCodesTable {
  code_hash: string;
  space_id: string;
  contact_id: string;
  key_id: string | null;
  created_at: Timestamp;
  expires_at: Timestamp;
  used_at: Timestamp | null;
}

export interface ContactChatsTable {
  id: string;
  space_id: string;
  contact_id: string;
  key_id: string | null;
  telegram_chat_id: string;
  title: string;
  connected_at: Timestamp;
  disconnected_at: Timestamp | null;
  disconnect_reason: 'replaced' | 'bot_removed' | null;
}

export interface ChatMessagesTable {
  id: string;
  space_id: string;
  contact_id: string;
  chat_id: string;
  direction: 'in' | 'out';
  kind: 'text' | 'file';
  text: ColumnType<string, string | undefined, string>;
  author: ColumnType<string, string | undefined, string>;
  author_user_id: string | null;
  telegram_message_id: string | null;
  file_name: string | null;
  file_size: number | null;
  content_type: string | null;
  file_sha256: string | null;
  created_at: Timestamp;
}

export interface TelegramUpdatesTable {
  update_id: ColumnType<string, string, never>;
  claimed_at: Timestamp;
}

export interface Database {
  chat_link_codes: ChatLinkCodesTable;
  contact_chats: ContactChatsTable;
  chat_messages: ChatMessagesTable;
  telegram_updates: TelegramUpdatesTable;
}

// Agents: tokens, fences, their writes and proposals, categories.

export type AgentStatus = 'observing' | 'active' | 'frozen';
export type AgentPerm = 'payments' | 'transactions' | 'chain_payments' | 'wallet' | 'x402' | 'cards';
export type AgentWriteKind =
  | 'payment'
  | 'transaction'
  | 'transaction_patch'
  | 'chain_payment'
  | 'wallet_transfer'
  | 'x402'
  | 'grant_change'
  | 'card_intent';
export type AgentWriteStatus =
  | 'applied'
  | 'pending'
  | 'approved'
  | 'rejected'
  | 'lapsed'
  | 'sending'
  | 'failed'
  | 'approving';

export interface AgentsTable {
  id: string;
  space_id: string;
  issuer_user_id: string;
  name: string;
  token_hash: string;
  prefix: string;
  status: AgentStatus;
  perms: AgentPerm[];
  accounts_restricted: boolean;
  x402_hosts: string[];
  allowed_merchants: string[];
  per_request_usd: Numeric;
  daily_usd: Numeric;
  fence_expires_at: Timestamp | null;
  wallet_address: string;
  wallet_key_sealed: string;
  created_at: Timestamp;
  updated_at: Timestamp;
  revoked_at: Timestamp | null;
  /** The UTC day (days since 1970-01-01) `spent_usd` counts; null before the first spend. */
  spent_day: number | null;
  spent_usd: Numeric;
}

export interface AgentAccountsTable {
  space_id: string;
  agent_id: string;
  account_id: string;
}

export interface CategoriesTable {
  id: string;
  space_id: string;
  name: string;
  kind: 'income' | 'expense' | 'transfer';
  created_at: Timestamp;
}

export interface AgentWritesTable {
  id: string;
  space_id: string;
  agent_id: string;
  kind: AgentWriteKind;
  input: ColumnType<Record<string, unknown>, string, string>;
  message: string;
  status: AgentWriteStatus;
  idempotency_key: string | null;
  request_hash: string | null;
  result: ColumnType<Record<string, unknown> | null, string | null, string | null>;
  decided_by: string | null;
  decided_at: Timestamp | null;
  reject_reason: string | null;
  created_at: Timestamp;
  /** The EIP-3009 authorization the write signed, recorded before it left the process. */
  signed_network: ColumnType<string | null, string | null | undefined, string | null>;
  signed_nonce: ColumnType<string | null, string | null | undefined, string | null>;
  signed_value: ColumnType<string | null, string | null | undefined, string | null>;
  signed_valid_before: ColumnType<Date | null, Date | null | undefined, Date | null>;
  /**
   * Already in flight when signed authorizations began to be recorded: nothing to repair it by,
   * so the repair job leaves it to an operator.
   */
  in_flight_before_repair: ColumnType<boolean, boolean | undefined, boolean>;
}

export interface AgentSpendTable {
  id: string;
  space_id: string;
  agent_id: string;
  write_id: string;
  amount_usd: Numeric;
  spent_at: Timestamp;
}

export interface AgentBookRowsTable {
  space_id: string;
  entry_id: string;
  agent_id: string;
  account_id: string;
  kind: 'income' | 'expense';
  category_id: string | null;
  note: string;
  payee: string;
  created_at: Timestamp;
  updated_at: Timestamp;
}

export interface Database {
  agents: AgentsTable;
  agent_accounts: AgentAccountsTable;
  categories: CategoriesTable;
  agent_writes: AgentWritesTable;
  agent_spend: AgentSpendTable;
  agent_book_rows: AgentBookRowsTable;
}

export interface CardIntentsTable {
  id: string;
  space_id: string;
  agent_id: string;
  merchant: string;
  purpose: string;
  ceiling_usd: Numeric;
  kind: 'one_off' | 'recurring';
  period: 'month' | 'year' | null;
  months: number | null;
  category_id: string | null;
  status: 'open' | 'matched' | 'expired';
  expires_at: Timestamp | null;
  created_at: Timestamp;
}

export interface CardIntentMatchesTable {
  space_id: string;
  intent_id: string;
  entry_id: string;
  amount: Numeric;
  within_ceiling: boolean;
  created_at: Timestamp;
}

export interface Database {
  card_intents: CardIntentsTable;
  card_intent_matches: CardIntentMatchesTable;
}

export type MailState = 'pending' | 'sent' | 'given_up';

export interface MailOutboxTable {
  id: string;
  message_id: string;
  space_id: string | null;
  recipient: string;
  cc: string[];
  from_name: string;
  subject: string;
  body_text: string;
  body_html: string;
  invoice_id: string | null;
  state: ColumnType<MailState, MailState | undefined, MailState>;
  attempts: ColumnType<number, number | undefined, number>;
  next_attempt_at: Timestamp;
  last_error: ColumnType<string, string | undefined, string>;
  mail_file: ColumnType<string | null, string | null | undefined, string | null>;
  sent_at: ColumnType<Date | null, Date | null | undefined, Date | null>;
  created_at: Timestamp;
}

export interface InvoiceDeliveriesTable {
  mail_id: ColumnType<string | null, string | null | undefined, string | null>;
}

export interface Database {
  mail_outbox: MailOutboxTable;
}

// 0260: invoices posted to a client's chat group after commit (features/invoices/chat-posts.ts).
export type ChatPostState = 'pending' | 'sent' | 'given_up';

export interface InvoiceChatPostsTable {
  id: string;
  space_id: string;
  invoice_id: string;
  contact_id: string;
  purpose: 'send' | 'remind';
  message: ColumnType<string, string | undefined, string>;
  state: ColumnType<ChatPostState, ChatPostState | undefined, ChatPostState>;
  attempts: ColumnType<number, number | undefined, number>;
  next_attempt_at: Timestamp;
  last_error: ColumnType<string, string | undefined, string>;
  sent_at: ColumnType<Date | null, Date | null | undefined, Date | null>;
  created_at: Timestamp;
}

export interface InvoiceDeliveriesTable {
  chat_post_id: ColumnType<string | null, string | null | undefined, string | null>;
}

export interface Database {
  invoice_chat_posts: InvoiceChatPostsTable;
}

/** A change made by hand to a client's prepaid credit (grant, correction or refund), with its entry. */
export interface ClientCreditAdjustmentsTable {
  id: string;
  space_id: string;
  client_credit_id: string;
  amount: Numeric;
  refund: ColumnType<boolean, boolean | undefined, boolean>;
  reason: string;
  user_id: string;
  entry_id: string;
  created_at: Timestamp;
}

export interface Database {
  client_credit_adjustments: ClientCreditAdjustmentsTable;
}

/** An edit of an account in the app: who, when, and each changed field before and after. */
export interface AccountEditsTable {
  id: string;
  space_id: string;
  account_id: string;
  user_id: string;
  changed: ColumnType<Record<string, { from: unknown; to: unknown }>, string, string>;
  created_at: Timestamp;
}

export interface Database {
  account_edits: AccountEditsTable;
}

/** An edit of a contact (`contact_edits`): who, when and each changed field's before and after. */
export interface ContactEditsTable {
  id: string;
  space_id: string;
  contact_id: string;
  user_id: string;
  changed: ColumnType<Record<string, { from: unknown; to: unknown }>, string, string>;
  created_at: Timestamp;
}

export interface Database {
  contact_edits: ContactEditsTable;
}

/** One attempt at sending a webhook delivery, with the answer's status, duration and excerpt. */
export interface WebhookDeliveryAttemptsTable {
  space_id: string;
  delivery_id: string;
  attempt: number;
  attempted_at: Timestamp;
  status_code: number | null;
  error: string | null;
  duration_ms: number | null;
  response_excerpt: string | null;
}

/** A subscription's "Send test": the webhook.test event sent once, and what came back. */
export interface WebhookTestSendsTable {
  space_id: string;
  id: string;
  subscription_id: string;
  url: string;
  sent_at: Timestamp;
  delivered: boolean;
  status_code: number | null;
  error: string | null;
  duration_ms: number;
  response_excerpt: string | null;
}

export interface Database {
  webhook_delivery_attempts: WebhookDeliveryAttemptsTable;
  webhook_test_sends: WebhookTestSendsTable;
}

/** An invitation to join a space with a role, answered once through its mailed link. */
export interface SpaceInvitationsTable {
  id: string;
  space_id: string;
  email: string;
  role: Role;
  token_hash: string;
  invited_by: string;
  created_at: Timestamp;
  expires_at: Timestamp;
  accepted_at: Timestamp | null;
  accepted_by: string | null;
  revoked_at: Timestamp | null;
}

export interface Database {
  space_invitations: SpaceInvitationsTable;
}
