import type { Ajv, ErrorObject } from 'ajv';
import { AMOUNT_MAX, type AmountE8, parseAmountInput, WHOLE_DIGITS_MAX } from '../../core/money.ts';
import type { AmountKind } from './schema-kit.ts';

// Validation is done by the route schemas alone. The `x-amount` keyword applies the money
// grammar (core/money) inside AJV, so a bad amount is one more item in the 422 list.

function amountProblem(kind: AmountKind, value: number | string): { message: string; type: string } | null {
  const parsed = parseAmountInput(value);
  if (!parsed.ok) {
    if (parsed.problem === 'too_large') {
      return {
        type: 'less_than_equal',
        message: `Amount should have at most ${WHOLE_DIGITS_MAX} digits before the decimal point`,
      };
    }
    if (parsed.problem === 'too_precise') {
      return { type: 'decimal_max_places', message: 'Amount should have no more than 8 decimal places' };
    }
    return {
      type: 'decimal_parsing',
      message: 'Amount should be a JSON number or a decimal string such as "12.50"',
    };
  }
  const amount: AmountE8 = parsed.value;
  if (kind !== 'signed' && amount <= 0n)
    return { type: 'greater_than', message: 'Amount should be greater than 0' };
  if (kind === 'positive' && amount > AMOUNT_MAX) {
    return { type: 'less_than_equal', message: 'Amount should be at most 10000000000000000 (1e16)' };
  }
  if (kind === 'signed' && (amount > AMOUNT_MAX || amount < -AMOUNT_MAX)) {
    return { type: 'less_than_equal', message: 'Amount should be between -1e16 and 1e16' };
  }
  return null;
}

const DATE_SHAPE = /^(\d{4})-(\d{2})-(\d{2})$/;

/**
 * A calendar date PostgreSQL can store: years 0001 to 9999 (there is no year zero), a real day of
 * its month (2026-02-29 is refused, 2028-02-29 accepted).
 */
export function isCalendarDate(text: string): boolean {
  const match = DATE_SHAPE.exec(text);
  if (!match) return false;
  const [year, month, day] = [Number(match[1]), Number(match[2]), Number(match[3])];
  if (year < 1 || month < 1 || month > 12 || day < 1) return false;
  const leap = (year % 4 === 0 && year % 100 !== 0) || year % 400 === 0;
  const days = [31, leap ? 29 : 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31][month - 1];
  return days !== undefined && day <= days;
}

/** An AJV plugin, passed to Fastify's `ajv.plugins`: the amount keyword and the strict date format. */
export function amountKeyword(ajv: Ajv): Ajv {
  ajv.addFormat('date', { type: 'string', validate: isCalendarDate });
  type Validate = ((kind: AmountKind, data: number | string) => boolean) & {
    errors?: Partial<ErrorObject>[];
  };
  const validate: Validate = (kind, data) => {
    const problem = amountProblem(kind, data);
    if (problem === null) return true;
    validate.errors = [{ keyword: 'x-amount', message: problem.message, params: { type: problem.type } }];
    return false;
  };
  ajv.addKeyword({
    keyword: 'x-amount',
    type: ['number', 'string'],
    schemaType: 'string',
    errors: true,
    validate,
  });
  return ajv;
}

export type ValidationItem = { loc: (string | number)[]; msg: string; type: string };

const TYPE_NAMES: Record<string, [string, string]> = {
  string: ['string_type', 'Input should be a valid string'],
  integer: ['int_type', 'Input should be a valid integer'],
  number: ['float_type', 'Input should be a valid number'],
  boolean: ['bool_type', 'Input should be a valid boolean'],
  array: ['list_type', 'Input should be a valid list'],
  object: ['model_type', 'Input should be an object'],
  null: ['none_required', 'Input should be null'],
};

const FORMAT_NAMES: Record<string, [string, string]> = {
  uuid: ['uuid_parsing', 'Input should be a valid UUID'],
  date: ['date_parsing', 'Input should be a valid date in the format YYYY-MM-DD'],
  'date-time': ['datetime_parsing', 'Input should be a valid date-time with a time-zone offset'],
  email: ['value_error', 'Input should be a valid email address'],
  uri: ['url_parsing', 'Input should be a valid URL'],
};

