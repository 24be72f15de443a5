// Stable error codes (DECISIONS.md "Errors"): extend this table, never rename an entry.
// One table maps each code to its HTTP status, so a refusal is always answered the same way.

export const ERROR_STATUS = {
  invalid_json: 400,
  invalid_signature: 400,
  unauthorized: 401,
  card_declined: 402,
  missing_scope: 403,
  not_a_member: 403,
  forbidden: 403,
  plan_required: 403,
  agent_frozen: 403,
  missing_perm: 403,
  not_found: 404,
  idempotency_in_progress: 409,
  conflict: 409,
  request_not_payable: 409,
  authorization_used: 409,
  invoice_number_taken: 409,
  payload_too_large: 413,
  unsupported_media_type: 415,
  account_not_found: 422,
  amount_not_accepted: 422,
  currency_mismatch: 422,
  webhook_address_not_public: 422,
  invoice_state: 422,
  einvoice_incomplete: 422,
  site_not_verified: 422,
  delivery_unavailable: 422,
  delivery_failed: 502,
  transfer_failed: 502,
  card_provider_unavailable: 502,
  period_closed: 422,
  key_limit_reached: 422,
  idempotency_key_reused: 422,
  invalid_request: 422,
  user_not_found: 422,
  last_owner: 422,
  subscription_limit_reached: 422,
  insufficient_balance: 422,
  payment_state: 422,
  proposal_state: 422,
  maker_cannot_approve: 403,
  already_approved: 409,
  rate_limited: 429,
  internal: 500,
  chat_unavailable: 503,
  service_unavailable: 503,
} as const;

export type ErrorCode = keyof typeof ERROR_STATUS;

export type ErrorBody = { error: ErrorCode; detail: string; details?: Record<string, unknown> };

/** A refusal the client can act on. Bugs are not AppErrors: they are assertion failures. */
export class AppError extends Error {
  readonly code: ErrorCode;
  readonly details: Record<string, unknown> | undefined;

  constructor(code: ErrorCode, detail: string, details?: Record<string, unknown>) {
    super(detail);
    this.name = 'AppError';
    this.code = code;
    this.details = details;
  }

  get status(): number {
    return ERROR_STATUS[this.code];
  }

  toBody(): ErrorBody {
    return this.details === undefined
      ? { error: this.code, detail: this.message }
      : { error: this.code, detail: this.message, details: this.details };
  }
}

export function statusOf(code: ErrorCode): number {
  return ERROR_STATUS[code];
}
