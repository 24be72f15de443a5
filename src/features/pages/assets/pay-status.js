// The pay page's status: asked every few seconds (and at once when a rail on the page reports a
// payment), so the page turns to Paid without a reload, whichever rail settled it.
(() => {
  const head = document.getElementById('pay-head');
  if (!head) return;
  const url = head.dataset.statusUrl;
  const badge = document.getElementById('status');
  const received = document.getElementById('received');
  const note = document.getElementById('paid-note');
  const LABELS = { active: 'Awaiting payment', paid: 'Paid', expired: 'Expired', cancelled: 'Cancelled' };
  const INTERVAL_MS = 2000;
  let timer = null;
  let done = false;

  function show(body) {
    if (body.status !== badge.dataset.status) {
      badge.dataset.status = body.status;
      badge.className = 'status ' + body.status;
      badge.textContent = LABELS[body.status] || body.status;
    }
    // A part paid shows how much arrived; once settled the badge says it all.
    const partial = body.status === 'active' && !/^0(\.0*)?$/.test(body.amount_received);
    received.textContent = partial ? 'Received so far: ' + body.received_label : '';
    received.hidden = !partial;
    if (body.status === 'active') return;
    // Settled, lapsed or cancelled: the ways to pay are gone and polling stops.
    done = true;
    for (const rail of document.querySelectorAll('.rail')) rail.hidden = true;
    note.textContent = body.status === 'paid' ? 'Paid. Thank you.' : 'This request takes no more payments.';
    note.hidden = false;
  }

  async function check() {
    clearTimeout(timer);
    if (done) return;
    try {
      const res = await fetch(url, { headers: { accept: 'application/json' }, cache: 'no-store' });
      if (res.ok) show(await res.json());
    } catch {
      // Offline for a moment: the next round asks again.
    }
    if (!done && document.visibilityState !== 'hidden') timer = setTimeout(check, INTERVAL_MS);
  }

  document.addEventListener('tollbook:check-status', check);
  document.addEventListener('visibilitychange', () => {
    if (document.visibilityState === 'visible') check();
  });
  timer = setTimeout(check, INTERVAL_MS);
})();
