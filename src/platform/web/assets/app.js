// The owner's web app's one script of its own (served as a file, so the CSP needs no inline
// script). Everything works without it; it adds copy buttons and wallet signing.
(() => {
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

  // Paying a chain payment: the injected EIP-1193 wallet switches to the payment's chain and
  // sends the unsigned ERC-20 transfer the page shows; the hash is then reported (the account
  // watch would find the transfer by itself, this only saves the wait).
  async function waitForReceipt(provider, hash) {
    for (let attempt = 0; attempt < 60; attempt += 1) {
      const receipt = await provider.request({ method: 'eth_getTransactionReceipt', params: [hash] });
      if (receipt) return receipt;
      await new Promise((resolve) => setTimeout(resolve, 1500));
    }
    return null;
  }

  async function walletSend(button) {
    const form = button.closest('form');
    const status = form.querySelector('[data-wallet-status]');
    const provider = window.ethereum;
    if (!provider) {
      status.textContent = 'No browser wallet found: send the transfer elsewhere and paste its hash.';
      return;
    }
    button.disabled = true;
    try {
      const from = button.getAttribute('data-from');
      const wanted = `0x${Number(button.getAttribute('data-chain-id')).toString(16)}`;
      await provider.request({ method: 'eth_requestAccounts' });
      const current = await provider.request({ method: 'eth_chainId' });
      if (String(current).toLowerCase() !== wanted) {
        status.textContent = 'Switching the wallet to the payment’s network…';
        await provider.request({ method: 'wallet_switchEthereumChain', params: [{ chainId: wanted }] });
      }
      status.textContent = 'Confirm the transfer in your wallet…';
      const transaction = {
        from,
        to: button.getAttribute('data-to'),
        data: button.getAttribute('data-data'),
        value: '0x0',
      };
      const hash = await provider.request({ method: 'eth_sendTransaction', params: [transaction] });
      form.querySelector('[name="tx_hash"]').value = hash;
      status.textContent = 'Sent. Waiting for the network to include it…';
      await waitForReceipt(provider, hash);
      status.textContent = 'Included. Reporting it…';
      form.requestSubmit();
    } catch (error) {
      status.textContent = `The wallet did not send: ${error?.message ?? error}`;
      button.disabled = false;
    }
  }

  // A new book starts in the creating browser's time zone (Book settings changes it later).
  function browserTimeZones(root) {
    const zone = Intl.DateTimeFormat().resolvedOptions().timeZone;
    if (!zone) return;
    for (const input of root.querySelectorAll('input[data-browser-time-zone]')) input.value = zone;
  }

  function prepare(root) {
    browserTimeZones(root);
    for (const button of root.querySelectorAll('[data-copy]')) button.hidden = false;
    for (const button of root.querySelectorAll('[data-wallet-sign], [data-wallet-send]')) {
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
      return;
    }
    const sendButton = target?.closest('[data-wallet-send]');
    if (sendButton) {
      event.preventDefault();
      void walletSend(sendButton);
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
