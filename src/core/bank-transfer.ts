import { type AmountE8, formatAmountFixed } from './money.ts';

// A credit transfer as a payer's banking app takes it: the IBAN as people read it, and the
// GiroCode (EPC QR) that fills the transfer in. Used by the pay page and the invoice PDF.

/** An IBAN as people read it: groups of four ("DE89 3704 0044 0532 0130 00"). */
export function groupedIban(iban: string): string {
  return (iban.match(/.{1,4}/g) ?? []).join(' ');
}

/** The largest amount a GiroCode may carry: 999,999,999.99 euros. */
const EPC_AMOUNT_MAX = 99_999_999_999n * 1_000_000n;

/**
 * The payload of an EPC QR code ("GiroCode", EPC069-12, version 002, UTF-8) for a euro credit
 * transfer: service tag, version, character set, identification, BIC (optional in 002), the
 * beneficiary's name (70 at most), IBAN, "EUR" and the amount, no purpose, no structured
 * reference, the reference as remittance text (140 at most). Null when the amount cannot be
 * written exactly in cents or lies outside 0.01 to 999,999,999.99 euros: the payer then types
 * the transfer from the details shown.
 */
export function epcPayload(transfer: {
  bic: string | null;
  name: string;
  iban: string;
  amount: AmountE8;
  reference: string;
}): string | null {
  const cents = formatAmountFixed(transfer.amount, 2);
  if (cents === null || transfer.amount <= 0n || transfer.amount > EPC_AMOUNT_MAX) return null;
  return [
    'BCD',
    '002',
    '1',
    'SCT',
    transfer.bic ?? '',
    transfer.name.slice(0, 70),
    transfer.iban,
    `EUR${cents}`,
    '',
    '',
    transfer.reference.slice(0, 140),
  ].join('\n');
}
