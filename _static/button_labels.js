// Buttons that the page's extensions add without a name a screen reader can
// tell apart (WCAG 2.4.6, 4.1.2):
// - sphinx-togglebutton names every folded block's button "Toggle hidden
//   content"; a screen reader listing the buttons of a page (a verdict for each
//   claim of Misconceptions) could not tell them apart. Each is named after its
//   title and what it answers: the exercise just before a solution, or else the
//   heading of its section.
// - sphinx-copybutton shows "Copy" only as a tooltip drawn from a data
//   attribute, so its buttons have no name at all. Each is named after the code
//   it copies: its place on the page and its section.
(function () {
  function clean(text) {
    return text.replace(/\s+/g, ' ').replace(/#$/, '').trim();
  }
  function sectionHeading(element) {
    var section = element.closest('section');
    var heading = section && section.querySelector('h1, h2, h3, h4');
    return heading ? clean(heading.textContent).replace(/^[\d.]+\s+/, '') : '';
  }
  function context(block) {
    var before = block.previousElementSibling;
    var asked = before && before.classList.contains('admonition') && before.querySelector('.admonition-title');
    if (asked && /^(Exercise|Going further)/.test(clean(asked.textContent))) return clean(asked.textContent);
    return sectionHeading(block);
  }
  function name() {
    document.querySelectorAll('.admonition-title > button.toggle-button').forEach(function (button) {
      var title = clean(button.parentElement.textContent);
      var about = context(button.closest('.admonition'));
      button.setAttribute('aria-label', 'Show or hide: ' + title + (about ? ' (' + about + ')' : ''));
    });
    document.querySelectorAll('button.copybtn').forEach(function (button, index) {
      var where = sectionHeading(button);
      button.setAttribute('aria-label', 'Copy code block ' + (index + 1) + (where ? ' (' + where + ')' : ''));
    });
  }
  // Both extensions add their buttons once the document is parsed; this runs after them.
  window.addEventListener('load', name);
})();
