import type { FastifyContextConfig, FastifyRequest } from 'fastify';
import type { TUnsafe } from 'typebox';
import { AppError } from '../../core/errors.ts';
import { type Static, type TSchema, Type } from '../http/schema-kit.ts';
import { toValidationItems } from '../http/validation.ts';
import type { FormState } from './components.tsx';

// A form's route lets its handler run when the form failed its schema (attachValidation), so
// the page can show each error beside its field. Until that is known, what the person sent is
// not the schema's type: a form route types its form part as `Posted<T>`, which no handler can
// read, and `runForm` (or `openForm`) opens it only once the schema is known to have passed.
// Everything else on such a route (the address, and the query of a posted form) is checked
// before the handler runs (see `checkOutsideForm`), so it is typed as its schema says.

declare const unchecked: unique symbol;

/** What a person sent in a form, before its schema is known to have passed. */
export type Posted<T> = { readonly [unchecked]: T };

type Open<X> = X extends Posted<infer T> ? T : X;

/** The request's form part (and query) once its schema passed. */
export type Opened<R extends FastifyRequest> = { body: Open<R['body']>; query: Open<R['query']> };

/** Which part of the request is the form: a posted body, or the query of a GET filter form. */
export type FormPart = 'body' | 'querystring';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** Set by `formRoute`/`filterFormRoute`: the part whose errors are shown in place. */
    formPart?: FormPart;
  }
}

/** A schema that checks as `schema` does, typed `Posted` (its static type is declared here). */
type PostedSchema<T extends TSchema> = TUnsafe<Posted<Static<T>>>;

function posted<T extends TSchema>(schema: T): PostedSchema<T> {
  return Type.Unsafe(schema);
}

type RouteOptions<Schema> = {
  schema: Schema;
  attachValidation: true;
  config: FastifyContextConfig & { formPart: FormPart };
};

/**
 * The options of a route that takes a posted form: the body is shown in place when it fails
 * its schema; a bad address or query is refused as on any page route (400).
 */
export function formRoute<S extends { body: TSchema; params?: TSchema; querystring?: TSchema }>(
  schema: S,
  config: FastifyContextConfig = {},
): RouteOptions<Omit<S, 'body'> & { hide: true; body: PostedSchema<S['body']> }> {
  const { body: _body, ...rest } = schema;
  return {
    schema: { ...rest, hide: true, body: posted<S['body']>(schema.body) },
    attachValidation: true,
    config: { ...config, formPart: 'body' },
  };
}

/** The options of a GET whose query is a filter form: its errors are shown in place. */
export function filterFormRoute<S extends { querystring: TSchema; params?: TSchema }>(
  schema: S,
): RouteOptions<Omit<S, 'querystring'> & { hide: true; querystring: PostedSchema<S['querystring']> }> {
  const { querystring: _querystring, ...rest } = schema;
  return {
    schema: { ...rest, hide: true, querystring: posted<S['querystring']>(schema.querystring) },
    attachValidation: true,
    config: { formPart: 'querystring' },
  };
}

function validationRefusal(validation: unknown) {
  return Object.assign(new Error('The query does not match the route.'), { validation, statusCode: 400 });
}

/**
 * A preHandler of the /app scope. On a form route, a failure outside the form part (the
 * address, or the query of a posted form) is refused here, as every page route refuses it.
 * Fastify stops at the first failing part (params, body, querystring), so when the body
 * failed, the query was never checked: it is checked here, so the handler can trust it.
 */
