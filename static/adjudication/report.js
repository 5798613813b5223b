// Report pages: a change of a selector marked .autosubmit reloads the report with it.
document.addEventListener("change", (event) => {
  const el = event.target;
  if (el instanceof HTMLSelectElement && el.classList.contains("autosubmit") && el.form) {
    el.form.requestSubmit();
  }
});
