import { type Static, type TSchema, Type } from 'typebox';

// Small builders over TypeBox so every route spells the spec's field kinds the same way.
// Nullable fields use JSON Schema type arrays rather than anyOf, so a wrong value produces one
// clear validation item instead of one per branch.

export { type Static, type TSchema, Type };

export type AmountKind = 'positive' | 'positive-unbounded' | 'signed';

/** The spec's amount inputs: a JSON number or a decimal string, checked by the `x-amount` keyword. */
export function Amount(kind: AmountKind, options: { description?: string } = {}) {
  return Type.Unsafe<number | string>({ type: ['number', 'string'], 'x-amount': kind, ...options });
}

export function NullableAmount(kind: AmountKind, options: { description?: string } = {}) {
  return Type.Unsafe<number | string | null>({
    type: ['number', 'string', 'null'],
    'x-amount': kind,
    ...options,
  });
}

export function Text(options: {
  minLength?: number;
  maxLength: number;
  default?: string;
  description?: string;
  pattern?: string;
  format?: string;
}) {
  return Type.String(options);
}

export function NullableText(options: {
  minLength?: number;
  maxLength: number;
  description?: string;
  pattern?: string;
}) {
  return Type.Unsafe<string | null>({ type: ['string', 'null'], ...options });
}

export const Uuid = (options: { description?: string } = {}) => Type.String({ format: 'uuid', ...options });
export const NullableUuid = (options: { description?: string } = {}) =>
  Type.Unsafe<string | null>({ type: ['string', 'null'], format: 'uuid', ...options });

export const DateOnly = (options: { description?: string } = {}) =>
  Type.String({ format: 'date', ...options });
export const NullableDateOnly = (options: { description?: string } = {}) =>
  Type.Unsafe<string | null>({ type: ['string', 'null'], format: 'date', ...options });
export const DateTime = (options: { description?: string } = {}) =>
  Type.String({ format: 'date-time', ...options });
export const NullableDateTime = (options: { description?: string } = {}) =>
  Type.Unsafe<string | null>({ type: ['string', 'null'], format: 'date-time', ...options });

export const NullableBoolean = () => Type.Unsafe<boolean | null>({ type: ['boolean', 'null'] });

/** Decimal-string outputs (amounts are never JSON numbers on the way out). */
export const DecimalOut = (options: { description?: string } = {}) => Type.String(options);
export const NullableDecimalOut = () => Type.Unsafe<string | null>({ type: ['string', 'null'] });

export function Enum<const T extends readonly string[]>(
  values: T,
  options: { default?: T[number]; description?: string } = {},
) {
  return Type.Unsafe<T[number]>({ type: 'string', enum: [...values], ...options });
}

export function NullableEnum<const T extends readonly string[]>(values: T) {
  return Type.Unsafe<T[number] | null>({ type: ['string', 'null'], enum: [...values, null] });
}

export const ErrorBody = Type.Object(
  {
    error: Type.String({ description: 'A stable error code.' }),
    detail: Type.String({ description: 'A sentence for a person.' }),
    details: Type.Optional(Type.Record(Type.String(), Type.Unknown())),
  },
  { $id: 'ErrorBody', description: 'Every refusal other than a schema failure.' },
);

export const ValidationErrorBody = Type.Object(
  {
    detail: Type.Array(
      Type.Object({
        loc: Type.Array(Type.Union([Type.String(), Type.Integer()])),
        msg: Type.String(),
        type: Type.String(),
      }),
    ),
  },
  { $id: 'HTTPValidationError', description: 'One item per problem found in the request.' },
);

/** The refusals every integration route can answer, for the OpenAPI document. */
export const integrationRefusals = {
  401: Type.Ref('ErrorBody'),
  403: Type.Ref('ErrorBody'),
  404: Type.Ref('ErrorBody'),
  422: Type.Union([Type.Ref('ErrorBody'), Type.Ref('HTTPValidationError')]),
  429: Type.Ref('ErrorBody'),
};

/** `?cursor=` of a list read newest first, 50 a page. */
export const CursorParam = Type.Optional(
  Type.String({ minLength: 1, maxLength: 200, description: "The previous page's next_cursor." }),
);

/** One page of a list: its items and the cursor of the next page (null on the last). */
export function CursorPage<T extends TSchema>(item: T, options: { $id?: string; title?: string } = {}) {
  return Type.Object(
    {
      items: Type.Array(item),
      next_cursor: Type.Union([Type.String(), Type.Null()], {
        description: 'Pass as cursor for the next 50 (newest first); null on the last page.',
      }),
    },
    options,
  );
}

/** An empty string or an email address; if/then keeps the empty case out of the error list. */
export const EmailOrEmpty = (maxLength = 200, options: { default?: string; description?: string } = {}) =>
  Type.Unsafe<string>({
    type: 'string',
    maxLength,
    ...options,
    if: { type: 'string', minLength: 1 },
    // biome-ignore lint/suspicious/noThenProperty: this is JSON Schema's if/then, not a promise.
    then: { type: 'string', format: 'email' },
    description: options.description ?? 'An email address, or empty.',
  });
