import { AppError } from '../../core/errors.ts';

// Networks a crypto account may name (DECISIONS "Chains and addresses").
export const NETWORKS = [
  'base',
  'ethereum',
  'polygon',
  'base-sepolia',
  'ethereum-sepolia',
  'polygon-amoy',
  'local',
] as const;
export const CHAINS = ['evm'] as const;

const EVM_ADDRESS = /^0x[0-9a-fA-F]{40}$/;
const CURRENCY = /^[A-Za-z0-9]{2,12}$/;
const COLOR = /^#(?:[0-9a-fA-F]{3}|[0-9a-fA-F]{6}|[0-9a-fA-F]{8})$/;

export type AccountShape = {
  kind: string;
  currency: string;
  address: string | null;
  chain: string | null;
  network: string | null;
  color: string | null;
};

function refuse(field: string, detail: string): never {
  throw new AppError('invalid_request', detail, { field });
}

/** Checks the cross-field rules a schema cannot say, and fills the crypto defaults. */
export function normalizeAccount<T extends AccountShape>(input: T): T {
  if (!CURRENCY.test(input.currency))
    refuse('currency', 'currency must be 2 to 12 letters or digits, such as USD or USDC.');
  if (input.color !== null && !COLOR.test(input.color))
    refuse('color', 'color must be a hex colour such as #1a7f5a.');
  const normalized = { ...input, currency: input.currency.toUpperCase() };
  if (input.kind !== 'crypto') return normalized;
  const chain = input.chain ?? 'evm';
  if (!(CHAINS as readonly string[]).includes(chain))
    refuse('chain', `chain must be one of: ${CHAINS.join(', ')}.`);
  if (input.network !== null && !(NETWORKS as readonly string[]).includes(input.network)) {
    refuse('network', `network must be one of: ${NETWORKS.join(', ')}.`);
  }
  if (input.address !== null && !EVM_ADDRESS.test(input.address)) {
    refuse('address', 'address must be an EVM address: 0x followed by 40 hexadecimal characters.');
  }
  return { ...normalized, chain };
}

/** Requisites say how a payer reaches a bank: only bank accounts have them. */
export function refuseRequisitesOffBank(kind: string, hasRequisites: boolean): void {
  if (hasRequisites && kind !== 'bank')
    refuse('requisites', 'Only a bank account has bank requisites (IBAN, account number…).');
}
