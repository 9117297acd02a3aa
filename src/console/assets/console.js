// The console's one script (issue 13): copy buttons. Everything else works without JavaScript.
document.addEventListener('click', (event) => {
  const button = event.target instanceof Element ? event.target.closest('[data-copy]') : null;
  if (!button) return;
  const source = document.getElementById(button.getAttribute('data-copy'));
  if (!source) return;
  navigator.clipboard.writeText(source.textContent.trim()).then(
    () => { button.textContent = 'Copied'; },
    () => { button.textContent = 'Select the key and copy it'; },
  );
});