export function checkOutsideForm(request: FastifyRequest) {
  const part = request.routeOptions.config.formPart;
  const failed = request.validationError;
  if (part === undefined || !failed) return;
  if (failed.validationContext !== part) throw failed;
  if (part !== 'body') return;
  const checkQuery = request.getValidationFunction('querystring');
  if (checkQuery && !checkQuery(request.query)) throw validationRefusal(checkQuery.errors);
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** What the person typed, to fill the form again: the form part as it arrived. */
function sentValues(request: FastifyRequest): Record<string, unknown> {
  const sent = request.routeOptions.config.formPart === 'querystring' ? request.query : request.body;
  return isRecord(sent) ? sent : {};
}

/**
 * The API's validator wording ("String should have at least 10 characters") as a sentence a
 * person reads beside the field. The API's 422 body keeps its own wording; only forms say this.
 */
const FOR_PEOPLE: Record<string, string | ((limit: string) => string)> = {
  missing: 'Fill this in.',
  string_pattern_mismatch: 'This is not in the expected form.',
  string_too_short: (limit) => (limit === '1' ? 'Fill this in.' : `Type at least ${limit} characters.`),
  string_too_long: (limit) => `Keep this to ${limit} characters or fewer.`,
  too_short: (limit) => `Choose at least ${limit}.`,
  too_long: (limit) => `Choose at most ${limit}.`,
  enum: 'Choose one of the options.',
  literal_error: 'Choose one of the options.',
  int_type: 'Type a whole number.',
  int_parsing: 'Type a whole number.',
  float_type: 'Type a number.',
  decimal_type: 'Type an amount, like 12.50.',
  bool_type: 'Choose yes or no.',
  greater_than_equal: (limit) => `Type a number of ${limit} or more.`,
  greater_than: (limit) => `Type a number above ${limit}.`,
  less_than_equal: (limit) => `Type a number of ${limit} or less.`,
  less_than: (limit) => `Type a number below ${limit}.`,
  uuid_parsing: 'Choose one from the list.',
  date_parsing: 'Type a date as YYYY-MM-DD.',
  datetime_parsing: 'Type a date and time.',
  url_parsing: 'Type a full web address, starting with https://.',
};

/** The API's wording for one failed field, as a sentence for the form. */
export function sentenceForPeople(item: { type: string; msg: string }): string {
  const known = FOR_PEOPLE[item.type];
  if (typeof known === 'string') return known;
  if (known) return known(/(-?\d+(?:\.\d+)?)/.exec(item.msg)?.[1] ?? '');
  if (item.type === 'value_error' && /email/i.test(item.msg))
    return 'Type an email address, like name@example.com.';
  // Anything still in the validator's words says nothing to a person.
  if (/^(?:String|Input|List)\b.* should/.test(item.msg)) return 'This is not a value this field takes.';
  return item.msg;
}

type FormRefusal = { ok: false; status: number; form: FormState };

/** The form as its schema checked it, or its errors as the form's state, to show in place. */
export function openForm<R extends FastifyRequest>(request: R): ({ ok: true } & Opened<R>) | FormRefusal {
  const failed = request.validationError;
  if (!failed) {
    // The one place a posted form is opened: its schema passed (no validationError).
    const opened = { body: request.body, query: request.query } as Opened<R>;
    return { ok: true, ...opened };
  }
  const items = toValidationItems(failed.validation ?? [], failed.validationContext ?? 'body');
  const errors: Record<string, string> = {};
  for (const item of items) {
    const field = item.loc.slice(1).join('.');
    errors[field] ??= sentenceForPeople(item);
  }
  const sentence = errors[''] ?? 'Some fields need another look.';
  return { ok: false, status: 422, form: { values: sentValues(request), errors, sentence } };
}

/**
 * Runs a form's write with the form as its schema checked it; a form that failed its schema,
 * or a refusal from the service, comes back as the form's state, to be shown in place.
 */
export async function runForm<R extends FastifyRequest, T>(
  request: R,
  write: (sent: Opened<R>) => Promise<T>,
): Promise<{ ok: true; value: T } | FormRefusal> {
  const opened = openForm(request);
  if (!opened.ok) return opened;
  try {
    return { ok: true, value: await write(opened) };
  } catch (error) {
    if (!(error instanceof AppError)) throw error;
    const field = typeof error.details?.field === 'string' ? error.details.field : undefined;
    return {
      ok: false,
      status: error.status,
      form: {
        values: sentValues(request),
        errors: field ? { [field]: error.message } : {},
        sentence: error.message,
      },
    };
  }
}
