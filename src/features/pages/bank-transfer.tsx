// The bank transfer on the pay page: who to pay, the account, the amount and the reference, each
// with a copy button (/assets/pay-copy.js), and for euros to an IBAN the GiroCode banking apps
// scan. The business is named by its trading name, never by an account's nickname or a handle.

export type BankAccountView =
  | { scheme: 'sepa'; holder: string; iban: string; ibanGrouped: string; bic: string | null }
  | { scheme: 'uk'; holder: string; accountNumber: string; sortCode: string }
  | { scheme: 'us_ach'; holder: string; accountNumber: string; routingNumber: string }
  | { scheme: 'swift'; holder: string; accountNumber: string; bic: string; bankName: string | null };

export type BankTransferView = {
  seller: string;
  account: BankAccountView | null;
  /** The account's free-text details, shown when it has no requisites. */
  details: string;
  amount: string;
  /** The amount as a bank form takes it ("1234.50"). */
  amountPlain: string;
  reference: string;
  /** The GiroCode as a PNG data address, for euro transfers to an IBAN. */
  epcImage: string | null;
  epcPayload: string | null;
};

function CopyRow(props: { id: string; label: string; shown: string; copied: string }) {
  return (
    <div class="copy-row">
      <dt>{props.label}</dt>
      <dd>
        <code id={props.id}>{props.shown}</code>
        <button
          type="button"
          class="copy"
          data-copy={props.copied}
          aria-label={`Copy the ${props.label.toLowerCase()}`}
        >
          Copy
        </button>
      </dd>
    </div>
  );
}

function AccountRows({ bank }: { bank: BankTransferView }) {
  const account = bank.account;
  if (account === null) return null;
  switch (account.scheme) {
    case 'sepa':
      return (
        <>
          <CopyRow id="bank-iban" label="IBAN" shown={account.ibanGrouped} copied={account.iban} />
          {account.bic && <CopyRow id="bank-bic" label="BIC" shown={account.bic} copied={account.bic} />}
        </>
      );
    case 'uk':
      return (
        <>
          <CopyRow
            id="bank-account-number"
            label="Account number"
            shown={account.accountNumber}
            copied={account.accountNumber}
          />
          <CopyRow id="bank-sort-code" label="Sort code" shown={account.sortCode} copied={account.sortCode} />
        </>
      );
    case 'us_ach':
      return (
        <>
          <CopyRow
            id="bank-account-number"
            label="Account number"
            shown={account.accountNumber}
            copied={account.accountNumber}
          />
          <CopyRow
            id="bank-routing-number"
            label="Routing number"
            shown={account.routingNumber}
            copied={account.routingNumber}
          />
        </>
      );
    case 'swift':
      return (
        <>
          <CopyRow
            id="bank-account-number"
            label="Account number"
            shown={account.accountNumber}
            copied={account.accountNumber}
          />
          <CopyRow id="bank-bic" label="SWIFT/BIC" shown={account.bic} copied={account.bic} />
          {account.bankName && (
            <CopyRow id="bank-name" label="Bank" shown={account.bankName} copied={account.bankName} />
          )}
        </>
      );
  }
}

export function BankTransfer({ bank }: { bank: BankTransferView }) {
  return (
    <section class="card rail" id="rail-bank">
      <h2>Bank transfer</h2>
      <p>
        Transfer <strong>{bank.amount}</strong> to <strong>{bank.seller}</strong>.
      </p>
      <dl class="transfer">
        {bank.account && (
          <CopyRow
            id="bank-holder"
            label="Account holder"
            shown={bank.account.holder}
            copied={bank.account.holder}
          />
        )}
        <AccountRows bank={bank} />
        <CopyRow id="bank-amount" label="Amount" shown={bank.amount} copied={bank.amountPlain} />
        <CopyRow id="bank-reference" label="Reference" shown={bank.reference} copied={bank.reference} />
      </dl>
      {bank.account === null && bank.details !== '' && <p class="muted details">{bank.details}</p>}
      {bank.epcImage && (
        <div class="girocode">
          <img
            class="qr"
            id="bank-qr"
            src={bank.epcImage}
            width={200}
            height={200}
            alt="GiroCode: scan it with your banking app to fill in the transfer"
          />
          <p class="muted">Scan with your banking app (GiroCode) to fill in the transfer.</p>
        </div>
      )}
      <p class="muted">Write the reference exactly, so the payment is matched to this request.</p>
    </section>
  );
}
