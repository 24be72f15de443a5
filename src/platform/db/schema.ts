import type { ColumnType } from 'kysely';

// Row shapes as the drivers return them: NUMERIC arrives as text (parsed by core/money in the
// stores), timestamptz as Date, date as text (cast in queries), arrays as arrays.

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
  push_source_id: string | null;
  created_at: Timestamp;
  expires_at: Timestamp | null;
  revoked_at: Timestamp | null;
  expiry_reminded_at: Timestamp | null;
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
  balance: Numeric;
  push_source_id: string | null;
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

export interface Database {
  users: UsersTable;
  sessions: SessionsTable;
  spaces: SpacesTable;
  members: MembersTable;
  push_sources: PushSourcesTable;
  integration_keys: IntegrationKeysTable;
  notifications: NotificationsTable;
  idempotency_records: IdempotencyRecordsTable;
  rate_buckets: RateBucketsTable;
  accounts: AccountsTable;
  contacts: ContactsTable;
  contact_addresses: ContactAddressesTable;
}
