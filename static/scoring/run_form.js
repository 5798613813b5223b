// Shows only the chosen metric's parameters on the start-a-run form (all are shown without JS;
// the server reads only the chosen metric's fields).
(() => {
  const select = document.getElementById("metric");
  if (!select) return;
  const sets = document.querySelectorAll("fieldset.metric-params");
  const sync = () => {
    sets.forEach((set) => {
      const active = set.dataset.metric === select.value;
      set.classList.toggle("hidden", !active);
      set.disabled = !active;
    });
  };
  select.addEventListener("change", sync);
  sync();
})();
