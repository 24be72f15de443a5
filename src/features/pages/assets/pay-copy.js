// The pay page's Copy buttons: each copies its data-copy text and says so for a moment.
(() => {
  for (const button of document.querySelectorAll('button.copy[data-copy]')) {
    button.addEventListener('click', async () => {
      const label = button.textContent;
      try {
        await navigator.clipboard.writeText(button.dataset.copy ?? '');
        button.textContent = 'Copied';
      } catch {
        button.textContent = 'Select and copy';
      }
      setTimeout(() => {
        button.textContent = label;
      }, 1500);
    });
  }
})();
