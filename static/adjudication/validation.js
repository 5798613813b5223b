// Validation wizard: the override reason appears only while "run it anyway" is ticked.
document.addEventListener("change", (event) => {
  const box = event.target;
  if (!(box instanceof HTMLInputElement) || box.id !== "run_anyway") return;
  const reason = document.getElementById("override-reason");
  if (reason) reason.classList.toggle("hidden", !box.checked);
});
