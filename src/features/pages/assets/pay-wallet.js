// "Pay with wallet": finds the browser's wallets (EIP-6963 announcements, else the older
// window.ethereum), moves the chosen one to the request's chain and asks it to send the exact
// token transfer the server prepared (data-* on #wallet-pay). Nothing here computes an amount.
(() => {
  const block = document.getElementById('wallet-pay');
  if (!block) return;
  const want = block.dataset;
  const choices = document.getElementById('wallet-choices');
  const none = document.getElementById('wallet-none');
  const result = document.getElementById('wallet-result');
  const found = new Map();
  let busy = false;

  const say = (text) => {
    result.textContent = text;
  };
  const setDisabled = (disabled) => {
    for (const button of choices.querySelectorAll('button')) button.disabled = disabled;
  };

  function addWallet(key, name, icon, provider) {
    if (found.has(key) || !provider || typeof provider.request !== 'function') return;
    found.set(key, provider);
    none.hidden = true;
    const button = document.createElement('button');
    button.type = 'button';
    if (typeof icon === 'string' && icon.startsWith('data:image/')) {
      const image = document.createElement('img');
      image.src = icon;
      image.alt = '';
      // A wallet's broken icon is dropped rather than shown as a broken image.
      image.addEventListener('error', () => image.remove());
      button.append(image);
    }
    button.append(document.createTextNode('Pay with ' + name));
    button.addEventListener('click', () => pay(provider));
    choices.append(button);
  }

  function sameChain(a, b) {
    try {
      return BigInt(a) === BigInt(b);
    } catch {
      return false;
    }
  }

  function unknownChain(error) {
    const code = error && (error.code ?? error.data?.originalError?.code);
    return code === 4902;
  }

  async function switchChain(provider) {
    if (sameChain(await provider.request({ method: 'eth_chainId' }), want.chainId)) return;
    const target = [{ chainId: want.chainId }];
    try {
      await provider.request({ method: 'wallet_switchEthereumChain', params: target });
    } catch (error) {
      // Only the development chain is added from here; wallets know the public networks.
      if (!unknownChain(error) || !want.rpcUrl) throw error;
      await provider.request({
        method: 'wallet_addEthereumChain',
        params: [
          {
            chainId: want.chainId,
            chainName: 'Tollbook development chain',
            rpcUrls: [want.rpcUrl],
            nativeCurrency: { name: 'Ether', symbol: 'ETH', decimals: 18 },
          },
        ],
      });
      await provider.request({ method: 'wallet_switchEthereumChain', params: target });
    }
    if (!sameChain(await provider.request({ method: 'eth_chainId' }), want.chainId))
      throw new Error('The wallet is on another network: switch it to ' + want.chainName + ' and try again.');
  }

  function problem(error) {
    if (error && error.code === 4001) return 'You declined in the wallet; nothing was sent.';
    const message = error && (error.shortMessage || error.message);
    return message ? 'The wallet refused: ' + message : 'The wallet did not send the payment.';
  }

  async function pay(provider) {
    // One transfer per page: a second click while the first is open would pay twice.
    if (busy) return;
    busy = true;
    setDisabled(true);
    try {
      say('Asking your wallet for an account…');
      const accounts = await provider.request({ method: 'eth_requestAccounts' });
      const from = Array.isArray(accounts) ? accounts[0] : undefined;
      if (!from) throw new Error('it shared no account');
      await switchChain(provider);
      say('Confirm the transfer of ' + want.amountLabel + ' in your wallet…');
      const hash = await provider.request({
        method: 'eth_sendTransaction',
        params: [{ from, to: want.token, data: want.data, value: '0x0' }],
      });
      say('Sent (transaction ' + hash + '). This page turns to Paid once the network confirms it.');
      document.dispatchEvent(new Event('tollbook:check-status'));
    } catch (error) {
      say(problem(error));
      busy = false;
      setDisabled(false);
    }
  }

  window.addEventListener('eip6963:announceProvider', (event) => {
    const detail = event.detail;
    if (!detail?.info) return;
    addWallet(
      detail.info.uuid || detail.info.rdns,
      detail.info.name || 'wallet',
      detail.info.icon,
      detail.provider,
    );
  });
  window.dispatchEvent(new Event('eip6963:requestProvider'));
  // Wallets older than EIP-6963 only set window.ethereum; give announcements a moment first.
  setTimeout(() => {
    if (found.size === 0 && window.ethereum) addWallet('injected', 'wallet', null, window.ethereum);
    if (found.size === 0) none.hidden = false;
  }, 300);
})();
