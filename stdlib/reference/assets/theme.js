// Applies the theme chosen with the toggle before the first paint (a classic script in <head>,
// so the page never flashes the other theme). Without a choice the OS preference applies via CSS.
(() => {
  try {
    const theme = localStorage.getItem('rvm-reference-theme');
    if (theme === 'dark' || theme === 'light') document.documentElement.setAttribute('data-theme', theme);
  } catch {
    // Storage can be disabled; the OS preference still applies.
  }
})();
