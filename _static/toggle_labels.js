// sphinx-togglebutton gives every folded block's button the same accessible name,
// "Toggle hidden content"; a screen reader listing the buttons of a page (a
// verdict for each claim of Misconceptions) could not tell them apart. Each button
// is named after its title and what it answers: the exercise just before a
// solution, or else the heading of its section.
(function () {
  function clean(text) {
    return text.replace(/\s+/g, ' ').replace(/#$/, '').trim();
  }
  function context(block) {
    var before = block.previousElementSibling;
    var asked = before && before.classList.contains('admonition') && before.querySelector('.admonition-title');
    if (asked && /^(Exercise|Going further)/.test(clean(asked.textContent))) return clean(asked.textContent);
    var section = block.closest('section');
    var heading = section && section.querySelector('h1, h2, h3, h4');
    return heading ? clean(heading.textContent).replace(/^[\d.]+\s+/, '') : '';
  }
  function name() {
    document.querySelectorAll('.admonition-title > button.toggle-button').forEach(function (button) {
      var title = clean(button.parentElement.textContent);
      var about = context(button.closest('.admonition'));
      button.setAttribute('aria-label', 'Show or hide: ' + title + (about ? ' (' + about + ')' : ''));
    });
  }
  // togglebutton adds its buttons once the document is parsed; this runs after it.
  window.addEventListener('load', name);
})();
