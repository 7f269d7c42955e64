// Render the equations that pymdownx.arithmatex marked (\( \) inline, \[ \] display) with
// the vendored KaTeX; Material's instant navigation is off, so DOMContentLoaded suffices.
document.addEventListener("DOMContentLoaded", function () {
  document.querySelectorAll(".arithmatex").forEach(function (el) {
    renderMathInElement(el, {
      delimiters: [
        { left: "\\(", right: "\\)", display: false },
        { left: "\\[", right: "\\]", display: true },
      ],
      throwOnError: false,
    });
  });
});
