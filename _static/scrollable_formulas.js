// A display formula wider than its column scrolls sideways (course.css); one that
// scrolls is made a Tab stop, so that a keyboard can scroll it too (WCAG 2.1.1).
// Other formulas stay out of the Tab order (mathjax3_config in _config.yml).
(function () {
  function mark() {
    document.querySelectorAll('mjx-container[display="true"]').forEach(function (formula) {
      if (formula.scrollWidth > formula.clientWidth + 1) {
        formula.setAttribute('tabindex', '0');
      } else if (formula.getAttribute('tabindex') === '0') {
        formula.setAttribute('tabindex', '-1');
      }
    });
  }
  function whenTypeset(tries) {
    var startup = window.MathJax && window.MathJax.startup;
    if (startup && startup.promise) startup.promise.then(mark);
    else if (tries > 0) setTimeout(function () { whenTypeset(tries - 1); }, 200);
  }
  window.addEventListener('load', function () { whenTypeset(50); });
  window.addEventListener('resize', function () { clearTimeout(mark.timer); mark.timer = setTimeout(mark, 200); });
})();
