// sphinx-copybutton shows "Copy" only as a tooltip drawn from a data attribute,
// so a screen reader lists every copy button of a page without a name. Each is
// named after the code it copies: its place on the page and its section.
(function () {
  function clean(text) {
    return text.replace(/\s+/g, ' ').replace(/#$/, '').trim().replace(/^[\d.]+\s+/, '');
  }
  function name() {
    document.querySelectorAll('button.copybtn').forEach(function (button, index) {
      var section = button.closest('section');
      var heading = section && section.querySelector('h1, h2, h3, h4');
      var where = heading ? clean(heading.textContent) : '';
      button.setAttribute('aria-label', 'Copy code block ' + (index + 1) + (where ? ' (' + where + ')' : ''));
    });
  }
  // copybutton adds its buttons once the document is parsed; this runs after it.
  window.addEventListener('load', name);
})();
