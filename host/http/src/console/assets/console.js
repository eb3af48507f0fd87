// Copy buttons: <button data-copy="element-id">. Nothing else runs here.
document.addEventListener("click", function (e) {
  var b = e.target.closest("button[data-copy]");
  if (!b) return;
  var el = document.getElementById(b.getAttribute("data-copy"));
  if (!el) return;
  navigator.clipboard.writeText(el.textContent.trim()).then(function () {
    b.textContent = "Copied";
  }, function () {
    b.textContent = "Select and copy by hand";
  });
});