function describeType(expected: string | string[]): [string, string] {
  const types = (Array.isArray(expected) ? expected : expected.split(',')).filter((name) => name !== 'null');
  if (types.includes('number') && types.includes('string')) {
    return ['decimal_type', 'Input should be a JSON number or a decimal string'];
  }
  const first = types[0] ?? 'object';
  return TYPE_NAMES[first] ?? ['type_error', `Input should be of type ${first}`];
}

/**
 * One failed schema check, as AJV reports it and Fastify passes it on (its `validation` items):
 * only what the 422 body is made of.
 */
export type SchemaFailure = {
  keyword: string;
  instancePath: string;
  params: Record<string, unknown>;
  message?: string | undefined;
};

function describe(error: SchemaFailure): [string, string] {
  const params = error.params as Record<string, unknown>;
  switch (error.keyword) {
    case 'required':
      return ['missing', 'Field required'];
    case 'type':
      return describeType(params.type as string | string[]);
    case 'minLength':
      return ['string_too_short', `String should have at least ${params.limit} characters`];
    case 'maxLength':
      return ['string_too_long', `String should have at most ${params.limit} characters`];
    case 'minItems':
      return ['too_short', `List should have at least ${params.limit} items`];
    case 'maxItems':
      return ['too_long', `List should have at most ${params.limit} items`];
    case 'enum':
      return [
        'enum',
        `Input should be one of: ${(params.allowedValues as unknown[]).filter((v) => v !== null).join(', ')}`,
      ];
    case 'const':
      return ['literal_error', `Input should be ${JSON.stringify(params.allowedValue)}`];
    case 'format':
      return (
        FORMAT_NAMES[String(params.format)] ?? [
          'value_error',
          `Input should match the format ${params.format}`,
        ]
      );
    case 'pattern':
      return ['string_pattern_mismatch', `String should match the pattern ${params.pattern}`];
    case 'minimum':
      return ['greater_than_equal', `Input should be greater than or equal to ${params.limit}`];
    case 'exclusiveMinimum':
      return ['greater_than', `Input should be greater than ${params.limit}`];
    case 'maximum':
      return ['less_than_equal', `Input should be less than or equal to ${params.limit}`];
    case 'exclusiveMaximum':
      return ['less_than', `Input should be less than ${params.limit}`];
    case 'multipleOf':
      return ['multiple_of', `Input should be a multiple of ${params.multipleOf}`];
    case 'uniqueItems':
      return ['value_error', 'List items should be unique'];
    case 'x-amount':
      return [String(params.type), error.message ?? 'Invalid amount'];
    default:
      return ['value_error', error.message ?? 'Invalid value'];
  }
}

function pathSegments(instancePath: string): (string | number)[] {
  if (instancePath === '') return [];
  return instancePath
    .slice(1)
    .split('/')
    .map((segment) => segment.replace(/~1/g, '/').replace(/~0/g, '~'))
    .map((segment) => (/^\d+$/.test(segment) ? Number(segment) : segment));
}

const CONTEXT_NAMES: Record<string, string> = {
  querystring: 'query',
  params: 'path',
  headers: 'header',
  body: 'body',
};

/** AJV errors in the 2.8 shape: `loc` starts with where the value was (body, query, path). */
export function toValidationItems(errors: readonly SchemaFailure[], context: string): ValidationItem[] {
  const root = CONTEXT_NAMES[context] ?? context;
  const items: ValidationItem[] = [];
  const seen = new Set<string>();
  for (const error of errors) {
    // The anyOf/oneOf summary repeats what its branches already said.
    if (error.keyword === 'anyOf' || error.keyword === 'oneOf' || error.keyword === 'if') continue;
    const loc: (string | number)[] = [root, ...pathSegments(error.instancePath)];
    if (error.keyword === 'required')
      loc.push(String((error.params as { missingProperty: string }).missingProperty));
    const [type, msg] = describe(error);
    const signature = `${loc.join('\u0000')}|${type}`;
    if (seen.has(signature)) continue;
    seen.add(signature);
    items.push({ loc, msg, type });
  }
  return items;
}
