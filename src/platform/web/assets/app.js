// The owner's web app's one script of its own (served as a file, so the CSP needs no inline
// script). Everything works without it; it adds copy buttons, local times and wallet signing.
(() => {
  function localTimes(root) {
    for (const node of root.querySelectorAll('time[data-local]')) {
      const at = new Date(node.getAttribute('datetime'));
      if (Number.isNaN(at.getTime())) continue;
      const withTime = node.getAttribute('data-local') !== 'date';
      node.textContent = withTime
        ? at.toLocaleString(undefined, { dateStyle: 'medium', timeStyle: 'short' })
        : at.toLocaleDateString(undefined, { dateStyle: 'medium' });
      node.removeAttribute('data-local');
    }
  }

  async function copy(button) {
    const target = document.getElementById(button.getAttribute('data-copy'));
    if (!target) return;
    const text = target.value ?? target.textContent;
    try {
      await navigator.clipboard.writeText(text);
      button.textContent = 'Copied';
    } catch {
      // Without clipboard access (an http page), select the text so the person can copy it.
      const range = document.createRange();
      range.selectNodeContents(target);
      const selection = window.getSelection();
      selection.removeAllRanges();
      selection.addRange(range);
      button.textContent = 'Selected: press Ctrl+C';
    }
  }

  // Proving an address: an injected EIP-1193 wallet signs the challenge with personal_sign.
  async function walletSign(button) {
    const form = button.closest('form');
    const status = form.querySelector('[data-wallet-status]');
    const provider = window.ethereum;
    if (!provider) {
      status.textContent = 'No browser wallet found: sign the challenge elsewhere and paste the signature.';
      return;
    }
    try {
      const challenge = form.querySelector('[data-challenge]').textContent;
      const address = button.getAttribute('data-address');
      await provider.request({ method: 'eth_requestAccounts' });
      const hex = `0x${Array.from(new TextEncoder().encode(challenge), (b) => b.toString(16).padStart(2, '0')).join('')}`;
      const signature = await provider.request({ method: 'personal_sign', params: [hex, address] });
      form.querySelector('[name="signature"]').value = signature;
      status.textContent = 'Signed by the wallet. Sending…';
      form.requestSubmit();
    } catch (error) {
      status.textContent = `The wallet did not sign: ${error && error.message ? error.message : error}`;
    }
  }

  function prepare(root) {
    localTimes(root);
    for (const button of root.querySelectorAll('[data-copy]')) button.hidden = false;
    for (const button of root.querySelectorAll('[data-wallet-sign]')) {
      button.hidden = !window.ethereum;
    }
  }

  document.addEventListener('click', (event) => {
    const target = event.target instanceof Element ? event.target : null;
    const copyButton = target?.closest('[data-copy]');
    if (copyButton) {
      event.preventDefault();
      void copy(copyButton);
      return;
    }
    const signButton = target?.closest('[data-wallet-sign]');
    if (signButton) {
      event.preventDefault();
      void walletSign(signButton);
    }
  });
  // A select that switches the book navigates at once; the form's button serves without script.
  document.addEventListener('change', (event) => {
    const target = event.target;
    if (target instanceof HTMLSelectElement && target.hasAttribute('data-autosubmit'))
      target.form.requestSubmit();
  });
  document.addEventListener('DOMContentLoaded', () => prepare(document));
  document.addEventListener('htmx:load', (event) => prepare(event.target));
})();
