// The card form's script: posts the card as JSON and shows which of three ways it ended. An
// answer of 2xx is paid; a 4xx is a definite no, with the server's words; no answer at all (the
// connection failed), a 5xx or a body that is not JSON leave the outcome unknown, and the page
// says so and asks the status poller instead of claiming the payment failed. Paying again is
// safe: a request once paid refuses a second payment.
(() => {
  const form = document.getElementById('card-form');
  if (!form) return;
  const result = document.getElementById('card-result');
  const button = form.querySelector('button');
  const UNKNOWN =
    'We could not tell whether the payment went through. This page checks and turns to Paid if it did; if it still shows unpaid in a minute, pay again (a paid request is never charged twice).';
  async function attempt(data) {
    let res;
    try {
      res = await fetch('/pay/' + encodeURIComponent(form.dataset.token) + '/card', {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'application/json' },
        body: JSON.stringify(data),
      });
    } catch {
      return { kind: 'unknown' };
    }
    if (res.status >= 500) return { kind: 'unknown' };
    let body;
    try {
      body = await res.json();
    } catch {
      return res.ok ? { kind: 'paid' } : { kind: 'unknown' };
    }
    if (res.ok) return { kind: 'paid' };
    return { kind: 'refused', detail: body && typeof body.detail === 'string' ? body.detail : '' };
  }
  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    // One payment at a time: a second click waits for the first answer.
    if (button.disabled) return;
    button.disabled = true;
    result.textContent = 'Paying…';
    const outcome = await attempt(Object.fromEntries(new FormData(form).entries()));
    result.dataset.outcome = outcome.kind;
    if (outcome.kind === 'paid') {
      result.textContent = 'Paid. Thank you.';
      // The status poller (pay-status.js) turns the whole page to Paid.
      document.dispatchEvent(new Event('tollbook:check-status'));
      return;
    }
    if (outcome.kind === 'unknown') {
      result.textContent = UNKNOWN;
      document.dispatchEvent(new Event('tollbook:check-status'));
    } else {
      result.textContent = outcome.detail || 'The payment did not go through.';
    }
    button.disabled = false;
  });
})();
